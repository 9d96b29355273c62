"""``/metrics``: HTTP answers by route, badge cache outcomes, waits, process metrics; its token and its own port."""

from __future__ import annotations

import logging
import re
import time
import uuid

import httpx2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Service
from tests.servers.ports import free_port
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url
from tests.servers.sonde import sonde

FREE = {"X-Free-Pool": "1"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition: ``(name, sorted labels) -> value``."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(text: str, name: str, **labels: str) -> float:
    return samples(text).get((name, tuple(sorted(labels.items()))), 0.0)


def test_http_answers_are_counted_by_route_never_by_raw_path(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service() as base:
        for _ in range(3):
            httpx2.get(f"{base}/healthz")
        httpx2.get(f"{base}/badge/mcp", params={"url": raw.url("/mcp")}, timeout=30)  # a miss, through the route
        httpx2.get(f"{base}/badge/mcp", params={"url": raw.url("/mcp")}, timeout=30)  # a hit, at the edge
        for n in range(5):  # a scanner: every path is new
            httpx2.get(f"{base}/wp-admin/{n}.php?secret={n}")
        httpx2.request("PROPFIND", f"{base}/healthz")  # (a method of RFC 4918: outside the closed set)
        httpx2.post(f"{base}/healthz")
        text = httpx2.get(f"{base}/metrics").text
    assert value(text, "mcp_sonde_http_requests_total", route="/healthz", method="GET", status="200") == 3
    assert value(text, "mcp_sonde_http_requests_total", route="/badge/mcp", method="GET", status="200") == 2
    assert value(text, "mcp_sonde_http_requests_total", route="other", method="GET", status="404") == 5
    assert value(text, "mcp_sonde_http_requests_total", route="/healthz", method="other", status="405") == 1
    assert value(text, "mcp_sonde_http_requests_total", route="/healthz", method="POST", status="405") == 1
    assert value(text, "mcp_sonde_http_request_duration_seconds_count", route="/healthz") == 5
    assert value(text, "mcp_sonde_http_request_duration_seconds_count", route="/badge/mcp") == 2
    assert "wp-admin" not in text and "secret" not in text and "PROPFIND" not in text
    assert value(text, "mcp_sonde_badge_cache_total", outcome="miss") == 1
    assert value(text, "mcp_sonde_badge_cache_total", outcome="hit") == 1
    assert value(text, "mcp_sonde_probe_turn_wait_seconds_count") == 1
    assert value(text, "mcp_sonde_lookup_wait_seconds_count") == 1
    assert value(text, "process_cpu_seconds_total") > 0 and value(text, "process_resident_memory_bytes") > 0
    assert re.search(r'^python_info\{.*implementation="CPython"', text, flags=re.MULTILINE)


def test_stale_badges_and_checks_count_their_waits(service: Service, raw: RawServer) -> None:
    from tests.http.badges.test_route import STALE_UNREACHABLE, _seed

    raw.routes["/mcp"] = MiniMcp()
    url = raw.url("/mcp")
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    _seed(shared, url, STALE_UNREACHABLE | {"fresh_until": time.time() - 1})
    with service(**shared) as base:
        assert httpx2.get(f"{base}/badge/mcp.json", params={"url": url}).headers["x-badge-state"] == "unreachable"
        for _ in range(50):  # the refresh runs in the background
            text = httpx2.get(f"{base}/metrics").text
            if value(text, "mcp_sonde_probes_total", status="ok") == 1:
                break
            time.sleep(0.1)
        assert httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE, timeout=30).status_code == 200
        text = httpx2.get(f"{base}/metrics").text
    assert value(text, "mcp_sonde_badge_cache_total", outcome="stale") == 1
    assert value(text, "mcp_sonde_probes_total", status="ok") == 2
    assert value(text, "mcp_sonde_lookup_wait_seconds_count") == 2
    assert value(text, "mcp_sonde_probe_turn_wait_seconds_count") == 2


def test_a_metrics_token_is_asked_for_and_never_logged(service: Service, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token = "mtok-" + uuid.uuid4().hex
    with service(metrics_token=token) as base:
        missing = httpx2.get(f"{base}/metrics")
        wrong = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}x"})
        other_scheme = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Basic {token}"})
        non_ascii = httpx2.get(f"{base}/metrics", headers={b"Authorization": "Bearer \u00e9".encode()})
        right = httpx2.get(f"{base}/metrics", headers={"Authorization": f"Bearer {token}"})
        lower = httpx2.get(f"{base}/metrics", headers={"Authorization": f"bearer  {token}"})
    for refused in (missing, wrong, other_scheme, non_ascii):
        assert refused.status_code == 401
        assert refused.json()["reason"] == "metrics_unauthorized"
        assert refused.headers["www-authenticate"].startswith("Bearer")
        assert "mcp_sonde" not in refused.text
    assert right.status_code == lower.status_code == 200 and "mcp_sonde_http_requests_total" in right.text
    assert token not in caplog.text and token not in right.text


def test_metrics_on_their_own_port_and_not_on_the_main_one() -> None:
    metrics_port = free_port()
    env = {"MCP_SONDE_METRICS_PORT": str(metrics_port), "MCP_SONDE_METRICS_TOKEN": "own-port-token"}
    with sonde(env=env) as served:
        httpx2.get(f"{served.base}/healthz")
        main = httpx2.get(f"{served.base}/metrics")
        own = f"http://127.0.0.1:{metrics_port}"
        unauthorized = httpx2.get(f"{own}/metrics")
        scraped = httpx2.get(f"{own}/metrics", headers={"Authorization": "Bearer own-port-token"})
        nothing_else = httpx2.get(f"{own}/healthz")
    assert served.returncode == 0
    assert (main.status_code, main.json()["reason"]) == (404, "not_found")
    assert (unauthorized.status_code, unauthorized.json()["reason"]) == (401, "metrics_unauthorized")
    assert scraped.status_code == 200
    assert value(scraped.text, "mcp_sonde_http_requests_total", route="/healthz", method="GET", status="200") == 1
    assert value(scraped.text, "mcp_sonde_http_requests_total", route="other", method="GET", status="404") == 1
    assert nothing_else.status_code == 404 and "x-request-id" in nothing_else.headers
    assert b"own-port-token" not in served.stdout + served.stderr
