"""The service's HTTP/1.1 protocol: uvicorn's httptools protocol with a bound on a request's head.

Policy: httptools (llhttp) puts no limit on the request line or the header section, and it
and uvicorn join their pieces by concatenation, so one client sending megabytes of headers
costs memory and quadratic CPU. The bound here is what a proxy in front would enforce: a
request whose head (request line and header fields) passes :data:`MAX_HEAD_BYTES` before its
blank line is answered ``431 Request Header Fields Too Large`` (RFC 6585 section 5) and the
connection is closed. Bytes are counted as they arrive, from the start of a request until its
header section is complete; a body is never counted. asyncio hands over at most 256 KiB per
read, so what is parsed before the bound is seen is at most that much past it.
"""

from __future__ import annotations

from typing import Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: Bytes a request's head may take (nginx's default allows 4 buffers of 8 kB per line; h11's 16 kB).
MAX_HEAD_BYTES: Final = 64 * 1024
_BODY: Final = b"request header fields too large\n"
_TOO_LARGE: Final = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\n"
    b"content-length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY
)


class BoundedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol refusing a request head larger than :data:`MAX_HEAD_BYTES`."""

    _in_head = True  # (a connection starts with a request's head)
    _head_bytes = 0

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            self._head_bytes += len(data)
        super().data_received(data)
        if self._in_head and self._head_bytes > MAX_HEAD_BYTES and not self.transport.is_closing():
            self.transport.write(_TOO_LARGE)
            self.transport.close()

    def on_headers_complete(self) -> None:
        self._in_head, self._head_bytes = False, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._in_head, self._head_bytes = True, 0
