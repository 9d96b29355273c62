"""The lookup tools at /mcp, called by the ``mcp`` SDK client in both protocol eras: listed with
output schemas and descriptive text, answering from what is stored (no server contacted),
refusing with problem documents, under the lookup rate limit."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client

from app.checking.services import open_history
from app.db import migrate
from app.history.records import server_id_of
from tests.conftest import Service
from tests.directory.seed import TRAVEL, entry, server_run, tools
from tests.http.mcp.test_tool import LOOKUPS, call, tool_reason
from tests.servers.raw import RawServer

FLY = "https://fly.example.com/mcp"


def seed(data_dir: Path) -> str:
    """Two runs of one server (a tool list change between), its registry entry; its latest attestation id."""

    async def write() -> str:
        url = f"sqlite+aiosqlite:///{data_dir / 'history.sqlite3'}"
        await migrate.upgrade(url)
        store = open_history(url)
        try:
            await store.record(server_run(2, "fly.example.com", tools=TRAVEL))
            latest = server_run(1, "fly.example.com", tools=TRAVEL + tools("rent_car"))
            await store.record(latest)
            await entry(store, "io.example/fly", "fly.example.com", title="Fly", description="Flights")
            return latest.attestation_id
        finally:
            await store.aclose()

    return asyncio.run(write())


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_lookups_are_listed_read_only_with_output_schemas(service: Service, mode: str) -> None:
    async def listed(base: str) -> Any:
        async with Client(f"{base}/mcp", mode=mode) as client:
            return (await client.list_tools()).tools

    with service() as base:
        found = {tool.name: tool for tool in anyio.run(listed, base)}
    for name in LOOKUPS:
        tool = found[name]
        text = tool.description or ""
        assert "Free and read only" in text and "contacts no MCP server" in text, name
        assert not any(word in text.lower() for word in ("you must", "always ", "ignore ", "do not")), name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True, name
        assert tool.annotations.open_world_hint is False


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_each_lookup_answers_from_the_store(service: Service, raw: RawServer, tmp_path: Path, mode: str) -> None:
    attestation = seed(tmp_path)
    calls: dict[str, dict[str, Any]] = {
        "search_mcp_servers": {"query": "rent_car", "category": "travel"},
        "get_mcp_server_report": {"url": FLY},
        "get_mcp_server_history": {"server_id": server_id_of(FLY), "days": 7},
        "get_attestation": {"attestation_id": attestation},
    }

    async def listed_and_called(base: str) -> tuple[dict[str, Any], dict[str, Any]]:
        async with Client(f"{base}/mcp", mode=mode) as client:
            schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        answers = {name: await call(base, name, arguments, mode=mode) for name, arguments in calls.items()}
        unknown = await call(base, "get_mcp_server_report", {"url": raw.url("/mcp")}, mode=mode)
        assert tool_reason(unknown) == "server_not_found"  # looked up, never probed
        return schemas, answers

    with service(data_dir=tmp_path) as base:
        schemas, answers = anyio.run(listed_and_called, base)
    for name, result in answers.items():
        assert not result.is_error, (name, result.structured_content)
        assert json.loads(result.content[0].text) == result.structured_content
        jsonschema.validate(result.structured_content, schemas[name])
    search = answers["search_mcp_servers"].structured_content or {}
    assert [s["url"] for s in search["servers"]] == [FLY] and search["servers"][0]["category_source"] == "tool_names"
    report = answers["get_mcp_server_report"].structured_content or {}
    assert report["registry"]["name"] == "io.example/fly" and report["changes"][0]["counts"]["added"] == 1
    assert report["latest"]["attestation_url"].endswith(attestation)
    history = answers["get_mcp_server_history"].structured_content or {}
    assert history["runs"] == 2 and history["server_id"] == server_id_of(FLY)
    signed = answers["get_attestation"].structured_content or {}
    assert signed["id"] == attestation and signed["keys_url"].endswith("/.well-known/mcp-sonde-keys.json")
    assert raw.seen == []  # (no server was contacted: the server looked up by URL heard nothing)


@pytest.mark.parametrize(
    ("name", "arguments", "reason"),
    [
        ("search_mcp_servers", {"sort": "popularity"}, "invalid_sort"),
        ("search_mcp_servers", {"cursor": "x.y"}, "invalid_cursor"),
        ("search_mcp_servers", {"cursor": ""}, "invalid_cursor"),
        ("get_mcp_server_report", {}, "invalid_body"),
        ("get_mcp_server_report", {"server_id": "0" * 24}, "server_not_found"),
        ("get_mcp_server_history", {"url": "https://169.254.169.254/x"}, "host_ip_literal"),
        ("get_attestation", {"attestation_id": "f" * 64}, "attestation_not_found"),
    ],
)
def test_refusals_are_problem_documents(service: Service, name: str, arguments: dict[str, Any], reason: str) -> None:
    with service(allow_private=False) as base:
        result = anyio.run(lambda: call(base, name, arguments))
    assert tool_reason(result) == reason


def test_lookups_share_the_lookup_budget(service: Service) -> None:
    with service(lookup_rate_limit="3/minute") as base:
        first = httpx2.get(f"{base}/v1/servers", timeout=10)
        results = [anyio.run(lambda: call(base, "search_mcp_servers", {})) for _ in range(3)]
    assert first.status_code == 200
    assert [r.is_error for r in results] == [False, False, True] and tool_reason(results[-1]) == "rate_limited"
    assert (results[-1].structured_content or {})["retryAfter"] >= 1
