"""The Streamable HTTP conversation: era detection, handshake, tool listing, session end.

Policy (MCP 2026-07-28 ``basic/transports/streamable-http``, "Backward compatibility"; MCP
2025-11-25 ``basic/transports`` and ``basic/lifecycle``):

1. POST ``server/discover`` offering 2026-07-28 with ``MCP-Protocol-Version``, ``Mcp-Method``
   and the request ``_meta``. A ``DiscoverResult`` listing 2026-07-28 means a modern server:
   ``tools/list`` with the same headers, and no session to end.
2. 401, or 403 with a challenge, is ``auth`` (no fallback); so is 429 and a firewall page
   (a careful client backs off rather than send a second request). Transport failures and timeouts end
   the probe: a network error is never an era verdict. A recognised modern error
   (-32022 with ``supported``) that lists no version this probe speaks and no handshake version
   is ``unsupported_protocol_version``. Anything else falls back to ``initialize``.
3. ``initialize`` offering 2025-11-25 (the answered version is recorded, whatever it is), then
   ``notifications/initialized`` (any 2xx is fine), ``tools/list`` following ``nextCursor`` up
   to the page limit, and DELETE with ``Mcp-Session-Id`` when one was issued (this never
   changes the verdict).
4. When ``initialize`` fails with 400, 404 or 405 and the body is not a modern JSON-RPC error,
   the URL may speak the legacy HTTP+SSE transport: :mod:`app.probe.legacy_sse` opens the
   stream and the same handshake and listing run over it (``transport: "sse"``, recorded as
   soon as the ``endpoint`` event arrives, so a stream that never answers still says so).
5. After a complete ``tools/list``, the refusal call (:mod:`app.probe.refusal`).
6. An event stream that closes after an event with an id and before our response is resumed
   with ``GET`` and ``Last-Event-ID`` (:mod:`app.probe.resume`), on any step.

A light probe stops after the handshake (the session is still ended).

Budget: every exchange may use what is left of the whole probe's budget (capped by
``step_timeout_s``, which by default is the whole budget): real servers take 10 s and more to
answer ``initialize`` while they reach their upstream. The refusal call has its own smaller
cap and never decides the status.

What a tolerant client accepts in a handshake result: see :mod:`app.probe.handshake`. The
tool steps (listing and the refusal call) are in :mod:`app.probe.tools` and
:mod:`app.probe.refusal`.

Credentials (a credentialed check): the extra headers go on every request to the probed URL
and to the legacy endpoint on the same origin, never to metadata URLs or any other host.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
import httpx2

from app.errors import TargetRefused
from app.guard import check_url
from app.net.fields import conflicted
from app.probe.classify import Verdict, classify_error, classify_exception, classify_reply
from app.probe.exchange import Exchanger, Reply
from app.probe.findings import Findings, Stopped
from app.probe.handshake import record_legacy, record_modern, session_of
from app.probe.jsonrpc import (
    HANDSHAKE_VERSIONS,
    METHOD_NOT_FOUND,
    MODERN_VERSION,
    MODERN_VERSIONS,
    JsonObject,
    discover_request,
    error_of,
    initialize_request,
    initialized_notification,
    is_modern_error,
    supported_versions,
)
from app.probe.legacy_sse import (
    ENDPOINT_WAIT_S,
    EventStream,
    SseChannel,
    open_event_stream,
    resolve_endpoint,
    same_origin,
)
from app.probe.overlap import initialized_beside_tools
from app.probe.reasons import status_of
from app.probe.refusal import refuse
from app.probe.resume import resumable, resume
from app.probe.text import clean_text
from app.probe.tools import list_tools

ACCEPT = "application/json, text/event-stream"
#: Steps that may use the whole budget (the rest stop early enough to leave time for the DELETE).
HANDSHAKE_STEPS = frozenset({"server/discover", "initialize", "sse/connect"})
#: Singleton fields (:mod:`app.net.fields`) whose lines, when they disagree, are noted as a warning.
_NOTED_SINGLETONS = {
    "content-type": "content_type_conflict",
    "location": "location_conflict",
    "retry-after": "retry_after_conflict",
    "mcp-protocol-version": "protocol_version_conflict",
}
#: Answers to ``server/discover`` that end the probe: credentials are wanted, or a second
#: request would only be refused again (rate limit, firewall page).
_NO_FALLBACK = frozenset(
    {"auth_required", "auth_challenge_missing", "auth_insufficient", "rate_limited", "waf_challenge"}
)


def _refuses_posts(reply: Reply) -> bool:
    """The URL takes no POST at all: a 405 whose ``Allow`` (which a 405 must carry, RFC 9110
    section 15.5.6) names GET and not POST. ``initialize`` would be refused the same way, so the
    legacy event stream is opened first (MCP 2025-11-25 backward compatibility); anything less
    certain keeps the specified order, ``initialize`` first."""
    if reply.status != 405:
        return False
    methods = {method.strip().upper() for method in reply.headers.get("allow", "").split(",")}
    return "GET" in methods and "POST" not in methods


@dataclass
class Conversation:
    """One Streamable HTTP conversation with the target.

    Args:
        exchanger: sends requests over the probe's pinned client.
        url: the normalised target URL.
        findings: where facts and the verdict are recorded.
        client_info: the ``clientInfo`` / ``io.modelcontextprotocol/clientInfo`` object.
        handshake_deadline: ``time.monotonic()`` value by which the handshake must end: the
            whole probe's (a server slow to answer ``initialize`` may use it all; the closing
            DELETE then gets what is left, or is skipped).
        deadline: ``time.monotonic()`` value by which the conversation must end (the
            session end has its own small budget after it).
        step_timeout_s: budget of one exchange, seconds (clipped to the deadline).
        max_pages: most ``tools/list`` pages to read.
        refusal_timeout_s: budget of the refusal call, seconds (clipped to the deadline).
        credentials: extra request headers for the probed origin (a credentialed check).
    """

    exchanger: Exchanger
    url: str
    findings: Findings
    client_info: JsonObject
    deadline: float
    handshake_deadline: float
    step_timeout_s: float
    max_pages: int
    refusal_timeout_s: float = 5.0
    credentials: dict[str, str] | None = None
    session_id: str | None = None
    negotiated_version: str | None = None
    modern_hint: bool = False
    legacy_first: bool = False
    sse_tried: bool = False
    channel: SseChannel | None = None
    auth_reply: Reply | None = None
    _next_id: int = 0

    @property
    def over_event_stream(self) -> bool:
        """The conversation speaks HTTP+SSE (requests answered on the event stream)."""
        return self.channel is not None

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def run(self) -> None:
        """Run the conversation; failures are recorded in ``findings``, never raised."""
        try:
            if await self._try_modern():
                return
            await self._legacy()
        except Stopped:
            return

    async def exchange(
        self,
        body: JsonObject,
        headers: dict[str, str],
        budget_s: float,
        *,
        expect: bool,
        on_sent: Callable[[], None] | None = None,
        tentative: bool = False,
    ) -> Reply:
        """One message over the channel in use; transport failures and timeouts are raised.

        ``tentative``: an early ask whose reply may be thrown away: it uses no retry and records
        nothing (:meth:`note` records its oddities when it is used)."""
        request_id = body.get("id") if expect else None
        if self.channel is not None:
            reply = await self.channel.call(body, budget_s, self.credentials, on_sent)
        else:
            deadline = time.monotonic() + budget_s
            reply = await self.exchanger.send(
                "POST",
                self.url,
                headers=headers,
                body=body,
                expect_id=request_id,
                timeout_s=budget_s,
                on_sent=on_sent,
                retry=not tentative,
            )
            if isinstance(request_id, int) and resumable(reply):
                reply = await resume(
                    self.exchanger, self.url, reply, headers=headers, expect_id=request_id, deadline=deadline
                )
        if not tentative:
            self.note(reply)
        return reply

    def note(self, reply: Reply) -> None:
        """Record the oddities of a reply that is used."""
        if reply.id_type_changed:
            self.findings.warn("response_id_type_changed")
        if reply.body_incomplete:
            self.findings.warn("reply_incomplete")
        if reply.truncated and reply.response is not None:
            self.findings.warn("reply_truncated")  # more followed the response than the cap allows
        for name, warning in _NOTED_SINGLETONS.items():
            if conflicted(reply.headers, name):
                self.findings.warn(warning)

    async def send(
        self,
        step: str,
        body: JsonObject,
        headers: dict[str, str],
        *,
        expect: bool = True,
        on_sent: Callable[[], None] | None = None,
        supersede: bool = False,
    ) -> Reply:
        """Send one message; on a transport failure record it (over any verdict, with ``supersede``) and stop."""
        self.findings.step(step)
        limit = self.handshake_deadline if step in HANDSHAKE_STEPS else self.deadline
        remaining = limit - time.monotonic()
        timeout = min(self.step_timeout_s, remaining)
        if timeout <= 0:
            self.findings.fail(step, Verdict("probe_deadline"))
            raise Stopped
        try:
            return await self.exchange(body, headers, timeout, expect=expect, on_sent=on_sent)
        except (TimeoutError, httpx2.HTTPError) as exc:
            verdict = classify_exception(exc)
            if isinstance(exc, TimeoutError) and timeout < self.step_timeout_s:
                verdict = Verdict("probe_deadline")
            self.findings.fail(step, verdict, supersede=supersede)
            raise Stopped from exc

    def fail(self, step: str, verdict: Verdict, reply: Reply) -> None:
        """Record the deciding failure of ``reply``; keep an auth reply for the metadata lookup."""
        if status_of(verdict.reason) == "auth" and self.auth_reply is None:
            self.auth_reply = reply
        self.findings.fail(step, verdict, reply.status)

    def headers_for(self, method: str | None = None, name: str | None = None) -> dict[str, str]:
        headers = dict(self.credentials or {}) | {"Content-Type": "application/json", "Accept": ACCEPT}
        if method is not None:  # modern era
            headers["MCP-Protocol-Version"] = MODERN_VERSION
            headers["Mcp-Method"] = method
            if name is not None:
                headers["Mcp-Name"] = name
            return headers
        if self.negotiated_version is not None:
            headers["MCP-Protocol-Version"] = self.negotiated_version
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        return headers

    # --- modern era -------------------------------------------------------------------------

    async def _try_modern(self) -> bool:
        """``True`` when the probe is finished (modern success or a final failure)."""
        step = "server/discover"
        if self.url.startswith("https:") and not self.findings.light:
            # A TLS handshake takes two round trips: dialled now, a second connection is ready
            # when a 2025-era notification or a legacy stream needs it (closed unused otherwise).
            self.exchanger.preconnect(self.url)
        reply = await self.send(step, discover_request(self.next_id(), self.client_info), self.headers_for(step))
        self.findings.timings.discover_ms = reply.elapsed_ms
        self.findings.evidence.answered = True
        verdict = classify_reply(reply)
        if verdict is not None and verdict.reason in _NO_FALLBACK:
            self.fail(step, verdict, reply)
            raise Stopped
        result = reply.response.get("result") if reply.response else None
        if isinstance(result, dict) and reply.status // 100 == 2:
            versions = result.get("supportedVersions")
            if isinstance(versions, list) and MODERN_VERSION in versions:
                record_modern(self.findings, result, reply)
                if not self.findings.light:
                    await list_tools(self, modern=True)
                    await refuse(self, modern=True)
                return True
        error = error_of(reply.response) or reply.error_body
        if error is not None and is_modern_error(error):
            supported = supported_versions(error)
            if supported and not (set(supported) & (MODERN_VERSIONS | HANDSHAKE_VERSIONS)):
                detail = clean_text(", ".join(supported), 200)
                self.fail(step, Verdict("unsupported_protocol_version", detail), reply)
                raise Stopped
            self.modern_hint = True
        elif error is not None and reply.status == 404 and error.get("code") == METHOD_NOT_FOUND:
            self.modern_hint = True  # 2026-07-28 answers unknown methods with 404 + -32601
        self.legacy_first = _refuses_posts(reply)
        return False

    # --- legacy era -------------------------------------------------------------------------

    async def _legacy(self) -> None:
        if self.legacy_first and self.channel is None:
            self.legacy_first = False
            if await self._try_legacy_sse():
                return
        step = "initialize"
        if self.channel is None and not self.findings.light:
            self.exchanger.preconnect(self.url)  # notifications/initialized will go beside tools/list
        reply = await self.send(step, initialize_request(self.next_id(), self.client_info), self.headers_for())
        self.findings.timings.initialize_ms = reply.elapsed_ms
        self.findings.evidence.answered = True
        verdict = classify_reply(reply)
        if verdict is not None:
            if self._may_be_legacy_sse(reply) and await self._try_legacy_sse():
                return
            self.fail(step, self._handshake_verdict(verdict), reply)
            raise Stopped
        assert reply.response is not None
        error = error_of(reply.response)
        if error is not None:
            self.fail(step, self._handshake_verdict(classify_error(error)), reply)
            raise Stopped
        result = reply.response.get("result")
        if not isinstance(result, dict):
            self.fail(step, Verdict("invalid_result"), reply)
            raise Stopped
        self.negotiated_version = record_legacy(self.findings, result, reply, sse=self.channel is not None)
        if self.channel is None:  # HTTP+SSE sessions live in the endpoint URL; nothing to end with DELETE
            if conflicted(reply.headers, "mcp-session-id"):  # which one is ours cannot be known
                self.fail(step, Verdict("session_id_conflict"), reply)
                raise Stopped
            self.session_id = session_of(self.findings, reply)
        if self.findings.light:
            await self.initialized()
            return
        await initialized_beside_tools(self)
        await refuse(self, modern=False)

    def _may_be_legacy_sse(self, reply: Reply) -> bool:
        """MCP 2025-11-25 backward compatibility: POST failed with 400/404/405, body not a modern error."""
        if self.channel is not None or self.sse_tried or reply.status not in (400, 404, 405):
            return False
        error = error_of(reply.response) or reply.error_body
        return error is None or not is_modern_error(error)

    async def _try_legacy_sse(self) -> bool:
        """Open the event stream; ``True`` when the URL speaks HTTP+SSE (the SSE path decided the result)."""
        step = "sse/connect"
        self.findings.step(step)
        self.sse_tried = True
        timeout = min(self.step_timeout_s, self.handshake_deadline - time.monotonic())
        if timeout <= 0:
            return False
        started = time.monotonic()
        self.exchanger.preconnect(self.url)  # the stream holds one connection; the POSTs need another
        try:
            response, is_event_stream = await open_event_stream(self.exchanger, self.url, timeout, self.credentials)
        except (TimeoutError, httpx2.HTTPError):
            return False
        try:
            if not is_event_stream:
                return False
            stream = EventStream(response, self.exchanger.cap)
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(stream.run)
                try:
                    await self._sse_session(step, stream, started, response.status_code)
                except Stopped:
                    pass
                finally:
                    task_group.cancel_scope.cancel()
            return True
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await response.aclose()

    async def _sse_session(self, step: str, stream: EventStream, started: float, http_status: int) -> None:
        wait = min(ENDPOINT_WAIT_S, self.handshake_deadline - time.monotonic())
        found = await stream.wait(lambda: stream.endpoint is not None, wait)
        self.findings.timings.sse_connect_ms = round((time.monotonic() - started) * 1000, 1)
        if not found or stream.endpoint is None:
            timed_out = not stream.ended and wait < ENDPOINT_WAIT_S  # the probe's budget, not the 10 s, ran out
            self.findings.fail(step, Verdict("probe_deadline" if timed_out else "sse_endpoint_missing"), http_status)
            raise Stopped
        try:
            endpoint = resolve_endpoint(self.url, stream.endpoint)
            check_url(endpoint, allow_private=True)  # form only: length, characters, parsable
            cross_origin = not same_origin(endpoint, self.url)
        except (ValueError, TargetRefused):
            self.findings.fail(step, Verdict("sse_endpoint_invalid"), http_status)
            raise Stopped from None
        if cross_origin:
            parts = urlsplit(endpoint)
            detail = clean_text(f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}", 200)
            self.findings.fail(step, Verdict("sse_endpoint_cross_origin", detail), http_status)
            raise Stopped
        self.channel = SseChannel(self.exchanger, stream, endpoint)
        self.findings.era, self.findings.transport = "legacy", "sse"  # the transport is settled
        self.findings.http_status = http_status
        await self._legacy()

    def _handshake_verdict(self, verdict: Verdict) -> Verdict:
        if verdict.reason == "method_not_found" and self.modern_hint:
            return Verdict("modern_only", verdict.detail)
        return verdict

    async def initialized(self, on_sent: Callable[[], None] | None = None) -> None:
        """``notifications/initialized``; with ``on_sent``, overlapped (its failure then supersedes)."""
        step = "notifications/initialized"
        body, headers = initialized_notification(), self.headers_for()
        reply = await self.send(step, body, headers, expect=False, on_sent=on_sent, supersede=on_sent is not None)
        self.findings.timings.initialized_ms = reply.elapsed_ms
        if reply.status // 100 != 2:
            self.findings.warn("initialized_rejected")

    # --- tools --------------------------------------------------------------------------------

    # --- session end --------------------------------------------------------------------------

    async def end_session(self, timeout_s: float) -> None:
        """DELETE the session when one was issued (legacy era only); never changes the verdict."""
        if self.session_id is None or self.findings.session is None:
            return
        if timeout_s <= 0:
            self.findings.warn("session_end_skipped")  # the handshake used the whole budget
            return
        self.findings.step("session/end")  # the verdict is final: nothing below changes it
        headers = self.headers_for()
        headers.pop("Content-Type")
        started = time.monotonic()
        try:
            reply = await self.exchanger.send("DELETE", self.url, headers=headers, timeout_s=timeout_s)
        except (TimeoutError, httpx2.HTTPError):
            self.findings.warn("session_end_failed")
            return
        finally:
            self.findings.timings.session_end_ms = round((time.monotonic() - started) * 1000, 1)
        self.findings.session.end_status = reply.status
        if reply.status // 100 != 2 and reply.status not in (404, 405):
            self.findings.warn("session_end_failed")
