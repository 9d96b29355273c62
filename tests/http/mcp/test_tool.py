"""The MCP tool at /mcp: listed and called by the ``mcp`` SDK client, checked by our own probe."""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from typing import Any, cast

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, RequestParamsMeta

from app.history.records import server_id_of
from app.probe import probe
from app.settings import Settings
from tests.conftest import Service
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

LOOKUPS = ["search_mcp_servers", "get_mcp_server_report", "get_mcp_server_history", "get_attestation"]


async def call(
    base: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    mode: str = "auto",
    headers: Mapping[str, str] | None = None,
    meta: dict[str, Any] | None = None,
) -> CallToolResult:
    """One tool call through the SDK client (``mode`` ``legacy`` speaks 2025-11-25 ``initialize``)."""
    async with (
        httpx2.AsyncClient(headers=dict(headers or {}), timeout=30) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as client,
    ):
        return await client.call_tool(tool, arguments, meta=cast("RequestParamsMeta | None", meta))


def tool_reason(result: CallToolResult) -> str:
    assert result.is_error
    document = result.structured_content
    assert isinstance(document, dict)
    reason = document["error"] if "x402Version" in document else document["reason"]
    assert json.loads(result.content[0].text) == document  # type: ignore[union-attr]
    return str(reason)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_both_tools_are_listed_with_schemas(service: Service, mode: str) -> None:
    async def listed(base: str) -> Any:
        async with Client(f"{base}/mcp", mode=mode) as client:
            return (await client.list_tools()).tools

    with service() as base:
        tools = {tool.name: tool for tool in anyio.run(listed, base)}
    assert set(tools) == {"check_mcp_server", "badge_for_mcp_server", *LOOKUPS}
    check = tools["check_mcp_server"]
    assert check.input_schema["required"] == ["url"]
    assert check.output_schema is not None and check.output_schema["type"] == "object"
    document, *refusals = check.output_schema["anyOf"]  # the answer, then the refusals it admits
    assert "status" in document["properties"]
    assert refusals == [{"$ref": "#/$defs/RefusalProblem"}, {"$ref": "#/$defs/RefusalPaymentRequired"}]
    for tool in tools.values():
        assert tool.output_schema is not None and len(tool.output_schema["anyOf"]) == 3
    assert "USD 0.005" in (check.description or "") and "X-Free-Pool: 1" in (check.description or "")
    assert "Free." in (tools["badge_for_mcp_server"].description or "")
    for tool in tools.values():  # descriptions describe; they give the reading agent no orders
        text = (tool.description or "").lower()
        assert not any(word in text for word in ("you must", "always ", "never ", "ignore ", "do not"))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_free_pool_check_through_the_tool(service: Service, raw: RawServer, mode: str) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(free_pool_size=5, free_pool_per_ip=5) as base:
        result = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp")}, mode=mode, headers={"X-Free-Pool": "1"})
        )
        left = httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers={"X-Free-Pool": "1"})
    assert not result.is_error, result.structured_content
    document = result.structured_content
    assert isinstance(document, dict)
    assert document["status"] == "ok" and document["server"]["name"] == "mini"
    assert json.loads(result.content[0].text) == document  # type: ignore[union-attr]
    assert result.meta is None or "x402/payment-response" not in result.meta
    # the same pool as the HTTP route: one draw by the tool, one by the route
    assert left.headers["x-free-pool-remaining"] == "3"


def test_unpaid_call_is_a_tool_error_with_the_payment_required_document(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(pay_to="0x" + "1" * 40) as base:
        result = anyio.run(lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp")}))
    with service() as base:  # no payTo: nothing to pay with, and the message says so
        off = anyio.run(lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp")}))
    assert tool_reason(off) == "payment_required"
    assert isinstance(off.structured_content, dict) and off.structured_content["accepts"] == []
    assert "not configured" in off.structured_content["message"]
    assert tool_reason(result) == "payment_required"
    document = result.structured_content
    assert isinstance(document, dict)
    assert document["x402Version"] == 2 and document["resource"]["url"] == "mcp://tool/check_mcp_server"
    assert "x402/payment" in document["message"] and "PAYMENT-SIGNATURE" not in document["message"]
    assert not raw.seen  # nothing probed


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("https://169.254.169.254/latest/meta-data/", "host_ip_literal"),
        ("http://example.com/mcp", "scheme_not_https"),
        ("https://user:pw@example.com/mcp", "userinfo_present"),
        ("https://localhost/mcp", "host_not_public_name"),
    ],
)
def test_refused_url_is_a_tool_error_on_both_tools(service: Service, raw: RawServer, url: str, reason: str) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(allow_private=False, free_pool_size=5, free_pool_per_ip=5) as base:
        result = anyio.run(lambda: call(base, "check_mcp_server", {"url": url}, headers={"X-Free-Pool": "1"}))
        badge = anyio.run(lambda: call(base, "badge_for_mcp_server", {"url": url}))
        unpaid = anyio.run(lambda: call(base, "check_mcp_server", {"url": url}))
    assert tool_reason(result) == reason
    assert tool_reason(badge) == reason
    assert tool_reason(unpaid) == reason  # refused before any payment is asked for


def test_refused_url_draws_nothing_from_the_pool(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(free_pool_size=5, free_pool_per_ip=5) as base:
        for _ in range(3):
            refused = anyio.run(
                lambda: call(base, "check_mcp_server", {"url": "ftp://x/"}, headers={"X-Free-Pool": "1"})
            )
            assert tool_reason(refused) == "scheme_not_https"
        served = httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers={"X-Free-Pool": "1"})
    assert served.status_code == 200 and served.headers["x-free-pool-remaining"] == "4"


def test_badge_tool_gives_urls_and_markdown(service: Service) -> None:
    with service(public_url="https://sonde.example.org/") as base:
        result = anyio.run(lambda: call(base, "badge_for_mcp_server", {"url": "HTTPS://Mcp.Example.com:443/mcp?x=1"}))
    assert not result.is_error
    quoted = "https%3A%2F%2Fmcp.example.com%2Fmcp%3Fx%3D1"
    page = "https://sonde.example.org/servers/" + server_id_of("https://mcp.example.com/mcp")
    assert result.structured_content == {
        "url": "https://mcp.example.com/mcp?x=1",
        "svg": f"https://sonde.example.org/badge/mcp?url={quoted}",
        "png": f"https://sonde.example.org/badge/mcp.png?url={quoted}",
        "json": f"https://sonde.example.org/badge/mcp.json?url={quoted}",
        "markdown": f"[![MCP status](https://sonde.example.org/badge/mcp?url={quoted})]"
        f"({page})",  # the image leads to the server's page, never to a JSON document
    }


def test_our_probe_reports_our_mcp_endpoint_ok_with_both_tools(service: Service) -> None:
    with service() as base:
        result = anyio.run(lambda: probe(f"{base}/mcp", settings=Settings(allow_private=True)))
    assert result.status == "ok", result.reason
    assert result.server is not None and result.server.name == "mcp-sonde"
    assert result.tools is not None and result.tools.names == ["check_mcp_server", "badge_for_mcp_server", *LOOKUPS]


def test_payment_meta_that_is_not_an_object(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(pay_to="0x" + "1" * 40) as base:
        result = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp")}, meta={"x402/payment": "not-a-payload"})
        )
    assert tool_reason(result) == "invalid_payment"
    assert not raw.seen


def test_the_tool_compares_with_a_baseline_and_refuses_a_malformed_one(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta"])
    free = {"X-Free-Pool": "1"}
    baseline = {"tools": [{"name": "alpha", "inputSchema": {"type": "object"}}]}
    with service(free_pool_size=5, free_pool_per_ip=5) as base:
        result = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp"), "baseline": baseline}, headers=free)
        )
        bad = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp"), "baseline": {"run_id": "x"}}, headers=free)
        )
        # regression: a baseline that is not an object got the SDK's validation text, not ours
        odd = anyio.run(
            lambda: call(base, "check_mcp_server", {"url": raw.url("/mcp"), "baseline": "abc"}, headers=free)
        )
        left = httpx2.post(f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers=free)
    document = result.structured_content
    assert not result.is_error and isinstance(document, dict)
    verdicts = {c["id"]: (c["state"], c["reason"]) for c in document["checks"]}
    assert verdicts["toolset_unchanged_vs_baseline"] == ("failed", "toolset_changed")
    assert document["baseline"]["source"] == "tools" and document["baseline"]["diff"]["counts"]["added"] == 1
    assert tool_reason(bad) == "invalid_baseline"
    assert tool_reason(odd) == "invalid_baseline"
    assert left.headers["x-free-pool-remaining"] == "3"  # the refusals drew nothing


def test_building_the_app_leaves_process_logging_alone() -> None:
    """The ``mcp`` SDK's ``MCPServer()`` calls ``logging.basicConfig(INFO)`` with a Rich handler; built
    inside ``create_app`` that took over the embedding process's logging (and slowed every route)."""
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from app.http import create_app\n"
        "from app.settings import Settings\n"
        "create_app(Settings(redis_url=None))\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), logging.getLevelName(root.level))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["0", "WARNING"], out


def test_mcp_get_is_405_not_an_endless_stream(service: Service) -> None:
    with service() as base:
        get = httpx2.get(f"{base}/mcp", headers={"Accept": "text/event-stream"}, timeout=5)
        delete = httpx2.delete(f"{base}/mcp", timeout=5)
    assert (get.status_code, get.json()["reason"]) == (405, "method_not_allowed")
    assert delete.status_code == 405


def test_mcp_body_over_64_kib_is_413_before_parsing(service: Service) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":[' + b"{}," * 30_000 + b"{}]}}"
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    with service() as base:
        big = httpx2.post(f"{base}/mcp", content=body, headers=headers)
    assert (big.status_code, big.json()["reason"]) == (413, "body_too_large")


def test_trickling_mcp_body_is_408(service: Service) -> None:
    with service(body_timeout_s=0.5) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
            )
            reply = b""
            while b"body_timeout" not in reply and (chunk := sock.recv(4096)):  # headers and body may part
                reply += chunk
    assert reply.startswith(b"HTTP/1.1 408") and b"body_timeout" in reply


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_mcp_body_not_sent_as_json_is_a_415_problem(service: Service, content_type: str) -> None:
    headers = {"accept": "application/json, text/event-stream"} | (
        {"content-type": content_type} if content_type else {}
    )
    with service() as base:
        answer = httpx2.post(f"{base}/mcp", content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', headers=headers)
    assert (answer.status_code, answer.json()["reason"]) == (415, "unsupported_media_type")
    assert answer.headers["content-type"] == "application/problem+json"


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip


def raw_call(base: str, tool: str, arguments: str, payment: str | None = None) -> httpx2.Response:
    """A 2026-07-28 ``tools/call`` whose arguments (and payment) are the JSON text given, as a client
    could send it (escapes and nesting the SDK client would not write)."""
    meta = json.dumps(MODERN_META)[:-1] + (f', "x402/payment": {payment}' if payment is not None else "") + "}"
    params = f'{{"name": "{tool}", "arguments": {arguments}, "_meta": {meta}}}'
    body = f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {params}}}'
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": tool}  # fmt: skip
    return httpx2.post(f"{base}/mcp", content=body.encode(), headers=headers, timeout=30)


def test_regression_a_lone_surrogate_in_a_search_query_is_invalid_arguments_not_a_database_outage(
    service: Service,
) -> None:
    with service() as base:
        searched = raw_call(base, "search_mcp_servers", '{"query": "echo \\ud800"}')
        badge = raw_call(base, "badge_for_mcp_server", '{"url": "https://a.example/\\udfff"}')
    for answered in (searched, badge):
        assert answered.status_code == 200, answered.text
        result = answered.json()["result"]
        assert result["isError"] is True and result["structuredContent"]["reason"] == "invalid_arguments"
        assert "\\u" not in answered.text.split('"detail"')[1].split('"reason"')[0]  # (the value is not echoed)
    assert "query" in searched.json()["result"]["structuredContent"]["detail"]


def test_regression_a_payment_nested_too_deep_is_a_parse_error_not_an_internal_error(service: Service) -> None:
    url = '{"url": "https://a.example/mcp"}'
    with service() as base:
        nested = raw_call(base, "check_mcp_server", url, '{"x402Version": 2, "payload": ' + "[" * 950 + "]" * 950 + "}")
        unencodable = raw_call(base, "check_mcp_server", url, '{"x402Version": 2, "payload": "\\ud800"}')
    assert nested.status_code == 400 and nested.json()["error"]["code"] == -32700
    result = unencodable.json()["result"]
    assert result["isError"] is True and result["structuredContent"]["error"] == "invalid_payment"


def test_a_fault_of_ours_in_a_tool_is_an_internal_error_refusal_its_text_only_in_the_log(
    service: Service, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(*_args: Any) -> dict[str, Any]:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr("app.http.mcp.lookup.summary_document", broken)
    with service() as base:
        result = anyio.run(lambda: call(base, "get_mcp_server_report", {"server_id": "0" * 24}))
    assert tool_reason(result) == "internal_error"
    assert "secret" not in json.dumps(result.structured_content)
    assert any("secret internal detail" in record.getMessage() or record.exc_info for record in caplog.records)
