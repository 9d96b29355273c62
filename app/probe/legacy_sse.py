"""The legacy HTTP+SSE transport (MCP 2024-11-05 ``basic/transports``, "HTTP with SSE").

Policy:
- The probe opens the event stream with GET and ``Accept: text/event-stream`` and waits at
  most 10 s for the ``endpoint`` event. Its data is resolved against the stream URL (relative,
  root-relative, query-only or absolute); an endpoint on another origin is refused and never
  contacted (as the ``mcp`` SDK client does), so a server cannot steer the probe elsewhere.
- Requests are POSTed to the endpoint; their responses arrive as ``message`` events on the
  open stream (a server that answers inline in the POST reply is accepted too). Every wait is
  bounded by the step budget, since a POST may get 202 and no response ever.
- The stream is read by one background task with the same byte cap as any reply; it is closed
  when the conversation ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2

from app import jsonsafe
from app.net.fields import single_value
from app.net.h1.response import Response
from app.probe.body import CappedDecoder, UnsupportedEncoding, kind_from_header
from app.probe.exchange import REPLY_DEPTH, Exchanger, Reply
from app.probe.jsonrpc import JsonObject, id_key, is_response
from app.probe.sse import SseParser

ENDPOINT_WAIT_S = 10.0


def same_origin(a: str, b: str) -> bool:
    """``True`` when two absolute URLs share scheme, host and port (RFC 6454)."""
    first, second = urlsplit(a), urlsplit(b)
    try:
        ports = (first.port or _default_port(first.scheme), second.port or _default_port(second.scheme))
    except ValueError:
        return False
    return (
        first.scheme.lower() == second.scheme.lower()
        and (first.hostname or "").lower() == (second.hostname or "").lower()
        and ports[0] == ports[1]
    )


def _default_port(scheme: str) -> int:
    return 443 if scheme.lower() == "https" else 80


def resolve_endpoint(stream_url: str, data: str) -> str:
    """The endpoint URL an ``endpoint`` event names, resolved against the stream URL (RFC 3986 section 5)."""
    return urljoin(stream_url, data.strip())


class EventStream:
    """Reads one open SSE response in the background and keeps what the probe needs.

    Attributes:
        endpoint: data of the first ``endpoint`` event.
        responses: JSON-RPC responses by id.
        ended: the stream closed (or failed, see ``error``).
        truncated: the byte cap was reached.
    """

    def __init__(self, response: Response, cap: int) -> None:
        self._response = response
        self._cap = cap
        self.endpoint: str | None = None
        self.responses: dict[str, JsonObject] = {}
        self.sizes: dict[str, int] = {}  # characters of each response's event data
        self.ended = False
        self.truncated = False
        self.error: BaseException | None = None
        self.skipped = 0
        self._changed = anyio.Event()

    async def run(self) -> None:
        """Read until the stream ends, the cap is reached, or the task is cancelled."""
        parser = SseParser()
        try:
            decoder = CappedDecoder(self._response.headers.get("content-encoding", ""), self._cap)
            async for raw in self._response.aiter_raw():
                data = decoder.decode(raw)
                for event in parser.feed(data):
                    self._event(event.event, event.data)
                if decoder.truncated:
                    self.truncated = True
                    break
            for event in parser.close():
                self._event(event.event, event.data)
        except (httpx2.HTTPError, UnsupportedEncoding, OSError) as exc:
            self.error = exc
        finally:
            self.ended = True
            self._notify()

    def _event(self, kind: str, data: str) -> None:
        if kind == "endpoint":
            if self.endpoint is None:
                self.endpoint = data
                self._notify()
            return
        if kind != "message" or not data.strip():
            return
        try:
            message = jsonsafe.loads(data, max_depth=REPLY_DEPTH)
        except (ValueError, RecursionError):
            self.skipped += 1
            return
        key = id_key(message.get("id")) if isinstance(message, dict) else None
        # Our ids are small integers: only such keys are kept, so other ids cannot crowd ours out.
        ours = key is not None and key.isascii() and key.isdigit() and len(key) <= 4
        if is_response(message) and ours and len(self.responses) < 10_000:
            assert key is not None
            if key not in self.responses:
                self.responses[key], self.sizes[key] = message, len(data)
            self._notify()
        else:
            self.skipped += 1

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def wait(self, ready: Callable[[], bool], timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` seconds for ``ready()``; ``False`` on timeout or end of stream."""
        with anyio.move_on_after(max(0.0, timeout_s)):
            while not ready():
                if self.ended:
                    return ready()
                await self._changed.wait()
            return True
        return ready()


async def open_event_stream(
    exchanger: Exchanger, url: str, timeout_s: float, headers: dict[str, str] | None = None
) -> tuple[Response, bool]:
    """GET ``url`` as an event stream. Returns the open response and whether it is an SSE stream.

    Raises:
        TimeoutError, httpx2.HTTPError: as :meth:`Exchanger.open`.
    """
    headers = (headers or {}) | {"Accept": "text/event-stream"}
    response = await exchanger.open("GET", url, headers=headers, timeout_s=timeout_s)
    declared = kind_from_header(single_value(response.headers, "content-type"))
    return response, response.status_code == 200 and declared in ("sse", None)


class SseChannel:
    """Sends JSON-RPC messages to the endpoint and takes the responses from the event stream."""

    def __init__(self, exchanger: Exchanger, stream: EventStream, endpoint: str) -> None:
        self.exchanger = exchanger
        self.stream = stream
        self.endpoint = endpoint

    async def call(
        self,
        body: JsonObject,
        timeout_s: float,
        headers: dict[str, str] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> Reply:
        """POST ``body``; for a request, wait for its response on the stream (or inline).

        Returns a :class:`Reply` whose status is the POST's and whose ``response`` is the
        JSON-RPC response, if it came in time.

        Raises:
            TimeoutError, httpx2.HTTPError: the POST itself failed or timed out.
        """
        started = time.perf_counter()
        deadline = time.monotonic() + timeout_s
        request_id = body.get("id")
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        reply = await self.exchanger.send(
            "POST",
            self.endpoint,
            headers=(headers or {}) | base,
            body=body,
            expect_id=request_id,
            timeout_s=timeout_s,
            on_sent=on_sent,
        )
        waiting = reply.response is None and reply.error_body is None and reply.kind != "html"
        if request_id is not None and waiting and reply.status // 100 == 2:
            key = str(request_id)
            arrived = await self.stream.wait(lambda: key in self.stream.responses, deadline - time.monotonic())
            if arrived:
                reply.response = self.stream.responses[key]
                reply.body_bytes += self.stream.sizes.get(key, 0)
            elif self.stream.ended:
                reply.kind, reply.truncated = "sse", self.stream.truncated
            else:
                raise TimeoutError("no response on the event stream in time")
        reply.elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        return reply
