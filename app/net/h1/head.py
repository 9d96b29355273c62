"""Message heads: the request head we write, and the response head before llhttp reads it.

Policy (RFC 9112):
- A request head is the request line, ``Host`` first (section 3.2), then the fields given, then
  ``Content-Length`` when there is a body, or ``Content-Length: 0`` for a body-less ``POST``,
  ``PUT`` or ``PATCH`` (RFC 9110 section 8.6: a user agent should send it when the method
  defines a meaning for content). A name or value holding CR, LF or NUL is refused
  (:class:`httpx2.LocalProtocolError`): a field is never split into two (section 5); so is
  one holding a character beyond Latin-1 (a field value is octets, RFC 9110 section 5.5).
- A response head ends at its first empty line; bare LF line ends are read as CRLF (section
  2.2 lets a recipient do so) and empty lines before the status line are skipped (section
  2.2). A head longer than :data:`HEAD_LIMIT` is refused.
- ``Content-Length`` repeated with one value is read as that length (section 6.3, rule 5:
  a recipient may treat identical repeated values as one); llhttp refuses any repeat, so the
  repeats are dropped before the head is parsed. Different values are left for llhttp to
  refuse (an unrecoverable framing error, ``invalid_http``).
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx2

#: The most bytes a response head may take (status line and fields).
HEAD_LIMIT = 64 * 1024
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
_FORBIDDEN = frozenset("\r\n\0")


def request_head(method: str, target: bytes, host: bytes, fields: Mapping[str, str], body: bytes | None) -> bytes:
    """The request head (ending in its empty line) for ``method`` on ``target`` at ``host``.

    Raises:
        httpx2.LocalProtocolError: a field name or value holds CR, LF or NUL.
    """
    lines = [method.encode("ascii"), b" ", target, b" HTTP/1.1\r\nHost: ", host, b"\r\n"]
    for name, value in fields.items():
        if not _FORBIDDEN.isdisjoint(name) or not _FORBIDDEN.isdisjoint(value) or not name:
            raise httpx2.LocalProtocolError("a request field holds a line break or NUL")
        try:
            lines += [name.encode("latin-1"), b": ", value.encode("latin-1"), b"\r\n"]
        except UnicodeEncodeError:  # (a value a server chose, such as an event id: octets only, section 5.5)
            raise httpx2.LocalProtocolError("a request field holds a character that is no octet") from None
    if body is not None:
        lines += [b"Content-Length: ", str(len(body)).encode("ascii"), b"\r\n"]
    elif method in _BODY_METHODS:
        lines.append(b"Content-Length: 0\r\n")
    lines.append(b"\r\n")
    return b"".join(lines)


def head_end(buffer: bytes | bytearray, start: int) -> int:
    """The index just past the empty line ending the head in ``buffer`` (searched from ``start``), or -1."""
    crlf = buffer.find(b"\n\r\n", start)
    lf = buffer.find(b"\n\n", start)
    if crlf < 0:
        return lf + 2 if lf >= 0 else -1
    if lf < 0 or crlf < lf:
        return crlf + 3
    return lf + 2


def normalised(head: bytes) -> bytes:
    """``head`` with repeats of one ``Content-Length`` value dropped (see the module docs)."""
    if head.lower().count(b"content-length") < 2:
        return head
    lines = head.split(b"\n")
    kept: list[bytes] = []
    length: bytes | None = None
    for line in lines:
        name, colon, value = line.partition(b":")
        if colon and name.lower() == b"content-length":
            value = value.strip(b" \t\r")
            if length is not None and value == length:
                continue  # the same length again: said once
            length = length if length is not None else value
        kept.append(line)
    return b"\n".join(kept)
