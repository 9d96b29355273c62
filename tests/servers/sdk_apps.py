"""Real MCP servers built with the official ``mcp`` SDK, mounted side by side in one ASGI app.

Mount points (each endpoint is ``<prefix>/mcp``):

- ``/stateful-sse``: sessions, SSE replies (the SDK default).
- ``/stateful-json``: sessions, JSON replies.
- ``/stateless-json``: no sessions, JSON replies.
- ``/stateless-sse``: no sessions, SSE replies.
- ``/paged``: low-level server listing 12 tools in pages of 4 (three pages, ``nextCursor``).
- ``/modern-only``: answers only 2026-07-28 requests; ``initialize`` gets 404 + -32601.
- ``/initialize-only``, ``/initialize-only-json``, ``/initialize-only-stateless``: answer
  ``server/discover`` like a 2025-era TS server (400 "Server not initialized"), so only
  ``initialize`` works (sessions + SSE, sessions + JSON, no sessions + JSON).
- ``/resumable``: ``initialize`` only (as above), sessions, SSE replies and an event store
  (retry 50 ms); ``tools/list`` closes its stream after the priming event and answers a moment
  later, so the answer arrives only on the stream resumed with ``GET`` and ``Last-Event-ID``
  (MCP 2025-11-25 resumability).
- ``/legacy-sse``: the legacy HTTP+SSE transport (2024-11-05): GET ``/legacy-sse/sse``, POST
  ``/legacy-sse/messages/?session_id=...``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tests.servers.event_store import MemoryEventStore

SECURITY = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def tool_server(name: str) -> MCPServer:
    """An MCPServer with three tools (``add``, ``echo``, ``now``)."""
    server = MCPServer(name, version="1.2.3", title="Probe Fixture")

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    @server.tool()
    def now() -> str:
        """A fixed time."""
        return "2026-01-01T00:00:00Z"

    return server


PAGE_SIZE = 4
PAGED_TOOLS = [f"tool_{i:02d}" for i in range(12)]


def paged_server() -> Server[Any]:
    """A low-level server listing :data:`PAGED_TOOLS` in pages of :data:`PAGE_SIZE`."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = PAGED_TOOLS[start : start + PAGE_SIZE]
        tools = [types.Tool(name=n, input_schema={"type": "object"}) for n in page]
        more = start + PAGE_SIZE < len(PAGED_TOOLS)
        return types.ListToolsResult(tools=tools, next_cursor=str(start + PAGE_SIZE) if more else None)

    return Server("paged-fixture", version="0.0.1", on_list_tools=list_tools)


#: The event store behind ``/resumable`` (its ``replays`` count the resumed streams).
RESUMABLE_EVENTS = MemoryEventStore()


def resumable_server() -> Server[Any]:
    """A low-level server whose ``tools/list`` closes its event stream before answering."""

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
            await anyio.sleep(0.2)  # the answer comes after the close, to the resumed stream
        return types.ListToolsResult(tools=[types.Tool(name="resumed", input_schema={"type": "object"})])

    return Server("resumable-fixture", version="0.0.1", on_list_tools=list_tools)


async def _read_body(receive: Receive) -> tuple[bytes, list[Message]]:
    body = b""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] == "http.request":
            body += message.get("body", b"")
            if not message.get("more_body", False):
                return body, messages
        else:
            return body, messages


async def _send_json(send: Send, status: int, payload: dict[str, Any]) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def method_filter(app: ASGIApp, refuse: Callable[[str | None, dict[str, str]], Awaitable[bool]], reply: Any) -> ASGIApp:
    """Wrap ``app``: POSTs whose JSON-RPC method ``refuse`` picks get ``reply`` (status, payload) instead."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body, messages = await _read_body(receive)
        try:
            method = json.loads(body).get("method")
        except (ValueError, AttributeError):
            method = None
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if await refuse(method, headers):
            status, payload = reply
            await _send_json(send, status, payload)
            return
        replay = iter(messages)

        async def again() -> Message:
            message = next(replay, None)
            return message if message is not None else await receive()

        await app(scope, again, send)

    return wrapped


async def _is_initialize(method: str | None, headers: dict[str, str]) -> bool:
    return method == "initialize"


async def _is_discover(method: str | None, headers: dict[str, str]) -> bool:
    return method == "server/discover"


NOT_FOUND = (404, {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}})
NOT_INITIALIZED = (
    400,
    {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}},
)


def build_app() -> Starlette:
    """The combined app; its lifespan runs every session manager."""
    servers: dict[str, tuple[Any, dict[str, Any]]] = {
        "stateful-sse": (tool_server("stateful-sse"), {"stateless_http": False, "json_response": False}),
        "stateful-json": (tool_server("stateful-json"), {"stateless_http": False, "json_response": True}),
        "stateless-json": (tool_server("stateless-json"), {"stateless_http": True, "json_response": True}),
        "stateless-sse": (tool_server("stateless-sse"), {"stateless_http": True, "json_response": False}),
        "paged": (paged_server(), {"stateless_http": False, "json_response": True}),
        "resumable": (
            resumable_server(),
            {"stateless_http": False, "json_response": False, "event_store": RESUMABLE_EVENTS, "retry_interval": 50},
        ),
        "modern-only": (tool_server("modern-only"), {"stateless_http": True, "json_response": True}),
        "initialize-only": (tool_server("initialize-only"), {"stateless_http": False, "json_response": False}),
        "initialize-only-json": (tool_server("initialize-only-json"), {"stateless_http": False, "json_response": True}),
        "initialize-only-stateless": (
            tool_server("initialize-only-stateless"),
            {"stateless_http": True, "json_response": True},
        ),
    }
    routes = []
    for prefix, (server, options) in servers.items():
        app: ASGIApp = server.streamable_http_app(transport_security=SECURITY, **options)
        if prefix == "modern-only":
            app = method_filter(app, _is_initialize, NOT_FOUND)
        if prefix.startswith("initialize-only") or prefix == "resumable":  # (resumability is a 2025-era feature)
            app = method_filter(app, _is_discover, NOT_INITIALIZED)
        routes.append(Mount(f"/{prefix}", app=app))
    legacy_sse = tool_server("legacy-sse")
    routes.append(Mount("/legacy-sse", app=legacy_sse.sse_app(transport_security=SECURITY)))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for server, _options in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    return Starlette(routes=routes, lifespan=lifespan)
