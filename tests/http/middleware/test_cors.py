"""CORS: any page may read badges and pay for checks; only configured origins may spend the free pool."""

from __future__ import annotations

import anyio
import httpx2
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Service, reason_of
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

EVIL = "https://evil.example"
FRIEND = "https://directory.example"


def preflight(base: str, origin: str, headers: str) -> httpx2.Response:
    return httpx2.options(
        f"{base}/v1/mcp/check",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": headers,
        },
    )


def test_preflight_allows_the_free_pool_header_only_for_configured_origins(service: Service) -> None:
    with service(free_pool_origins=[FRIEND]) as base:
        evil_free = preflight(base, EVIL, "content-type, x-free-pool")
        evil_paid = preflight(base, EVIL, "content-type, payment-signature")
        friend_free = preflight(base, FRIEND, "content-type, x-free-pool")
    assert evil_free.status_code == 400
    assert "x-free-pool" not in evil_free.headers.get("access-control-allow-headers", "").lower()
    assert evil_paid.status_code == 200 and evil_paid.headers["access-control-allow-origin"] == "*"
    assert friend_free.status_code == 200
    assert "x-free-pool" in friend_free.headers["access-control-allow-headers"].lower()
    assert "origin" in friend_free.headers["vary"].lower()
    assert "access-control-allow-credentials" not in friend_free.headers


def test_a_page_on_another_origin_cannot_spend_its_visitors_free_pool(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    body = {"url": raw.url("/mcp")}
    free = {"X-Free-Pool": "1"}
    with service(free_pool_per_ip=3, free_pool_origins=[FRIEND], public_url="https://sonde.example") as base:
        refused = httpx2.post(f"{base}/v1/mcp/check", json=body, headers=free | {"Origin": EVIL})
        friend = httpx2.post(f"{base}/v1/mcp/check", json=body, headers=free | {"Origin": FRIEND})
        own = httpx2.post(f"{base}/v1/mcp/check", json=body, headers=free | {"Origin": "https://sonde.example"})
        direct = httpx2.post(f"{base}/v1/mcp/check", json=body, headers=free)
    assert (refused.status_code, reason_of(refused)) == (403, "free_pool_origin_refused")
    assert refused.headers["access-control-allow-origin"] == "*"  # the page can read why
    assert [r.status_code for r in (friend, own, direct)] == [200, 200, 200]
    # The refusal drew nothing: three draws of a share of three.
    assert direct.headers["x-free-pool-remaining"] == "0"


def test_the_mcp_tool_refuses_free_draws_for_pages_on_other_origins(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()

    async def call(base: str) -> object:
        headers = {"X-Free-Pool": "1", "Origin": EVIL}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
        ):
            return await client.call_tool("check_mcp_server", {"url": raw.url("/mcp")})

    with service() as base:
        result = anyio.run(call, base)
    assert result.is_error  # type: ignore[attr-defined]
    assert result.structured_content["reason"] == "free_pool_origin_refused"  # type: ignore[attr-defined]
