"""The check as an MCP tool: an ``mcp`` SDK server mounted at ``/mcp``.

Streamable HTTP in stateless mode with JSON responses (MCP 2026-07-28 ``server/discover``
and 2025-11-25 ``initialize`` clients alike; no ``Mcp-Session-Id`` is kept, so any
instance behind a load balancer answers any request).

Tools:

- ``check_mcp_server(url, baseline=None)`` runs :func:`app.checking.flow.run_check`, the same flow as
  ``POST /v1/mcp/check``. Payment follows the x402 MCP transport: an unpaid call is a tool
  error whose ``structuredContent`` is the x402 ``PaymentRequired`` document; the client
  calls again with the ``PaymentPayload`` in ``_meta["x402/payment"]``; a paid result
  carries the facilitator's ``SettleResponse`` in ``_meta["x402/payment-response"]``. The
  free-pool header on the HTTP request draws on the same pool as the HTTP route. Every
  refusal is a tool error (``isError``) whose ``structuredContent`` is the problem details
  object the HTTP route answers with (RFC 9457: ``type``, ``title``, ``status``, ``detail``,
  ``reason``) and nothing charged. Every result, answer or refusal, has the one shape of
  :mod:`app.http.mcp.results`, which each tool's output schema admits.
- ``badge_for_mcp_server(url)`` (free) returns the badge URLs and the Markdown to embed.
- the lookup tools (free, read only, never a probe): :mod:`app.http.mcp.lookup`.

Client rate limits are those of the HTTP route, keyed by the same client address.
DNS-rebinding protection of the SDK transport is off: the service is public and has no
ambient authority for a browser to borrow; CORS is set by the app.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from x402.schemas import ResourceInfo

from app import __version__, jsonsafe
from app.baselines.request import BaselineRequest
from app.checking.clients import rate_key
from app.checking.errors import ApiError, from_payment, shared_state_unavailable
from app.checking.flow import run_check
from app.checking.freepool import HEADER as FREE_POOL_HEADER
from app.checking.links import CheckAnswer, badge_query, in_words, status_badge_markdown
from app.checking.services import Services
from app.errors import TargetRefused
from app.guard import check_url
from app.http.bodies.check import is_json, read_body
from app.http.mcp.lookup import register_lookups
from app.http.mcp.results import ToolServer, answer, tool_error
from app.http.middleware.clientip import client_ip
from app.http.problems import problem_response
from app.http.routes.ops import asks_free_pool
from app.store import StoreError

PAYMENT_META = "x402/payment"
PAYMENT_RESPONSE_META = "x402/payment-response"
#: The x402 resource URL of the paid tool (x402 MCP transport convention).
CHECK_RESOURCE = "mcp://tool/check_mcp_server"
#: What a payment made for the tool pays for (one made for the HTTP route is refused here).
SOLD = ResourceInfo(url=CHECK_RESOURCE)

CHECK_DESCRIPTION = (
    "Live-checks one remote MCP server over Streamable HTTP (or legacy HTTP+SSE): handshake "
    "(server/discover, then initialize), tools/list, one tools/call of a made-up tool name to "
    "see how the server refuses it (no other tool is ever called), and session end. Returns a "
    "status class (ok, auth, not_found, client_error, server_error, redirect, not_mcp, timeout, "
    "tls, dns, unreachable) with server info, protocol version, capabilities, latency in ms, "
    "tools, auth and TLS facts, tool fingerprints, and one verdict per check (verified, failed, "
    "observed_risk, or unverified with a reason; the catalogue is at GET /v1/checks). Cost: "
    "USD {price} per check, paid with x402 (PaymentPayload in "
    '_meta["x402/payment"]; an unpaid call returns the PaymentRequired document as a tool '
    "error), or drawn from a daily free pool when the HTTP request carries the header "
    "{header}: 1. Limits: public https URLs on port 443 only; private, loopback and "
    "link-local addresses are refused; one check takes at most {timeout} seconds. A refused "
    'URL is not charged. Optional baseline: {{"run_id": <attestation_id of a stored run>}}, '
    '{{"schema_fingerprint": <hex>}} or {{"tools": [...]}}; the result then carries the diff from it '
    "and verdicts for toolset_unchanged_vs_baseline and schema_unchanged_vs_baseline."
)
BADGE_DESCRIPTION = (
    "Returns the URLs of the SVG, PNG and JSON status badges for one MCP server URL and the "
    "Markdown that embeds the SVG badge. Free. The URL is checked for form only; the badge "
    "itself probes the server when it is first fetched and caches the answer for 24 hours."
)


class BadgeLinks(BaseModel):
    """The badge URLs for one MCP server URL, and the Markdown that embeds the SVG badge."""

    url: str = Field(description="The MCP server URL, normalised.")
    svg: str = Field(description="SVG badge URL.")
    png: str = Field(description="PNG badge URL.")
    json_url: str = Field(alias="json", description="Badge state as JSON.")
    markdown: str = Field(description="Markdown embedding the SVG badge, linked to the server's page.")


def for_tool(exc: ApiError, price: str, free_pool_header: str) -> ApiError:
    """An HTTP route's payment answer in the MCP tool's terms (x402 MCP transport)."""
    if exc.body is None or "accepts" not in exc.body:
        return exc
    body = dict(exc.body)
    body["resource"] = dict(body.get("resource") or {}) | {"url": CHECK_RESOURCE}
    # The discovery extension describes the HTTP route's body; the tool has its input schema.
    extensions = {k: v for k, v in body.pop("extensions", {}).items() if k != "bazaar"}
    if extensions:
        body["extensions"] = extensions
    if exc.reason == "payment_required" and body.get("accepts"):
        body["message"] = (
            f'this check costs USD {price}: an x402 PaymentPayload in _meta["{PAYMENT_META}"] pays for it, '
            f"or the HTTP request header {free_pool_header}: 1 draws on the free pool"
        )
    return ApiError(exc.reason, body.get("message", exc.message), exc.status_code, body=body)


@contextlib.contextmanager
def _process_logging_untouched() -> Iterator[None]:
    """Keep the SDK's ``MCPServer()`` from configuring process logging.

    Its constructor calls ``logging.basicConfig(level=INFO)`` with a Rich handler, which takes
    over the root logger of whatever process builds the app (every INFO record of every
    library then goes through Rich, and the cached badge route ran ten times slower). With a
    handler already on the root logger ``basicConfig`` does nothing, so one is put there for
    the duration of the call.
    """
    placeholder = logging.NullHandler()
    root = logging.getLogger()
    added = not root.handlers
    if added:
        root.addHandler(placeholder)
    try:
        yield
    finally:
        if added:
            root.removeHandler(placeholder)


def _baseline(given: Any) -> BaselineRequest | None:
    """The tool's ``baseline`` argument, validated as the HTTP route's body member is."""
    if given is None:
        return None
    try:
        return BaselineRequest.model_validate(given)
    except ValidationError:
        message = "baseline is an object with exactly one of run_id, schema_fingerprint (64 hex each) or tools"
        raise ApiError("invalid_baseline", message, 422) from None


def build_mcp_server(services: Services) -> MCPServer:
    """The ``mcp`` SDK server with the check, the badge and the lookup tools, bound to ``services``."""
    settings = services.settings
    with _process_logging_untouched():
        server: MCPServer = ToolServer("mcp-sonde", version=__version__, base_url=settings.public_base_url)
    description = CHECK_DESCRIPTION.format(
        price=settings.price_usd, header=FREE_POOL_HEADER, timeout=int(settings.probe_timeout_s)
    )

    @server.tool(
        description=description,
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True, idempotent_hint=False),
    )
    async def check_mcp_server(
        url: str,
        ctx: Context,
        baseline: Annotated[
            Any,
            Field(description="What to compare the tool list with: exactly one of run_id, schema_fingerprint, tools."),
        ] = None,
    ) -> Annotated[CallToolResult, CheckAnswer]:
        request = ctx.request_context.request
        http = request if isinstance(request, Request) else None
        client = rate_key(client_ip(http, services.trusted_proxies) if http is not None else "unknown")
        meta = ctx.request_context.meta
        payment = meta.get(PAYMENT_META) if meta is not None else None
        try:
            await services.admit(client)
            if payment is not None and (not isinstance(payment, dict) or jsonsafe.has_lone_surrogate(payment)):
                raise from_payment(
                    services.payments.required(
                        "invalid_payment", f'_meta["{PAYMENT_META}"] must be an x402 PaymentPayload object', 400
                    )
                )
            served = await run_check(
                services,
                url,
                client=client,
                payment=payment,
                free=http is not None and asks_free_pool(http.headers, settings),
                baseline=_baseline(baseline),
                resource=SOLD,
            )
        except ApiError as exc:
            return tool_error(for_tool(exc, settings.price_usd, FREE_POOL_HEADER), settings.public_base_url)
        except StoreError:  # (Redis does not answer: refused before anything was charged)
            return tool_error(shared_state_unavailable(), settings.public_base_url)
        answer = jsonsafe.loads(served.payload)
        words = in_words(answer, settings.public_base_url) if isinstance(answer, dict) else ""
        result = CallToolResult(
            content=[TextContent(type="text", text=served.payload.decode()), TextContent(type="text", text=words)],
            structured_content=answer,
        )
        if served.receipt is not None:
            result.meta = {PAYMENT_RESPONSE_META: served.receipt.model_dump(mode="json", by_alias=True)}
        return result

    @server.tool(description=BADGE_DESCRIPTION, annotations=ToolAnnotations(read_only_hint=True))
    async def badge_for_mcp_server(url: str) -> Annotated[CallToolResult, BadgeLinks]:
        try:
            target = check_url(url, allow_private=settings.allow_private)
        except TargetRefused as exc:
            return tool_error(ApiError(exc.reason, exc.message, 422), settings.public_base_url)
        links = badge_links(settings.public_base_url, target.url)
        return answer(links.model_dump(by_alias=True), TextContent(type="text", text=links.markdown))

    register_lookups(server, services)
    return server


def badge_links(base: str, url: str) -> BadgeLinks:
    """The badge URLs of ``url`` on the service at ``base`` (no trailing slash)."""
    query = badge_query(url)
    svg, png, state = f"{base}/badge/mcp{query}", f"{base}/badge/mcp.png{query}", f"{base}/badge/mcp.json{query}"
    return BadgeLinks(url=url, svg=svg, png=png, json=state, markdown=status_badge_markdown(base, url))


#: Largest ``/mcp`` request body: a tool call with a payment is about 2 kB.
MCP_MAX_BODY_BYTES = 64 * 1024


#: A message nested deeper than :data:`app.jsonsafe.MAX_DEPTH` levels: JSON-RPC's parse error.
TOO_DEEP = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32700, "message": f"Parse error: nested deeper than {jsonsafe.MAX_DEPTH} levels"},
}


class BoundedBody:
    """ASGI wrapper: reads the whole body (at most ``max_bytes``, within ``timeout_s`` seconds)
    before the SDK transport sees it, so a huge or trickling body, or a client that leaves
    mid-body, gets our JSON error (413, 408, 400) instead of holding memory or a connection.
    A body not sent as ``application/json`` gets 415 ``unsupported_media_type``, as on the check
    route (the SDK would answer a bare 400 with no Content-Type); one nested deeper than
    :data:`app.jsonsafe.MAX_DEPTH` levels gets JSON-RPC's parse error (-32700), as the SDK
    answers JSON it cannot parse."""

    def __init__(self, app: ASGIApp, max_bytes: int, timeout_s: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            if not is_json(request.headers.get("content-type", "")):
                raise ApiError("unsupported_media_type", "send the body as application/json")
            body = await read_body(request, self.max_bytes, self.timeout_s)
        except ApiError as exc:
            await problem_response(scope, exc.reason, exc.message, exc.status_code)(scope, receive, send)
            return
        if jsonsafe.too_deep(body):  # (the SDK's parser would recurse once per level: refused first)
            await JSONResponse(TOO_DEEP, status_code=400)(scope, receive, send)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def mcp_route(server: MCPServer, body_timeout_s: float) -> tuple[Route, Starlette]:
    """The ``/mcp`` route of ``server`` (POST only: a stateless server has no stream to offer
    on GET and no session to end on DELETE) and the SDK app, whose session manager must run in
    the app's lifespan."""
    sdk_app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        max_request_body_size=MCP_MAX_BODY_BYTES,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    sdk_route = next(r for r in sdk_app.routes if isinstance(r, Route) and r.path == "/mcp")
    endpoint = BoundedBody(sdk_route.app, MCP_MAX_BODY_BYTES, body_timeout_s)
    return Route("/mcp", endpoint, methods=["POST"]), sdk_app
