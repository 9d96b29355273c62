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

A light probe stops after the handshake (the session is still ended).

Budget: every exchange may use what is left of the whole probe's budget (capped by
``step_timeout_s``, which by default is the whole budget): real servers take 10 s and more to
answer ``initialize`` while they reach their upstream. The refusal call has its own smaller
cap and never decides the status.

What a tolerant client accepts in an ``initialize`` result (MCP 2025-11-25 ``basic/lifecycle``,
``InitializeResult``): the result must be a JSON object; any of its fields may be missing or of
the wrong type. A missing or non-string ``protocolVersion`` is recorded as unknown (warning
``protocol_version_missing``) and no ``MCP-Protocol-Version`` header is sent after it (the
server then assumes 2025-03-26, as the transport spec says); a ``serverInfo`` or
``capabilities`` that is not an object is dropped with a warning. The check suite judges
these deviations; the status stays that of a server that answered.

Credentials (a credentialed check): the extra headers go on every request to the probed URL
and to the legacy endpoint on the same origin, never to metadata URLs or any other host.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2

from app.errors import TargetRefused
from app.guard import check_url
from app.probe.classify import Verdict, classify_error, classify_exception, classify_reply
from app.probe.evidence import REFUSAL_TOOL, Refusal
from app.probe.exchange import Exchanger, Reply
from app.probe.findings import Findings
from app.probe.jsonrpc import (
    HANDSHAKE_VERSIONS,
    META_SERVER_INFO,
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
    tools_call_request,
    tools_list_request,
)
from app.probe.legacy_sse import (
    ENDPOINT_WAIT_S,
    EventStream,
    SseChannel,
    open_event_stream,
    resolve_endpoint,
    same_origin,
)
from app.probe.reasons import status_of
from app.probe.refusal import refusal_of, withheld
from app.probe.result import ServerInfo, SessionInfo, ToolsInfo
from app.probe.text import clean_json, clean_text
from app.probe.tools import read_page, salvage_page

ACCEPT = "application/json, text/event-stream"
#: Answers to ``server/discover`` that end the probe: credentials are wanted, or a second
#: request would only be refused again (rate limit, firewall page).
_NO_FALLBACK = frozenset(
    {"auth_required", "auth_challenge_missing", "auth_insufficient", "rate_limited", "waf_challenge"}
)
_SESSION_ID = re.compile(r"[\x21-\x7e]{1,1024}")
_VERSION_TOKEN = re.compile(r"[\x21-\x7e]{1,64}")


class _Stop(Exception):
    """Internal: the conversation cannot go on (the failure is already recorded)."""


@dataclass
class Conversation:
    """One Streamable HTTP conversation with the target.

    Args:
        exchanger: sends requests over the probe's pinned client.
        url: the normalised target URL.
        findings: where facts and the verdict are recorded.
        client_info: the ``clientInfo`` / ``io.modelcontextprotocol/clientInfo`` object.
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
    step_timeout_s: float
    max_pages: int
    refusal_timeout_s: float = 5.0
    credentials: dict[str, str] | None = None
    session_id: str | None = None
    negotiated_version: str | None = None
    modern_hint: bool = False
    channel: SseChannel | None = None
    auth_reply: Reply | None = None
    _next_id: int = 0

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def run(self) -> None:
        """Run the conversation; failures are recorded in ``findings``, never raised."""
        try:
            if await self._try_modern():
                return
            await self._legacy()
        except _Stop:
            return

    async def _exchange(self, body: JsonObject, headers: dict[str, str], budget_s: float, *, expect: bool) -> Reply:
        """One message over the channel in use; transport failures and timeouts are raised."""
        request_id = body.get("id") if expect else None
        if self.channel is not None:
            reply = await self.channel.call(body, budget_s, self.credentials)
        else:
            reply = await self.exchanger.send(
                "POST", self.url, headers=headers, body=body, expect_id=request_id, timeout_s=budget_s
            )
        if reply.id_type_changed:
            self.findings.warn("response_id_type_changed")
        if reply.body_incomplete:
            self.findings.warn("reply_incomplete")
        return reply

    async def _send(self, step: str, body: JsonObject, headers: dict[str, str], *, expect: bool = True) -> Reply:
        """Send one message; on a transport failure record it and stop the conversation."""
        self.findings.step(step)
        remaining = self.deadline - time.monotonic()
        timeout = min(self.step_timeout_s, remaining)
        if timeout <= 0:
            self.findings.fail(step, Verdict("probe_deadline"))
            raise _Stop
        try:
            return await self._exchange(body, headers, timeout, expect=expect)
        except (TimeoutError, httpx2.HTTPError) as exc:
            verdict = classify_exception(exc)
            if isinstance(exc, TimeoutError) and timeout < self.step_timeout_s:
                verdict = Verdict("probe_deadline")
            self.findings.fail(step, verdict)
            raise _Stop from exc

    def _fail(self, step: str, verdict: Verdict, reply: Reply) -> None:
        """Record the deciding failure of ``reply``; keep an auth reply for the metadata lookup."""
        if status_of(verdict.reason) == "auth" and self.auth_reply is None:
            self.auth_reply = reply
        self.findings.fail(step, verdict, reply.status)

    def _headers(self, method: str | None = None, name: str | None = None) -> dict[str, str]:
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
        reply = await self._send(step, discover_request(self._id(), self.client_info), self._headers(step))
        self.findings.timings.discover_ms = reply.elapsed_ms
        self.findings.evidence.answered = True
        verdict = classify_reply(reply)
        if verdict is not None and verdict.reason in _NO_FALLBACK:
            self._fail(step, verdict, reply)
            raise _Stop
        result = reply.response.get("result") if reply.response else None
        if isinstance(result, dict) and reply.status // 100 == 2:
            versions = result.get("supportedVersions")
            if isinstance(versions, list) and MODERN_VERSION in versions:
                self._record_modern(result, reply)
                if not self.findings.light:
                    await self._list_tools(modern=True)
                    await self._refuse(modern=True)
                return True
        error = error_of(reply.response) or reply.error_body
        if error is not None and is_modern_error(error):
            supported = supported_versions(error)
            if supported and not (set(supported) & (MODERN_VERSIONS | HANDSHAKE_VERSIONS)):
                detail = clean_text(", ".join(supported), 200)
                self._fail(step, Verdict("unsupported_protocol_version", detail), reply)
                raise _Stop
            self.modern_hint = True
        elif error is not None and reply.status == 404 and error.get("code") == METHOD_NOT_FOUND:
            self.modern_hint = True  # 2026-07-28 answers unknown methods with 404 + -32601
        return False

    def _record_modern(self, result: JsonObject, reply: Reply) -> None:
        findings = self.findings
        findings.era, findings.transport = "modern", "streamable_http"
        findings.evidence.handshake = "server/discover"
        findings.protocol_version = MODERN_VERSION
        findings.http_status = reply.status
        findings.latency_ms = reply.elapsed_ms
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        findings.server = _server_info(info if isinstance(info, dict) else result.get("serverInfo"), findings)
        findings.capabilities = _capabilities(result.get("capabilities"), findings)
        findings.instructions = clean_text(result.get("instructions"), 1000)
        if reply.sse_unterminated:
            findings.warn("sse_event_unterminated")

    # --- legacy era -------------------------------------------------------------------------

    async def _legacy(self) -> None:
        step = "initialize"
        reply = await self._send(step, initialize_request(self._id(), self.client_info), self._headers())
        self.findings.timings.initialize_ms = reply.elapsed_ms
        self.findings.evidence.answered = True
        verdict = classify_reply(reply)
        if verdict is not None:
            if self._may_be_legacy_sse(reply) and await self._try_legacy_sse():
                return
            self._fail(step, self._handshake_verdict(verdict), reply)
            raise _Stop
        assert reply.response is not None
        error = error_of(reply.response)
        if error is not None:
            self._fail(step, self._handshake_verdict(classify_error(error)), reply)
            raise _Stop
        result = reply.response.get("result")
        if not isinstance(result, dict):
            self._fail(step, Verdict("invalid_result"), reply)
            raise _Stop
        self._record_legacy(result, reply)
        await self._initialized()
        if not self.findings.light:
            await self._list_tools(modern=False)
            await self._refuse(modern=False)

    def _may_be_legacy_sse(self, reply: Reply) -> bool:
        """MCP 2025-11-25 backward compatibility: POST failed with 400/404/405, body not a modern error."""
        if self.channel is not None or reply.status not in (400, 404, 405):
            return False
        error = error_of(reply.response) or reply.error_body
        return error is None or not is_modern_error(error)

    async def _try_legacy_sse(self) -> bool:
        """Open the event stream; ``True`` when the URL speaks HTTP+SSE (the SSE path decided the result)."""
        step = "sse/connect"
        self.findings.step(step)
        timeout = min(self.step_timeout_s, self.deadline - time.monotonic())
        if timeout <= 0:
            return False
        started = time.monotonic()
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
                except _Stop:
                    pass
                finally:
                    task_group.cancel_scope.cancel()
            return True
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await response.aclose()

    async def _sse_session(self, step: str, stream: EventStream, started: float, http_status: int) -> None:
        wait = min(ENDPOINT_WAIT_S, self.deadline - time.monotonic())
        found = await stream.wait(lambda: stream.endpoint is not None, wait)
        self.findings.timings.sse_connect_ms = round((time.monotonic() - started) * 1000, 1)
        if not found or stream.endpoint is None:
            timed_out = not stream.ended and wait < ENDPOINT_WAIT_S  # the probe's budget, not the 10 s, ran out
            self.findings.fail(step, Verdict("probe_deadline" if timed_out else "sse_endpoint_missing"), http_status)
            raise _Stop
        try:
            endpoint = resolve_endpoint(self.url, stream.endpoint)
            check_url(endpoint, allow_private=True)  # form only: length, characters, parsable
            cross_origin = not same_origin(endpoint, self.url)
        except (ValueError, TargetRefused):
            self.findings.fail(step, Verdict("sse_endpoint_invalid"), http_status)
            raise _Stop from None
        if cross_origin:
            parts = urlsplit(endpoint)
            detail = clean_text(f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}", 200)
            self.findings.fail(step, Verdict("sse_endpoint_cross_origin", detail), http_status)
            raise _Stop
        self.channel = SseChannel(self.exchanger, stream, endpoint)
        self.findings.era, self.findings.transport = "legacy", "sse"  # the transport is settled
        self.findings.http_status = http_status
        await self._legacy()

    def _handshake_verdict(self, verdict: Verdict) -> Verdict:
        if verdict.reason == "method_not_found" and self.modern_hint:
            return Verdict("modern_only", verdict.detail)
        return verdict

    def _record_legacy(self, result: JsonObject, reply: Reply) -> None:
        findings = self.findings
        findings.era, findings.transport = "legacy", "sse" if self.channel is not None else "streamable_http"
        findings.evidence.handshake = "initialize"
        version = result.get("protocolVersion")
        findings.protocol_version = clean_text(version, 64) or None
        if findings.protocol_version is None:
            findings.warn("protocol_version_missing")
        findings.http_status = reply.status
        findings.latency_ms = reply.elapsed_ms
        findings.server = _server_info(result.get("serverInfo"), findings)
        findings.capabilities = _capabilities(result.get("capabilities"), findings)
        findings.instructions = clean_text(result.get("instructions"), 1000)
        if reply.sse_unterminated:
            findings.warn("sse_event_unterminated")
        if isinstance(version, str) and _VERSION_TOKEN.fullmatch(version):
            self.negotiated_version = version
        if self.channel is not None:
            return  # HTTP+SSE sessions live in the endpoint URL; nothing to end with DELETE
        session_id = reply.headers.get("mcp-session-id")
        findings.session = SessionInfo(issued=session_id is not None)
        if session_id is not None:
            if _SESSION_ID.fullmatch(session_id):
                self.session_id = session_id
            else:
                findings.warn("session_id_invalid")

    async def _initialized(self) -> None:
        step = "notifications/initialized"
        reply = await self._send(step, initialized_notification(), self._headers(), expect=False)
        self.findings.timings.initialized_ms = reply.elapsed_ms
        if reply.status // 100 != 2:
            self.findings.warn("initialized_rejected")

    # --- tools --------------------------------------------------------------------------------

    async def _list_tools(self, *, modern: bool) -> None:
        step = "tools/list"
        tools = ToolsInfo()
        self.findings.tools = tools
        cursor: str | None = None
        seen: set[str] = set()
        started = time.monotonic()
        try:
            while tools.pages_read < self.max_pages:
                request = tools_list_request(
                    self._id(), cursor, modern_client_info=self.client_info if modern else None
                )
                reply = await self._send(step, request, self._headers(step if modern else None))
                verdict = classify_reply(reply)
                if verdict is not None and verdict.reason == "reply_too_large":
                    salvage_page(reply.partial, tools, self.findings)
                    tools.pages_read += 1
                    return
                if verdict is not None:
                    self._fail(step, verdict, reply)
                    return
                assert reply.response is not None
                error = error_of(reply.response)
                if error is not None:
                    code = error.get("code")
                    tools.error_code = code if isinstance(code, int) and not isinstance(code, bool) else None
                    self.findings.warn("tools_list_error")
                    self.findings.evidence.problem("error_answer")
                    return
                cursor = read_page(reply.response.get("result"), tools, self.findings)
                tools.pages_read += 1
                if cursor is None:
                    self.findings.evidence.list_complete = True
                    return
                if cursor in seen:
                    tools.cursor_repeated = True
                    self.findings.warn("cursor_repeated")
                    self.findings.evidence.problem("cursor_repeated")
                    return
                seen.add(cursor)
            tools.more_pages = True
        finally:
            self.findings.timings.tools_list_ms = round((time.monotonic() - started) * 1000, 1)

    async def _refuse(self, *, modern: bool) -> None:
        """The refusal call (:mod:`app.probe.refusal`); never records a failure."""
        reason = withheld(self.findings)
        if reason is not None:
            self.findings.evidence.refusal = Refusal(withheld=reason)
            return
        self.findings.step("tools/call")
        remaining = self.deadline - time.monotonic()
        timeout = min(self.refusal_timeout_s, remaining)
        if timeout <= 0:
            self.findings.evidence.refusal = Refusal(kind="timeout", budget_limited=True)
            return
        request = tools_call_request(
            self._id(), REFUSAL_TOOL, {}, modern_client_info=self.client_info if modern else None
        )
        headers = self._headers("tools/call", REFUSAL_TOOL) if modern else self._headers()
        started = time.monotonic()
        try:
            reply = await self._exchange(request, headers, timeout, expect=True)
            refusal = refusal_of(reply)
        except TimeoutError:
            refusal = Refusal(kind="timeout", budget_limited=timeout < self.refusal_timeout_s)
        except httpx2.HTTPError as exc:
            refusal = Refusal(kind="transport_error", detail=classify_exception(exc).reason)
        elapsed = round((time.monotonic() - started) * 1000, 1)
        refusal.elapsed_ms = elapsed
        self.findings.timings.tools_call_ms = elapsed
        self.findings.evidence.refusal = refusal

    # --- session end --------------------------------------------------------------------------

    async def end_session(self, timeout_s: float) -> None:
        """DELETE the session when one was issued (legacy era only); never changes the verdict."""
        if self.session_id is None or self.findings.session is None or timeout_s <= 0:
            return
        headers = self._headers()
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


def _server_info(info: Any, findings: Findings) -> ServerInfo | None:
    if not isinstance(info, dict):
        if info is not None:
            findings.warn("server_info_invalid")
        return None
    return ServerInfo(
        name=clean_text(info.get("name"), 128),
        version=clean_text(info.get("version"), 64),
        title=clean_text(info.get("title"), 128),
    )


def _capabilities(value: Any, findings: Findings) -> dict[str, Any] | None:
    cleaned = clean_json(value)
    if not isinstance(cleaned, dict):
        if value is not None:
            findings.warn("capabilities_invalid")
        return None
    return cleaned
