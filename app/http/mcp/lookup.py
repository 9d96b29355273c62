"""The lookup tools at ``/mcp``: what an agent asks before it connects to a server.

- ``search_mcp_servers``: the directory search of ``GET /v1/servers`` (same parameters and
  refusals, :mod:`app.directory.query`);
- ``get_mcp_server_report``: ``GET /v1/servers/{server_id}``'s document (by id or by URL);
- ``get_mcp_server_history``: ``GET /v1/servers/{server_id}/history``'s document;
- ``get_attestation``: ``GET /v1/attestations/{id}``'s document (the DSSE envelope) and where
  the key document that verifies it is.

They are free and read only: each reads what is stored here and never contacts the server
looked up nor any other. Each call counts against the client's lookup budget
(``lookup_rate_limit``, the limiter family of the check route, keyed by the same client
address); a refusal is a tool error whose ``structuredContent`` is the problem details object
the HTTP route answers with (RFC 9457). Every tool declares an output schema (MCP 2025-06-18
and later, "Structured Content") that admits its answer and its refusals alike
(:mod:`app.http.mcp.results`).
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field
from starlette.requests import Request

from app import jsonsafe
from app.checking.clients import rate_key
from app.checking.errors import ApiError
from app.checking.services import Services
from app.errors import TargetRefused
from app.guard import check_url
from app.history.records import server_id_of
from app.http.mcp.results import answer, tool_error
from app.http.middleware.clientip import client_ip
from app.http.routes.attestations import envelope_of
from app.http.routes.directory import page_json, read_page, search_of
from app.http.routes.paths import SERVER_ID
from app.http.routes.servers import history_document, summary_document

_READ_ONLY = "Free and read only: it reads what mcp-sonde has stored and contacts no MCP server."
SEARCH_DESCRIPTION = (
    "Searches the directory of MCP servers mcp-sonde has checked. query matches every word in a "
    "server's URL, registry name, title, description and tool names; filters: category (from tool "
    "names), status (latest status class), protocol_version, transport (streamable_http, sse), auth "
    "(gated, open), changed_within (e.g. 7d: the tool list changed that recently). Sorted by name, "
    "last_checked or uptime; at most 100 a page, next_cursor continues. " + _READ_ONLY
)
REPORT_DESCRIPTION = (
    "Returns what mcp-sonde knows of one MCP server, by server_id or url: the latest status and the "
    "link to its signed result, uptime rates over 7, 30 and 90 days, the category, the last tool-list "
    "changes, who speaks for it (owner claim, registry publishers and how each namespace is verified) and the "
    "uptime badge. " + _READ_ONLY
)
HISTORY_DESCRIPTION = (
    "Returns one MCP server's history over the last days (1 to 90), by server_id or url: each day's "
    "state (up, down, left_out), uptime rates, latency percentiles and status changes. " + _READ_ONLY
)
ATTESTATION_DESCRIPTION = (
    "Returns one signed check result by its attestation_id: the DSSE envelope of an in-toto Statement "
    "(Ed25519), and the URL of the key document that verifies it. " + _READ_ONLY
)


class SearchResult(BaseModel):
    """A page of the directory."""

    servers: list[dict[str, Any]] = Field(description="The servers of the page (as GET /v1/servers lists them).")
    sort: str = Field(description="name, last_checked or uptime.")
    limit: int = Field(description="Most servers a page holds.")
    next_cursor: str | None = Field(description="The cursor of the next page; null on the last page.")


class ServerReport(BaseModel):
    """One server as GET /v1/servers/{server_id} answers it."""

    server_id: str
    url: str
    first_seen: str
    last_seen: str
    latest: dict[str, Any] = Field(description="The latest run: status, reason, attestation_id and attestation_url.")
    uptime: dict[str, Any] = Field(description="Rates over 7d, 30d and 90d.")
    badge: dict[str, Any]
    tool_count: int | None
    category: str | None
    category_source: str | None = Field(description="tool_names when a category is given.")
    changes: list[dict[str, Any]] = Field(description="The newest tool-list changes.")
    identity: dict[str, Any] | None = Field(
        description="Who speaks for the server: name, title, description, named_by (owner, registry or null), "
        "publishers (registry publishers listing it) and claimed (the owner's last verified claim, or null)."
    )
    registry: dict[str, Any] | None = Field(description="The registry entry that names the server, or null.")
    registry_entries: list[dict[str, Any]] = Field(
        description="Every publisher's registry entry that lists the server (probed remotes only), each with its "
        "namespace verification."
    )


class ServerHistory(BaseModel):
    """One server's days as GET /v1/servers/{server_id}/history answers them."""

    server_id: str
    days: list[dict[str, Any]]
    uptime: dict[str, Any]
    latency: dict[str, Any]
    status_changes: list[dict[str, Any]]
    runs: int


class Attestation(BaseModel):
    """A signed check result."""

    id: str = Field(description="The attestation id.")
    envelope: dict[str, Any] = Field(description="The DSSE envelope (payloadType, payload, signatures).")
    keys_url: str = Field(description="The key document with the public keys that verify the signature.")


def server_id_from(services: Services, server_id: str | None, url: str | None) -> str:
    """The server id a call names, by ``server_id`` or by ``url`` (checked for form only).

    Raises:
        ApiError: 422 ``invalid_body`` for neither or both, 404 ``server_not_found`` for a
            malformed id, a guard reason for a refused URL.
    """
    if (server_id is None) == (url is None):
        raise ApiError("invalid_body", "give exactly one of server_id or url", 422)
    if url is not None:
        try:
            return server_id_of(check_url(url, allow_private=services.settings.allow_private).url)
        except TargetRefused as exc:
            raise ApiError(exc.reason, exc.message, 422) from None
    assert server_id is not None
    if not SERVER_ID.fullmatch(server_id):
        raise ApiError("server_not_found", "a server id is 24 lower-case hex characters (SHA-256 of its URL)")
    return server_id


def register_lookups(server: MCPServer, services: Services) -> None:
    """Add the four lookup tools to ``server`` (see the module docs)."""
    base = services.settings.public_base_url
    annotations = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

    async def admitted(ctx: Context) -> None:
        request = ctx.request_context.request
        http = request if isinstance(request, Request) else None
        client = rate_key(client_ip(http, services.trusted_proxies) if http is not None else "unknown")
        await services.admit(client, services.lookup_limiter)

    @server.tool(description=SEARCH_DESCRIPTION, annotations=annotations)
    async def search_mcp_servers(
        ctx: Context,
        query: Annotated[str, Field(description="Words to find (at most 8 words, 200 characters).")] = "",
        category: str | None = None,
        status: str | None = None,
        protocol_version: str | None = None,
        transport: str | None = None,
        auth: str | None = None,
        changed_within: Annotated[str | None, Field(description="<days>d, 1d to 365d.")] = None,
        sort: Annotated[str, Field(description="name, last_checked or uptime.")] = "name",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        cursor: str | None = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        given = {"q": query, "category": category, "status": status, "protocol_version": protocol_version,
                 "transport": transport, "auth": auth, "changed_within": changed_within, "sort": sort,
                 "limit": str(limit), "cursor": cursor}  # fmt: skip
        params = {name: value for name, value in given.items() if value or (name == "cursor" and value is not None)}
        try:
            await admitted(ctx)
            search = search_of(params, list(params), services.settings)
            document = page_json(await read_page(services, search), search, base)
        except ApiError as exc:
            return tool_error(exc, base)
        return answer(document)

    @server.tool(description=REPORT_DESCRIPTION, annotations=annotations)
    async def get_mcp_server_report(
        ctx: Context, server_id: str | None = None, url: str | None = None
    ) -> Annotated[CallToolResult, ServerReport]:
        try:
            await admitted(ctx)
            document = await summary_document(services, server_id_from(services, server_id, url))
        except ApiError as exc:
            return tool_error(exc, base)
        return answer(document)

    @server.tool(description=HISTORY_DESCRIPTION, annotations=annotations)
    async def get_mcp_server_history(
        ctx: Context,
        server_id: str | None = None,
        url: str | None = None,
        days: Annotated[int, Field(ge=1, le=90, description="The window, UTC days ending today.")] = 30,
    ) -> Annotated[CallToolResult, ServerHistory]:
        try:
            await admitted(ctx)
            document = await history_document(services, server_id_from(services, server_id, url), days)
        except ApiError as exc:
            return tool_error(exc, base)
        return answer(document)

    @server.tool(description=ATTESTATION_DESCRIPTION, annotations=annotations)
    async def get_attestation(ctx: Context, attestation_id: str) -> Annotated[CallToolResult, Attestation]:
        try:
            await admitted(ctx)
            envelope = await envelope_of(services, attestation_id)
            if envelope is None:
                raise ApiError("attestation_not_found", "no signed result with this id is kept here")
        except ApiError as exc:
            return tool_error(exc, base)
        document = {"id": attestation_id, "envelope": jsonsafe.loads(envelope),
                    "keys_url": f"{base}/.well-known/mcp-sonde-keys.json"}  # fmt: skip
        return answer(document)
