"""One HTTP/1.1 client connection: an asyncio protocol whose responses llhttp (httptools) parses.

Policy (RFC 9112):
- One request at a time (section 9.3: no pipelining). Bytes that arrive while no request is
  in flight, or after the response ended, make the connection unusable for another request.
- The response head is bounded and tidied first (:mod:`app.net.h1.head`); interim 1xx
  responses (RFC 9110 section 15.2) are skipped, at most :data:`MAX_INTERIM` of them; ``101``
  ends the exchange (the connection is not reused). What follows the response in the same
  bytes is never read as part of it.
- A body framed by neither ``Content-Length`` nor chunked coding ends when the connection
  does (section 6.3, rule 8). A body framed otherwise that the connection cuts short is a
  framing fault (``RemoteProtocolError`` after the head: the caller reads what arrived).
- Reading from the socket pauses while more than :data:`HIGH_WATER` bytes wait unread and
  resumes once the caller took them: a body the caller stops reading never fills memory.
- A connection is reused only when its response was read to its end, the server allowed it
  (``should_keep_alive``: HTTP/1.1 without ``Connection: close``), and nothing else arrived.

Failures raise httpx2's exception classes, the vocabulary the probe's classification speaks
(:func:`app.probe.classify.classify_exception`): the end of the connection before a head,
``RemoteProtocolError`` ("disconnected"); a reset, ``ReadError`` (the ``OSError`` as its
cause); bytes that are not HTTP, ``RemoteProtocolError``; no bytes in time, ``ReadTimeout``.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import Callable
from typing import Any

import httptools
import httpx2

from app.net.h1.head import HEAD_LIMIT, head_end, normalised

#: Unread body bytes above which reading from the socket pauses (until the caller reads them).
HIGH_WATER = 256 * 1024
#: Interim (1xx) responses read before a final one at most; a server sending more is refused.
MAX_INTERIM = 16
_CLOSED = "Server disconnected without sending a response."


class Connection(asyncio.Protocol):
    """One connection (see the module docs); made by :func:`app.net.dial.open_connection`.

    Attributes:
        idle_since: ``time.monotonic()`` when the last response on it ended.
        received: whether any byte ever arrived on it.
        on_drop: called once when the server ends or resets the connection before any byte arrived
            (a connection dialled ahead that the server dropped while it waited, :mod:`app.net.warm`).
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._transport: asyncio.Transport | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._head = bytearray()
        self._in_head = False
        self._fields: list[tuple[bytes, bytes]] = []
        self._status = 0
        self._framed = False
        self._interim = 0
        self._headers_done = False
        self._message_done = False
        self._reusable = True
        self._body: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._paused = False
        self._error: Exception | None = None
        self._lost = False
        self._busy = False
        self.idle_since = time.monotonic()
        self.received = False
        self.on_drop: Callable[[], None] | None = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        self.received = True
        if not self._busy or self._message_done or self._error is not None:
            self._reusable = False  # bytes nobody asked for
            return
        if self._in_head:
            self._scan_head(data)
        else:
            self._feed(data)

    def eof_received(self) -> bool | None:
        self._end(None)
        return None  # (the transport closes itself)

    def connection_lost(self, exc: Exception | None) -> None:
        self._end(exc)

    # llhttp callbacks (llhttp goes on to parse what follows a message in the same bytes: a
    # second message is never ours, and only makes the connection unusable)

    def on_message_begin(self) -> None:
        if self._message_done:
            self._reusable = False

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self._message_done:
            self._fields.append((name, value))

    def on_headers_complete(self) -> None:
        assert self._parser is not None
        if self._message_done:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            self._fields = []  # an interim response: the final one follows
            return
        self._status, self._headers_done = status, True
        self._reusable = self._reusable and status != 101 and self._parser.should_keep_alive()
        self._framed = any(name.lower() in (b"content-length", b"transfer-encoding") for name, _ in self._fields)
        self._wake()

    def on_body(self, body: bytes) -> None:
        if self._message_done:
            return
        self._body.append(body)
        self._buffered += len(body)
        if self._buffered > HIGH_WATER and not self._paused and self._transport is not None:
            self._paused = True
            self._transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        if self._headers_done and not self._message_done:
            self._message_done = True
            self._wake()

    # the caller's side

    @property
    def usable(self) -> bool:
        """Whether another request may be sent on this connection now."""
        return not self._busy and not self._lost and self._reusable and self._error is None

    @property
    def ssl_object(self) -> ssl.SSLObject | None:
        """The TLS session, for an https connection."""
        if self._transport is None:
            return None
        found: Any = self._transport.get_extra_info("ssl_object")
        return found if isinstance(found, ssl.SSLObject) else None

    def send(self, data: bytes) -> None:
        """Write one request (head and body) and get ready for its response.

        Raises:
            httpx2.RemoteProtocolError: the server closed the connection already.
        """
        if self._lost or self._transport is None or self._transport.is_closing():
            raise self._error or httpx2.RemoteProtocolError(_CLOSED)
        self._busy, self._in_head = True, True
        self._headers_done = self._message_done = False
        self._fields, self._status, self._framed, self._interim = [], 0, False, 0
        self._parser = httptools.HttpResponseParser(self)
        self._parser.set_dangerous_leniencies(lenient_optional_cr_before_lf=True)
        self._transport.write(data)

    async def receive_head(self, timeout: float | None) -> tuple[int, list[tuple[bytes, bytes]]]:  # noqa: ASYNC109
        """The final response's status and fields, once its head arrived (``timeout``: between reads).

        Raises:
            httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.ReadTimeout: see the module docs.
        """
        while not self._headers_done:
            if self._error is not None:
                raise self._error
            await self._wait(timeout)
        return self._status, self._fields

    async def read(self, timeout: float | None) -> bytes:  # noqa: ASYNC109
        """The next body bytes (all that wait), or ``b""`` at the end of the body.

        Raises:
            httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.ReadTimeout: see the module docs.
        """
        while True:
            if self._body:
                chunk = self._body.popleft() if len(self._body) == 1 else b"".join(self._body)
                self._body.clear()
                self._buffered = 0
                if self._paused and self._transport is not None:
                    self._paused = False
                    self._transport.resume_reading()
                return chunk
            if self._message_done:
                return b""
            if self._error is not None:
                raise self._error
            await self._wait(timeout)

    def finished(self) -> bool:
        """The response is over: ``True`` when it was read to its end and the connection may be reused."""
        self._busy = False
        self.idle_since = time.monotonic()
        done = self._message_done and not self._body and self._reusable and self._error is None
        if not done:
            self.close()
        return done

    def close(self) -> None:
        """Close the connection at once: nothing more is read, nothing unsent is sent.

        Its socket is closed now, never left waiting on a peer: a TLS connection goes without
        waiting for the peer's ``close_notify`` (RFC 8446 section 6.1 lets the closing side),
        which a server that never sends one would hold until asyncio's shutdown timeout.
        """
        self._reusable, self.on_drop = False, None
        if self._transport is not None:
            self._transport.abort()

    # internals

    def _scan_head(self, data: bytes) -> None:
        while True:  # (a loop, not recursion: one packet may hold thousands of interim heads)
            if not self._head:
                data = data.lstrip(b"\r\n")
                if not data:
                    return
            start = max(0, len(self._head) - 2)
            self._head += data
            end = head_end(self._head, start)
            if end < 0 or end > HEAD_LIMIT:
                if len(self._head) > HEAD_LIMIT:
                    self._fail(httpx2.RemoteProtocolError("the response head is too large"))
                return
            head, data = bytes(self._head[:end]), bytes(self._head[end:])
            self._head.clear()
            self._in_head = False
            self._feed(normalised(head))
            if self._headers_done or self._error is not None:
                break
            self._interim += 1
            if self._interim > MAX_INTERIM:
                self._fail(httpx2.RemoteProtocolError(f"more than {MAX_INTERIM} interim responses"))
                return
            self._in_head = True  # an interim response ended: the next head follows
        if data and self._error is None:
            self._feed(data)

    def _feed(self, data: bytes) -> None:
        assert self._parser is not None
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._message_done, self._reusable = True, False  # (101: what follows is not HTTP)
            self._wake()
        except httptools.HttpParserError as exc:
            self._fail(httpx2.RemoteProtocolError(f"invalid HTTP response: {exc}"))

    def _end(self, exc: Exception | None) -> None:
        self._lost, self._reusable = True, False
        dropped, self.on_drop = self.on_drop, None  # (told once: the end may come as EOF, then as the loss)
        if dropped is not None and not self.received:
            dropped()
        if not self._busy or self._message_done or self._error is not None:
            return
        if isinstance(exc, OSError):
            error: Exception = httpx2.ReadError(str(exc) or type(exc).__name__)
            error.__cause__ = exc
            self._fail(error)
        elif not self._headers_done:
            self._fail(httpx2.RemoteProtocolError(_CLOSED))
        elif not self._framed and exc is None:
            self._message_done = True  # a body that ends with the connection (RFC 9112 section 6.3, rule 8)
            self._wake()
        else:
            self._fail(httpx2.RemoteProtocolError("peer closed connection without sending complete message body"))

    def _fail(self, error: Exception) -> None:
        self._error = error
        if not self._lost:
            self.close()
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, timeout: float | None) -> None:  # noqa: ASYNC109
        waiter = self._waiter = self._loop.create_future()
        timer = self._loop.call_later(timeout, _expire, waiter) if timeout is not None else None
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(httpx2.ReadTimeout("no bytes arrived in time"))
