"""A raw HTTP/1.1 server on loopback whose replies are scripted byte by byte.

Each route is a function that gets the parsed :class:`Request` and the client socket and
writes whatever bytes it likes: odd framings, wrong headers, hostile behaviour. It runs in
threads, so a handler may sleep or never answer without blocking other tests.

With ``kernel_times`` (plain TCP only), each request also says when the kernel received its
first bytes (``SO_TIMESTAMPNS``, socket(7)): what the host saw, apart from how late the
server's own threads got to it on a loaded machine.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import ssl
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

MAX_HEADER_BYTES = 64 * 1024


@dataclass
class Request:
    """One request as the server read it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float | None = None  # (kernel_times: time.monotonic() of the first bytes' arrival)

    @property
    def message(self) -> dict[str, Any]:
        """The JSON-RPC message in the body (``{}`` when there is none)."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}


Handler = Callable[[Request, socket.socket], bool | None]
"""Writes the reply; returns ``True`` to close the connection afterwards."""


@dataclass
class RawServer:
    """Routes by path; records every request it read (for assertions)."""

    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[Request] = field(default_factory=list)
    connections: int = 0
    port: int = 0
    ssl_context: ssl.SSLContext | None = None
    server_names: list[str | None] = field(default_factory=list)
    kernel_times: bool = False
    _clock_offset: float = field(default_factory=lambda: time.time() - time.monotonic())
    _server: socketserver.ThreadingTCPServer | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def route(self, path: str) -> Callable[[Handler], Handler]:
        """Decorator registering a handler for ``path`` (query string ignored)."""

        def register(handler: Handler) -> Handler:
            self.routes[path] = handler
            return handler

        return register

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        """``http(s)://<host>:<port><path>`` (https when the server speaks TLS)."""
        scheme = "https" if self.ssl_context is not None else "http"
        return f"{scheme}://{host}:{self.port}{path}"

    def requests_to(self, path: str) -> list[Request]:
        """Requests received for ``path``."""
        with self._lock:
            return [r for r in self.seen if r.path.split("?", 1)[0] == path]

    def start(self) -> None:
        """Listen on a free loopback port."""
        outer = self

        class _Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                outer._serve_connection(self.request)

        class _Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True
            block_on_close = False

        self._server = _Server(("127.0.0.1", 0), _Handler, bind_and_activate=False)
        if self.kernel_times and self.ssl_context is None:  # (accepted sockets inherit it)
            self._server.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self._server.server_bind()
        self._server.server_activate()
        self.port = int(self._server.server_address[1])
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _serve_connection(self, conn: socket.socket) -> None:
        with self._lock:
            self.connections += 1
        conn.settimeout(30)
        buffer = b""
        try:
            if self.ssl_context is not None:
                conn = self._wrap_tls(conn)
            stamped = self.kernel_times and self.ssl_context is None
            read = _stamped_reader(conn, self._clock_offset) if stamped else None
            while True:
                request, buffer = _read_request(conn, buffer, read)
                if request is None:
                    return
                with self._lock:
                    self.seen.append(request)
                handler = self.routes.get(request.path.split("?", 1)[0], not_found)
                if handler(request, conn):
                    return
        except (OSError, ValueError):
            return
        finally:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def _wrap_tls(self, conn: socket.socket) -> socket.socket:
        assert self.ssl_context is not None

        def record(sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, context: ssl.SSLContext) -> None:
            with self._lock:
                self.server_names.append(name)

        self.ssl_context.sni_callback = record
        return self.ssl_context.wrap_socket(conn, server_side=True)


_STAMP = struct.Struct("@qq")  # struct timespec
#: ``SO_TIMESTAMPNS`` (also the control message's type, ``SCM_TIMESTAMPNS``) on Linux: asm-generic/socket.h.
SO_TIMESTAMPNS = 35


def _stamped_reader(conn: socket.socket, offset: float) -> Callable[[], tuple[bytes, float | None]]:
    """``recv`` with the kernel's receive time of the bytes read, as ``time.monotonic()`` (the
    wall clock's ``offset`` from it taken once, so every connection's times compare)."""

    def read() -> tuple[bytes, float | None]:
        data, ancillary, _flags, _address = conn.recvmsg(65536, socket.CMSG_SPACE(_STAMP.size))
        for level, kind, value in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= _STAMP.size:
                seconds, nanoseconds = _STAMP.unpack_from(value)
                return data, seconds + nanoseconds / 1e9 - offset
        return data, None

    return read


def _read_request(
    conn: socket.socket, buffer: bytes, read: Callable[[], tuple[bytes, float | None]] | None = None
) -> tuple[Request | None, bytes]:
    received_at: float | None = None
    while b"\r\n\r\n" not in buffer:
        if read is not None:
            chunk, stamp = read()
            if received_at is None and not buffer:  # (the request's first bytes)
                received_at = stamp
        else:
            chunk = conn.recv(65536)
        if not chunk or len(buffer) > MAX_HEADER_BYTES:
            return None, b""
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        rest += chunk
    return Request(method, path, headers, rest[:length], received_at), rest[length:]


def response_bytes(
    status: int,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    reason: str = "X",
    repeated: list[tuple[str, str]] | None = None,
) -> bytes:
    """Serialise a complete HTTP/1.1 response with a Content-Length (unless ``headers`` or
    ``repeated`` give one); ``repeated`` field lines follow the others as they are, so one name
    may come on several lines."""
    lines = [f"HTTP/1.1 {status} {reason}"]
    merged = {k.lower(): v for k, v in (headers or {}).items()}
    if not any(name.lower() == "content-length" for name, _ in repeated or []):
        merged = {"content-length": str(len(body))} | merged
    lines += [f"{name}: {value}" for name, value in merged.items()]
    lines += [f"{name}: {value}" for name, value in repeated or []]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def send(
    conn: socket.socket,
    status: int,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    repeated: list[tuple[str, str]] | None = None,
) -> None:
    """Write a complete response (``repeated``: field lines as they are, see :func:`response_bytes`)."""
    conn.sendall(response_bytes(status, headers, body, repeated=repeated))


def send_json(
    conn: socket.socket,
    status: int,
    payload: object,
    headers: dict[str, str] | None = None,
    repeated: list[tuple[str, str]] | None = None,
) -> None:
    """Write a JSON response (a ``Content-Type`` in ``repeated`` replaces the default one)."""
    if not any(name.lower() == "content-type" for name, _ in repeated or []):
        headers = {"content-type": "application/json"} | (headers or {})
    send(conn, status, headers, json.dumps(payload).encode(), repeated)


def not_found(request: Request, conn: socket.socket) -> bool:
    """The default route: a 404 HTML page."""
    send(conn, 404, {"content-type": "text/html"}, b"<html><body>Not Found</body></html>")
    return False


def challenging(metadata_url: str) -> Handler:
    """A route answering every request with 401 and a Bearer challenge naming ``metadata_url`` as
    its protected resource metadata (RFC 9728 section 5.1)."""

    def protected(_request: Request, conn: socket.socket) -> None:
        challenge = f'Bearer resource_metadata="{metadata_url}"'
        send(conn, 401, {"www-authenticate": challenge, "content-type": "application/json"}, b"{}")

    return protected
