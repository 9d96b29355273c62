"""One HTTP exchange of the probe: send a request, read a bounded reply, find our response.

Policy:
- Every exchange runs under its own deadline (headers and body together), so a body that
  trickles a byte a second or headers that never come end in a timeout, not a hang.
- The decoded body is capped (``cap`` bytes); past the cap the reply is marked ``truncated``.
- A ``text/event-stream`` reply is parsed as it arrives and the exchange stops at the JSON-RPC
  response whose ``id`` matches ours: the probe never waits for a stream to close.
  Notifications and server-to-client requests on the stream are counted and skipped.
- The ``Content-Type`` is trusted only when the first bytes agree with it (see
  :func:`app.probe.body.sniff`).
- One retry per probe, and only when the connection dropped before any response header
  arrived (MCP requests are safe to resend then: the server answered nothing). A connection
  dialled ahead (:mod:`app.net.warm`) that the server dropped while it waited costs no retry.
- HTTP framing faults after the response headers arrived (RFC 9112 section 6.3: a body that
  ends before its ``Content-Length`` or its last chunk, or stalls until the deadline) are the
  server's, not a failure to reach it: what arrived is read as far as it goes and the reply
  is marked ``body_incomplete``. When our JSON-RPC response is complete in what arrived, a
  tolerant client can use it, and so does the probe.
- After our response, an event stream is drained (unread) for at most :data:`TAIL_S`, so a
  server that ends the stream there leaves the connection open for the next request.
- Nothing the verdict does not need is waited for: once our response is complete (a JSON body
  that parses, or an SSE event whose lines are all in but whose blank line has not come), the
  rest of the body gets at most :data:`GRACE_S` more (read to its end, the connection can be
  reused; a server that stalls after it costs no more). A notification's reply body is never
  needed: it gets the same grace from the headers on.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx2

from app import jsonsafe
from app.net.fields import single_value
from app.net.h1.fields import Fields
from app.net.h1.response import Response
from app.net.pace import Pace
from app.net.transport import PinnedTransport, Written
from app.probe.body import BodyKind, CappedDecoder, UnsupportedEncoding, kind_from_header, sniff
from app.probe.jsonrpc import JsonObject, error_of, id_type_changed, matches
from app.probe.sse import SseEvent, SseParser

HEAD_BYTES = 8 * 1024
#: Seconds the rest of a body may take once nothing in it can change the verdict.
GRACE_S = 0.5
#: Seconds without new bytes after which a reply is looked at whole (a stall after our response
#: then costs about 2 x STALL_S, however the body was cut into pieces).
STALL_S = 0.2
#: Seconds the rest of an event stream may take after our response: a server that ends the
#: stream there (most do) leaves the connection reusable; one that keeps it open costs no more.
TAIL_S = 0.1
#: Early parses tried per reply (each is linear; a body can end in "}" only so often).
_EARLY_TRIES = 8
_RETRYABLE = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


@dataclass
class Reply:
    """What one exchange saw.

    Attributes:
        status: HTTP status code.
        headers: response headers (case-insensitive).
        kind: what the body turned out to be (``json``, ``sse``, ``html``, ``text``, ``empty``).
        declared_kind: what the ``Content-Type`` claimed, if anything recognisable.
        response: the JSON-RPC response whose id matched ours, if one arrived.
        error_body: a JSON-RPC error object found in the body that is not our response
            (for example the id-less error of an HTTP 400).
        head: the first decoded bytes of the body (up to 8 kB), for classification.
        truncated: the body was larger than the cap.
        invalid_json: a JSON body or SSE ``data`` was not valid JSON.
        unsupported_encoding: the server used a content coding the probe does not decode.
        skipped_notifications: JSON-RPC notifications skipped on the way.
        skipped_requests: server-to-client JSON-RPC requests skipped on the way.
        sse_unterminated: the response came in an SSE event the stream never terminated.
        elapsed_ms: from sending the request to the end of reading, milliseconds.
        payload: the parsed body of a complete JSON reply.
        partial: the capped bytes of a JSON reply that was truncated (for salvage).
        id_type_changed: our response came back with its id spelled as another JSON type.
        body_incomplete: the body ended early or stalled (a framing fault of the server).
        body_bytes: decoded body bytes read (at most the cap).
    """

    status: int
    headers: Fields
    kind: BodyKind = "empty"
    declared_kind: BodyKind | None = None
    response: JsonObject | None = None
    error_body: JsonObject | None = None
    head: bytes = b""
    truncated: bool = False
    invalid_json: bool = False
    unsupported_encoding: bool = False
    skipped_notifications: int = 0
    skipped_requests: int = 0
    sse_unterminated: bool = False
    elapsed_ms: float = 0.0
    last_event_id: str | None = None
    retry_ms: int | None = None
    payload: Any = None
    partial: bytes = b""
    id_type_changed: bool = False
    body_incomplete: bool = False
    body_bytes: int = 0


#: Nesting a reply may have: deep JSON Schemas are real (a fingerprint still refuses past 64).
REPLY_DEPTH = 256
#: Bytes of a body needed before its kind is guessed (enough for "<!doctype" or "retry:").
SNIFF_BYTES = 64
_WHITESPACE = b" \t\r\n"


@dataclass
class _Reader:
    reply: Reply
    expect_id: int | None
    head: bytearray = field(default_factory=bytearray)
    pending: bytearray = field(default_factory=bytearray)
    json_buffer: bytearray = field(default_factory=bytearray)
    sse: SseParser | None = None
    complete: bool = False  # our response is in hand (found early); the rest is not needed
    tries: int = 0
    fed: int = 0  # decoded bytes fed so far (the stall watch compares it)

    def feed(self, data: bytes) -> bool:
        """Consume decoded bytes; ``True`` when reading can stop. Linear in the input."""
        reply = self.reply
        self.fed += len(data)
        if len(self.head) < HEAD_BYTES:
            self.head += data[: HEAD_BYTES - len(self.head)]
        if reply.kind == "empty":
            if not self.pending:
                data = data.lstrip(_WHITESPACE)  # leading blank space decides nothing
                if not data:
                    return False
            self.pending += data
            if len(self.pending) < SNIFF_BYTES and not self._evident():
                return False  # a longer look is needed to tell the kind
            return self._decide()
        return self._consume(data)

    def _evident(self) -> bool:
        """The kind is clear before SNIFF_BYTES: JSON from its first byte, or the declared SSE or JSON confirmed."""
        sniffed = sniff(bytes(self.pending))
        return sniffed == "json" or (sniffed == self.reply.declared_kind and sniffed == "sse")

    def _decide(self) -> bool:
        reply = self.reply
        reply.kind = _settle_kind(reply.declared_kind, sniff(bytes(self.pending[:HEAD_BYTES])))
        if reply.kind == "sse":
            self.sse = SseParser()
        data, self.pending = bytes(self.pending), bytearray()
        return self._consume(data)

    def _consume(self, data: bytes) -> bool:
        reply = self.reply
        if reply.kind == "json":
            self.json_buffer += data
            if self._may_be_whole(data):
                self._whole()
            return False
        if reply.kind == "sse":
            assert self.sse is not None
            if self._events(self.sse.feed(data)):
                return True
            if self._may_be_whole(data):
                self._whole()
            return False
        return len(self.head) >= HEAD_BYTES

    def try_whole(self) -> bool:
        """The body stalled: is our response complete in what arrived? (``complete`` then.)"""
        if self.expect_id is not None and self.reply.kind == "empty" and self.pending and self._decide():
            self.complete = True  # (a complete event or value was waiting for more bytes to sniff)
        return self._whole()

    def _whole(self) -> bool:
        """Whether our response is complete in what arrived: a JSON body that parses, or the data of
        an SSE event whose blank line has not come (``complete`` then; the event is unterminated)."""
        reply = self.reply
        if self.complete or self.expect_id is None:
            return self.complete
        if reply.kind == "json":
            payload = _loads(bytes(self.json_buffer), None)
            if payload is not None and self._messages(payload):
                reply.payload, self.complete = payload, True
        elif reply.kind == "sse" and self.sse is not None:
            pending = self.sse.pending_data()
            if pending is not None and self._messages(_loads(pending.encode("utf-8"), None)):
                self.complete = reply.sse_unterminated = True  # the event's blank line may never come
        return self.complete

    def _may_be_whole(self, data: bytes) -> bool:
        """Whether the bytes so far may end a JSON value (tried at most a few times per reply)."""
        if self.expect_id is None or self.tries >= _EARLY_TRIES or not data.rstrip().endswith((b"}", b"]")):
            return False
        self.tries += 1
        return True

    def finish(self) -> None:
        reply = self.reply
        if self.complete:
            return
        if reply.kind == "empty" and self.pending:
            self._decide()
        if reply.kind == "json" and reply.truncated:
            reply.partial = bytes(self.json_buffer)
        elif reply.kind == "json":
            reply.payload = _loads(bytes(self.json_buffer), reply)
            self._messages(reply.payload)
        elif reply.kind == "sse" and self.sse is not None and reply.response is None:
            self._events(self.sse.close())
        if self.sse is not None:
            reply.last_event_id, reply.retry_ms = self.sse.last_event_id, self.sse.retry_ms

    def _events(self, events: list[SseEvent]) -> bool:
        for event in events:
            if event.event != "message" or not event.data.strip():
                continue  # priming events (id + empty data) and other event types carry no message
            found = self._messages(_loads(event.data.encode("utf-8"), self.reply))
            if found:
                self.reply.sse_unterminated = not event.terminated
                return True
        return False

    def _messages(self, payload: object) -> bool:
        items = payload if isinstance(payload, list) else [payload]
        for item in items:
            if not isinstance(item, dict):
                continue
            if self.expect_id is not None and matches(item, self.expect_id):
                self.reply.response = item
                self.reply.id_type_changed = id_type_changed(item)
                return True
            if "method" in item:
                if "id" in item:
                    self.reply.skipped_requests += 1
                else:
                    self.reply.skipped_notifications += 1
            elif self.reply.error_body is None and error_of(item) is not None:
                self.reply.error_body = error_of(item)
        return False


def _settle_kind(declared: BodyKind | None, sniffed: BodyKind) -> BodyKind:
    if declared in ("json", "sse") and sniffed == "text":
        return declared
    return sniffed


def _loads(raw: bytes, reply: Reply | None) -> Any:
    """Parse a body or event; a failure marks ``reply`` (``None``: an early try, nothing to mark)."""
    try:
        return jsonsafe.loads(raw, max_depth=REPLY_DEPTH)
    except (ValueError, RecursionError):
        if reply is not None:
            reply.invalid_json = True
        return None


class Exchanger:
    """Sends the probe's requests on its transport and reads bounded replies.

    Args:
        transport: the probe's pinned transport (see :func:`app.net.transport.build_transport`; it holds
            the connect budget).
        user_agent: the ``User-Agent`` header value.
        read_timeout_s: budget between two reads of a reply, seconds (each exchange also has
            an overall deadline).
        cap: most decoded body bytes read per reply.
        pace: told when the first request to each host is on the wire, or its try failed (:mod:`app.net.pace`).
    """

    def __init__(
        self,
        transport: PinnedTransport,
        *,
        user_agent: str,
        read_timeout_s: float,
        cap: int,
        pace: Pace | None = None,
    ) -> None:
        self.transport = transport
        self._pace = pace
        self._sent_to: set[str] = set()
        self.cap = cap
        self.retries_left = 1
        self.peer_certificate: dict[str, Any] | None = None
        self.peer_certificate_der: bytes | None = None
        self._base_headers = {"User-Agent": user_agent, "Accept-Encoding": "identity"}
        self._read_timeout_s = read_timeout_s
        self._urls: dict[str, httpx2.URL] = {}

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str],
        body: JsonObject | None = None,
        expect_id: int | None = None,
        timeout_s: float,
        on_sent: Callable[[], None] | None = None,
        retry: bool = True,
    ) -> Reply:
        """Run one exchange within ``timeout_s`` seconds (``on_sent``: called once the request is written;
        ``retry``: may use the probe's one retry).

        Raises:
            TimeoutError: the deadline passed before the reply was read.
            httpx2.HTTPError: the transport failed (connect, TLS, protocol, read).
        """
        started = time.perf_counter()
        content = json.dumps(body, separators=(",", ":")).encode() if body is not None else None
        reading: _Reading | None = None
        # One cancel scope bounds headers and body together (the cheapest bound anyio offers).
        with anyio.CancelScope(deadline=anyio.current_time() + timeout_s) as scope:
            response = await self._send_with_retry(
                method, url, headers, content, read_timeout_s=self._read_timeout_s, on_sent=on_sent, retry=retry
            )
            try:
                reading = self._start(response, expect_id, scope)
                if expect_id is None or response.status_code == 202:  # no response can be in this body
                    reading.grace()
                reading.watch()
                await self._consume(response, reading)
            finally:
                if reading is not None:
                    reading.unwatch()
                await response.aclose()
        if reading is None:
            raise TimeoutError("no response headers in time")
        reply = reading.done(cut_short=scope.cancelled_caught)
        reply.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        return reply

    def preconnect(self, url: str) -> None:
        """Dial one more connection to ``url``'s origin now, for a request soon to overlap another."""
        self.transport.preconnect(self._url(url))

    def _url(self, url: str) -> httpx2.URL:
        parsed = self._urls.get(url)
        if parsed is None:  # a probe sends most requests to one URL: parse it once
            parsed = self._urls[url] = httpx2.URL(url)
        return parsed

    async def open(self, method: str, url: str, *, headers: dict[str, str], timeout_s: float) -> Response:
        """Send a body-less request and return as soon as the response headers arrived.

        The body is left unread for the caller to stream, with no read timeout (an event
        stream may be quiet for long; the caller bounds every wait on it); the caller must
        ``aclose()`` it.

        Raises:
            TimeoutError: no response headers within ``timeout_s`` seconds.
            httpx2.HTTPError: the transport failed.
        """
        with anyio.fail_after(timeout_s):
            return await self._send_with_retry(method, url, headers, None, read_timeout_s=None)

    async def _send_with_retry(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        content: bytes | None,
        *,
        read_timeout_s: float | None,
        on_sent: Callable[[], None] | None = None,
        retry: bool = True,
    ) -> Response:
        parsed = self._url(url)
        first: str | None = None  # (the host, while no request to it has been written yet)
        if self._pace is not None and (host := parsed.raw_host.decode("ascii").lower()) not in self._sent_to:
            first = host
        written = self._written(on_sent, first) if on_sent is not None or first is not None else None
        fields = self._base_headers | headers
        while True:
            try:
                response = await self.transport.request(
                    method, parsed, fields, content,
                    read_timeout=read_timeout_s, pool_timeout=self._read_timeout_s, written=written,
                )  # fmt: skip
            except _RETRYABLE:
                if self.transport.warm_died():
                    continue  # a connection dialled ahead was dropped while it waited: not the server's answer
                if not retry or self.retries_left <= 0:
                    raise
                self.retries_left -= 1
                continue
            if parsed.scheme == "https":
                self._note_tls(response)
            return response

    def _written(self, on_sent: Callable[[], None] | None, first_to: str | None) -> Written:
        """Told by the transport once the request is on the wire (``True``) or a step before failed:
        calls ``on_sent`` once it is written; then, and whenever a step of sending it failed
        (connect, TLS, writing) before a first request to host ``first_to`` was written, it tells
        the pace of that contact."""

        async def written(ok: bool) -> None:
            if ok and on_sent is not None:
                on_sent()
            if first_to is not None and first_to not in self._sent_to:
                if ok:
                    self._sent_to.add(first_to)
                assert self._pace is not None
                await self._pace.contacted(first_to)

        return written

    def _note_tls(self, response: Response) -> None:
        if self.peer_certificate_der is not None:
            return
        ssl_object = response.ssl_object
        if ssl_object is not None:
            self.peer_certificate = ssl_object.getpeercert() or None
            self.peer_certificate_der = ssl_object.getpeercert(binary_form=True)

    def _start(self, response: Response, expect_id: int | None, scope: anyio.CancelScope) -> _Reading:
        reply = Reply(status=response.status_code, headers=response.headers)
        # (lines that disagree declare nothing: the body is sniffed; the conversation notes the conflict)
        reply.declared_kind = kind_from_header(single_value(response.headers, "content-type"))
        try:
            decoder = CappedDecoder(response.headers.get("content-encoding", ""), self.cap)
        except UnsupportedEncoding:
            reply.unsupported_encoding = True
            return _Reading(_Reader(reply, expect_id), None, scope, stopped=True)
        return _Reading(_Reader(reply, expect_id), decoder, scope)

    @staticmethod
    async def _consume(response: Response, reading: _Reading) -> None:
        """Feed the body to the reader until our response, the cap or the end."""
        decoder, reader = reading.decoder, reading.reader
        if decoder is None:
            return
        try:
            async for raw in response.aiter_raw():
                if reading.stopped:
                    continue  # draining what follows our response (unread), so the connection can be reused
                data = decoder.decode(raw)
                if decoder.truncated:
                    reader.reply.truncated = True
                if data and reader.feed(data):
                    reading.stopped = True
                    reading.grace(TAIL_S)
                    continue
                if reader.complete:
                    reading.grace()
                if reader.reply.truncated:
                    break
        except UnsupportedEncoding:
            reader.reply.unsupported_encoding = True
            reading.stopped = True
        except (httpx2.RemoteProtocolError, httpx2.ReadError):
            reader.reply.body_incomplete = True  # the body broke off after the headers
        reading.ended = True


@dataclass
class _Reading:
    """One body being read: the reader, its decoder, and how reading ended."""

    reader: _Reader
    decoder: CappedDecoder | None
    scope: anyio.CancelScope
    stopped: bool = False  # stopped at our response (or at a body that cannot be decoded)
    ended: bool = False  # the body was read as far as it goes

    _timer: asyncio.TimerHandle | None = None
    _last_fed: int = -1

    def watch(self) -> None:
        """Every STALL_S without new bytes, look whether our response is already complete."""
        self._timer = asyncio.get_running_loop().call_later(STALL_S, self._check)

    def unwatch(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _check(self) -> None:
        self._timer = None
        if self.stopped or self.ended:
            return
        if self.reader.fed == self._last_fed and self.reader.try_whole():
            self.grace(0.0)  # complete and stalled: stop now
            return
        self._last_fed = self.reader.fed
        self.watch()

    def grace(self, seconds: float = GRACE_S) -> None:
        """Nothing more in the body can change the verdict: give the rest at most ``seconds``."""
        self.scope.deadline = min(self.scope.deadline, anyio.current_time() + seconds)

    def done(self, *, cut_short: bool) -> Reply:
        """The reply; ``cut_short`` when the deadline passed.

        Raises:
            TimeoutError: the deadline cut the body and what arrived holds no response of ours.
        """
        reply = self.reader.reply
        if cut_short and not self.ended and not self.stopped:
            reply.body_incomplete = True  # (a stream left open after our response is no fault)
        if not self.stopped:
            self.reader.finish()
        reply.head = bytes(self.reader.head)
        reply.body_bytes = self.reader.fed
        awaited = self.reader.expect_id is not None and reply.status != 202  # 202: the answer comes elsewhere
        if cut_short and not self.ended and reply.response is None and awaited:
            raise TimeoutError("the reply did not arrive completely in time")
        return reply
