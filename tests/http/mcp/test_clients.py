"""Every tool, answered and refused, as the MCP clients agents run read it (both protocol eras).

The matrix: each tool once succeeding and once for each refusal kind it has (payment required,
rate limited, refused URL or input, foreign origin, not found, invalid arguments), plus an
unlisted tool, through the Python SDK client, the TypeScript SDK clients and the Inspector CLI.
A client that validates ``structuredContent`` whenever it is present (the TypeScript ones)
throws on a refusal its output schema does not admit: here every refusal must be read as a
result with ``isError: true`` and its reason key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest

from tests.conftest import Service
from tests.servers.mcp_clients import Call, Read, Session, inspector, python_sdk, typescript_sdk
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

FREE = {"X-Free-Pool": "1"}
FOREIGN = {"X-Free-Pool": "1", "Origin": "https://elsewhere.example"}
REFUSED_URL = "https://user:pw@example.com/mcp"  # (refused for its form: nothing is dialled)

Client = Callable[[str, list[Call], dict[str, str] | None], Session]

CLIENTS: dict[str, Client] = {
    "python-legacy": lambda url, calls, headers: python_sdk(url, "legacy", calls, headers),
    "python-modern": lambda url, calls, headers: python_sdk(url, "modern", calls, headers),
    "ts-sdk-legacy": lambda url, calls, headers: typescript_sdk(url, "sdk", "legacy", calls, headers),
    "ts-client-legacy": lambda url, calls, headers: typescript_sdk(url, "client", "legacy", calls, headers),
    "ts-client-modern": lambda url, calls, headers: typescript_sdk(url, "client", "modern", calls, headers),
    "inspector-legacy": lambda url, calls, headers: inspector(url, "legacy", calls, headers),
    "inspector-modern": lambda url, calls, headers: inspector(url, "modern", calls, headers),
}
ERAS = {"python-legacy": "2025-11-25", "python-modern": "2026-07-28", "ts-sdk-legacy": "2025-11-25",
        "ts-client-legacy": "2025-11-25", "ts-client-modern": "2026-07-28"}  # fmt: skip
TOOLS = {"check_mcp_server", "badge_for_mcp_server", "search_mcp_servers", "get_mcp_server_report",
         "get_mcp_server_history", "get_attestation"}  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One cell: a call, the headers of its HTTP requests, and what the client must read."""

    tool: str
    kind: str
    arguments: dict[str, Any]
    headers: dict[str, str] | None
    expect: str  # a refusal's reason key, or "ok" with `answered` checking the document
    tight: bool = False  # against the instance whose budgets one call spends


def cases(target: str, server_id: str, attestation_id: str) -> list[Case]:
    """The matrix's cells for a stored check of ``target`` (its server and attestation ids)."""
    return [
        Case("check_mcp_server", "ok", {"url": target}, FREE, "ok"),
        Case("check_mcp_server", "payment_required", {"url": target}, None, "payment_required"),
        Case("check_mcp_server", "rate_limited", {"url": target}, FREE, "rate_limited", tight=True),
        Case("check_mcp_server", "refused_url", {"url": REFUSED_URL}, FREE, "userinfo_present"),
        Case("check_mcp_server", "foreign_origin", {"url": target}, FOREIGN, "free_pool_origin_refused"),
        Case("check_mcp_server", "invalid_arguments", {"url": 5}, FREE, "invalid_arguments"),
        Case("badge_for_mcp_server", "ok", {"url": target}, None, "ok"),
        Case("badge_for_mcp_server", "refused_url", {"url": REFUSED_URL}, None, "userinfo_present"),
        Case("badge_for_mcp_server", "invalid_arguments", {}, None, "invalid_arguments"),
        Case("search_mcp_servers", "ok", {"query": words(target)}, None, "ok"),
        Case("search_mcp_servers", "rate_limited", {}, None, "rate_limited", tight=True),
        Case("search_mcp_servers", "refused_input", {"sort": "popularity"}, None, "invalid_sort"),
        Case("search_mcp_servers", "invalid_arguments", {"limit": 0}, None, "invalid_arguments"),
        Case("get_mcp_server_report", "ok", {"url": target}, None, "ok"),
        Case("get_mcp_server_report", "rate_limited", {"server_id": server_id}, None, "rate_limited", tight=True),
        Case("get_mcp_server_report", "refused_url", {"url": REFUSED_URL}, None, "userinfo_present"),
        Case("get_mcp_server_report", "not_found", {"server_id": "0" * 24}, None, "server_not_found"),
        Case("get_mcp_server_report", "invalid_arguments", {"server_id": ["x"]}, None, "invalid_arguments"),
        Case("get_mcp_server_history", "ok", {"server_id": server_id, "days": 7}, None, "ok"),
        Case("get_mcp_server_history", "rate_limited", {"server_id": server_id}, None, "rate_limited", tight=True),
        Case("get_mcp_server_history", "refused_url", {"url": REFUSED_URL}, None, "userinfo_present"),
        Case("get_mcp_server_history", "invalid_arguments", {"days": 1000}, None, "invalid_arguments"),
        Case("get_attestation", "ok", {"attestation_id": attestation_id}, None, "ok"),
        Case("get_attestation", "rate_limited", {"attestation_id": attestation_id}, None, "rate_limited", tight=True),
        Case("get_attestation", "not_found", {"attestation_id": "0" * 64}, None, "attestation_not_found"),
        Case("get_attestation", "invalid_arguments", {}, None, "invalid_arguments"),
    ]


def answered(case: Case, read: Read, target: str, server_id: str, attestation_id: str) -> None:
    """What an agent reads from each tool's answer."""
    document = read.document
    assert isinstance(document, dict) and json.loads(read.text or "null") == document
    if case.tool == "check_mcp_server":
        assert document["status"] == "ok" and document["server"]["name"] == "mini" and document["url"] == target
    elif case.tool == "badge_for_mcp_server":
        assert document["url"] == target and "/badge/mcp?url=" in document["svg"]
    elif case.tool == "search_mcp_servers":
        listed = [row for row in document["servers"] if row["server_id"] == server_id]
        assert len(listed) == 1 and listed[0]["server_title"] == "Mini"  # the name the directory holds
    elif case.tool == "get_mcp_server_report":
        assert document["server_id"] == server_id and document["identity"]["server_title"] == "Mini"
    elif case.tool == "get_mcp_server_history":
        assert document["server_id"] == server_id and document["runs"]
    else:
        assert (
            document["id"] == attestation_id and document["envelope"]["payloadType"] == "application/vnd.in-toto+json"
        )


def words(target: str) -> str:
    """Search words that find ``target`` alone (its port: the store may hold other tests' servers)."""
    return str(httpx2.URL(target).port)


def listed(base: str, target: str) -> dict[str, Any]:
    """The directory row of ``target``, once the directory has taken in its stored check."""
    deadline = time.monotonic() + 60  # (the row is written after the answer; a loaded machine is slow)
    while True:
        page = httpx2.get(f"{base}/v1/servers", params={"q": words(target)}, timeout=30)
        assert page.status_code == 200, page.text
        rows = [row for row in page.json()["servers"] if row["url"] == target]
        if rows or time.monotonic() > deadline:
            assert rows, page.text
            return dict(rows[0])
        time.sleep(0.5)


def served(reads: list[Read], case: Case) -> Read:
    """The cell's read: for a tight cell, the second of two calls (the first spends the budget)."""
    return reads[1] if case.tight else reads[0]


@pytest.fixture
def instances(service: Service, raw: RawServer) -> Iterator[tuple[str, str, str, str, str]]:
    """An open instance with one stored check of a loopback server, and a tight one whose check
    and lookup budgets are one call each: (open, tight, target, server id, attestation id)."""
    raw.routes["/mcp"] = MiniMcp()
    target = raw.url("/mcp")
    with ExitStack() as stack:
        common: dict[str, Any] = {"pay_to": "0x" + "1" * 40, "facilitator_url": "http://127.0.0.1:9/",
                                  "free_pool_size": 1000, "free_pool_per_ip": 1000}  # fmt: skip
        base = stack.enter_context(service(**common, lookup_rate_limit="100000/minute"))
        tight = stack.enter_context(service(**common, rate_limit="1/hour", lookup_rate_limit="1/hour"))
        first = httpx2.post(f"{base}/v1/mcp/check", json={"url": target}, headers=FREE, timeout=60)
        assert first.status_code == 200, first.text
        stored = first.json()
        server = listed(base, target)
        httpx2.post(f"{tight}/v1/mcp/check", json={"url": target}, headers=FREE, timeout=60)  # (stored there too)
        yield f"{base}/mcp", f"{tight}/mcp", target, server["server_id"], stored["attestation_id"]


@pytest.mark.parametrize("client", list(CLIENTS))
def test_every_tool_answered_and_refused_is_read_by_the_client(
    instances: tuple[str, str, str, str, str], client: str
) -> None:
    base, tight, target, server_id, attestation_id = instances
    run = CLIENTS[client]
    matrix = cases(target, server_id, attestation_id)
    reads: dict[tuple[str, str], Read] = {}
    # one client run per instance and header set, as an agent holds one connection per server
    for url, headers, chosen in [
        *(
            (base, headers, [c for c in matrix if not c.tight and c.headers == headers])
            for headers in (None, FREE, FOREIGN)
        ),
        *((tight, None, [c]) for c in matrix if c.tight and c.headers is None),
        *((tight, FREE, [c]) for c in matrix if c.tight and c.headers == FREE),
    ]:
        calls = [Call(case.tool, case.arguments) for case in chosen for _ in range(2 if case.tight else 1)]
        session = run(url, calls, headers)
        assert set(session.tools) == TOOLS
        if client in ERAS:
            assert session.protocol_version == ERAS[client]
        for index, case in enumerate(chosen):
            pair = session.reads[index * 2 : index * 2 + 2] if case.tight else session.reads[index : index + 1]
            reads[(case.tool, case.kind)] = served(pair, case)
    unknown = run(base, [Call("no_such_tool", {})], None).reads[0]

    assert set(reads) == {(case.tool, case.kind) for case in matrix}
    for case in matrix:
        read = reads[(case.tool, case.kind)]
        assert read.thrown is None, (case.tool, case.kind, read.thrown)  # the client read the result
        if case.expect == "ok":
            assert read.is_error is False, (case.tool, case.kind, read.document)
            answered(case, read, target, server_id, attestation_id)
        else:
            assert read.is_error is True and read.reason == case.expect, (case.tool, case.kind, read.document)
            assert json.loads(read.text or "null") == read.document
    assert read_payment_required(reads[("check_mcp_server", "payment_required")])
    assert reads[("check_mcp_server", "rate_limited")].document["retryAfter"] > 0
    assert "url" in reads[("check_mcp_server", "invalid_arguments")].document["detail"]
    assert "5" not in reads[("check_mcp_server", "invalid_arguments")].document["detail"]  # (fields, never values)
    assert unknown.thrown is not None and unknown.is_error is None  # a protocol error, not a result
    if not client.startswith("inspector"):  # (the Inspector refuses a name tools/list did not give, unsent)
        assert unknown.code == -32602 and "unknown tool: no_such_tool" in unknown.thrown


def read_payment_required(read: Read) -> bool:
    """The x402 PaymentRequired document an agent acts on: what to pay, to whom, where it goes."""
    document = read.document
    assert document["x402Version"] == 2 and document["resource"]["url"] == "mcp://tool/check_mcp_server"
    assert document["accepts"]
    for offer in document["accepts"]:  # (one per payment network)
        assert offer["scheme"] == "exact" and offer["payTo"] == "0x" + "1" * 40 and int(offer["amount"]) > 0
    return "x402/payment" in document["message"]
