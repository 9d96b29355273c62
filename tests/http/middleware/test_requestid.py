"""Request ids: on every answer (the badge fast path and /mcp too), believed only from a trusted proxy,
and on every log line written during the request."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx2
import pytest

from tests.conftest import Service
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import OwnRedis
from tests.servers.sonde import sonde

GENERATED = re.compile(r"[0-9a-f]{32}")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-11-25"}


def test_every_answer_carries_a_fresh_request_id(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    badge_url = {"url": raw.url("/mcp")}
    with service() as base:
        answers = [
            httpx2.get(f"{base}/healthz"),
            httpx2.get(f"{base}/no/such/route"),
            httpx2.get(f"{base}/badge/mcp", params=badge_url, timeout=30),  # a miss: the route
            httpx2.get(f"{base}/badge/mcp", params=badge_url, timeout=30),  # a hit: the edge fast path
            httpx2.get(f"{base}/badge/mcp.json", params={"url": "ftp://x"}),  # refused at the edge
            httpx2.post(f"{base}/mcp", json=INITIALIZE, headers=MCP_HEADERS, timeout=30),
            httpx2.post(f"{base}/v1/mcp/check", content=b"{", headers={"content-type": "application/json"}),
            httpx2.options(
                f"{base}/v1/mcp/check",
                headers={"Origin": "https://example.org", "Access-Control-Request-Method": "POST"},
            ),
        ]
    assert [a.status_code for a in answers] == [200, 404, 200, 200, 200, 200, 400, 200]
    ids = [a.headers.get_list("x-request-id") for a in answers]
    assert all(len(one) == 1 and GENERATED.fullmatch(one[0]) for one in ids), ids
    assert len({one[0] for one in ids}) == len(ids)


def test_browsers_may_read_the_request_id(service: Service) -> None:
    with service() as base:
        answer = httpx2.get(f"{base}/healthz", headers={"Origin": "https://example.org"})
    exposed = [name.strip().lower() for name in answer.headers["access-control-expose-headers"].split(",")]
    assert "x-request-id" in exposed


def test_a_trusted_proxy_s_request_id_is_kept(service: Service) -> None:
    with service(trusted_proxies=["127.0.0.1/32"]) as base:
        answers = [
            httpx2.get(f"{base}/healthz", headers={"X-Request-Id": given})
            for given in ("a", "lb-7f3a.9c1e:5d2b_4068-A", "x" * 128)
        ]
    assert [a.headers["x-request-id"] for a in answers] == ["a", "lb-7f3a.9c1e:5d2b_4068-A", "x" * 128]


def test_an_untrusted_client_s_request_id_is_replaced(service: Service) -> None:
    with service(trusted_proxies=["192.0.2.0/24"]) as base:  # a proxy, but not this peer
        answer = httpx2.get(f"{base}/healthz", headers={"X-Request-Id": "chosen-by-client"})
    assert GENERATED.fullmatch(answer.headers["x-request-id"])


@pytest.mark.parametrize(
    "given",
    [
        [("X-Request-Id", "")],
        [("X-Request-Id", "x" * 129)],
        [("X-Request-Id", "has space")],
        [("X-Request-Id", 'quote"d')],
        [("X-Request-Id", "id/with/slash")],
        [("X-Request-Id", "caf\u00e9")],
        [("X-Request-Id", "one"), ("X-Request-Id", "two")],
    ],
)
def test_a_malformed_request_id_from_a_trusted_proxy_is_replaced(
    service: Service, given: list[tuple[str, str]]
) -> None:
    with service(trusted_proxies=["127.0.0.1/32"]) as base:
        answer = httpx2.get(f"{base}/healthz", headers=[(k.encode(), v.encode("utf-8")) for k, v in given])
    assert answer.status_code == 200
    assert GENERATED.fullmatch(answer.headers["x-request-id"])


def test_the_request_id_is_on_the_access_line_and_the_log_lines_of_its_request(sdk_base: str, tmp_path: Path) -> None:
    """The real ``serve``: the probe's warning logged while a check runs, and the store's warning of
    the outage a later check found (Redis stopped), carry their request's id, as the access lines do."""
    redis = OwnRedis(tmp_path)
    redis.start()
    env = {
        "MCP_SONDE_REDIS_URL": redis.url,
        "MCP_SONDE_TRUSTED_PROXIES": '["127.0.0.1/32"]',
        "MCP_SONDE_HOST_START_INTERVAL_S": "0",
    }
    try:
        with sonde("--allow-private", env=env) as served:
            body = {"url": f"{sdk_base}/stateless-json/mcp"}
            answer = httpx2.post(
                f"{served.base}/v1/mcp/check",
                json=body,
                headers={"X-Free-Pool": "1", "X-Request-Id": "req-4711.a"},
                timeout=30,
            )
            assert answer.status_code == 200 and answer.headers["x-request-id"] == "req-4711.a"
            redis.stop()
            refused = httpx2.post(
                f"{served.base}/v1/mcp/check",
                json=body,
                headers={"X-Free-Pool": "1", "X-Request-Id": "req-4711.b"},
                timeout=30,
            )
            assert refused.status_code == 503 and refused.json()["reason"] == "shared_state_unavailable"
            deadline = time.monotonic() + 60  # (the outage is confirmed by two pings 0.5 s apart)
            while httpx2.get(f"{served.base}/readyz").json()["store"]["down_for_s"] is None:
                assert time.monotonic() < deadline
                time.sleep(0.1)
            after = httpx2.get(f"{served.base}/healthz")
    finally:
        redis.stop()
    assert served.returncode == 0
    records = served.records()  # every stderr line is one JSON object
    assert all({"timestamp", "level", "logger", "message"} <= set(record) for record in records)
    by_request = {(record.get("request_id"), record["logger"]) for record in records}
    assert {("req-4711.a", "mcp_sonde.probe"), ("req-4711.b", "mcp_sonde.store")} <= by_request, records
    assert not [r for r in records if r.get("request_id") not in (None, "req-4711.a", "req-4711.b")]
    access = {line["path"]: line for line in served.access_lines()}
    assert access["/v1/mcp/check"]["request_id"] == "req-4711.b"  # (the last line of the path)
    assert access["/healthz"]["request_id"] == after.headers["x-request-id"]
