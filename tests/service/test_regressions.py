"""Regression tests, one per fault found by attacking the check API."""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time

import httpx2
import pytest

from app.guard import IPAddress, ResolutionFailed
from tests.service.conftest import Service

FREE = {"X-Free-Pool": "1"}


def test_lookup_threads_are_bounded_and_busy_is_not_charged(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.guard.resolver as resolver_module

    monkeypatch.setattr(resolver_module, "_slots", threading.BoundedSemaphore(1))
    real = socket.getaddrinfo
    release = threading.Event()

    def slow_for_slow_test(host: str, *args: object, **kwargs: object) -> object:
        if host == "slow.test":
            release.wait(5)  # a name server that does not answer
            raise socket.gaierror(socket.EAI_AGAIN, "timed out")
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", slow_for_slow_test)
    with service(dns_timeout_s=0.5, free_pool_per_ip=2) as base:
        first = httpx2.post(f"{base}/v1/mcp/check", json={"url": "http://slow.test/mcp"}, headers=FREE, timeout=30)
        # The abandoned lookup still holds the only thread: the next lookup is refused, not queued.
        busy = httpx2.post(f"{base}/v1/mcp/check", json={"url": "http://other.test/mcp"}, headers=FREE, timeout=30)
        release.set()
        time.sleep(0.2)
        after = httpx2.post(f"{base}/v1/mcp/check", json={"url": "http://localhost:9/mcp"}, headers=FREE, timeout=30)
    assert (first.status_code, first.json()["reason"]) == (200, "dns_timeout")
    assert (busy.status_code, busy.json()["error"]["reason"]) == (503, "resolver_busy")
    assert busy.headers["retry-after"] == "2"
    # Neither the 503 nor the dns_timeout (our lookup gave no definitive answer) kept its draw.
    assert after.status_code == 200 and after.headers["x-free-pool-remaining"] == "1"


def test_failed_lookup_is_not_repeated_by_the_probe(service: Service) -> None:
    class FailsThenLinkLocal:
        def __init__(self) -> None:
            self.calls = 0

        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            self.calls += 1
            if self.calls % 2:
                raise ResolutionFailed("dns_failure", "flaky")
            return [ipaddress.ip_address("169.254.169.254")]

    resolver = FailsThenLinkLocal()
    with service(resolver=resolver) as base:
        response = httpx2.post(f"{base}/v1/mcp/check", json={"url": "http://x.flip.test/mcp"}, headers=FREE)
        metrics = httpx2.get(f"{base}/metrics").text
    assert (response.status_code, response.json()["status"], response.json()["reason"]) == (200, "dns", "dns_failure")
    assert resolver.calls == 1
    assert 'mcp_sonde_probes_total{status="dns"} 1.0' in metrics


def test_body_that_trickles_gets_408(service: Service) -> None:
    with service(body_timeout_s=0.5) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                b"POST /v1/mcp/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"content-length: 40\r\n\r\n{"
            )
            sock.settimeout(5)
            started = time.monotonic()
            answer = b""
            while b"body_timeout" not in answer and time.monotonic() - started < 5:
                chunk = sock.recv(4096)  # headers and body may come in separate segments
                if not chunk:
                    break
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"body_timeout"' in answer
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("path", ["/v1/mcp/check/", "/healthz/"])
def test_trailing_slash_is_a_json_404_not_a_redirect(service: Service, path: str) -> None:
    with service() as base:
        response = httpx2.request(
            "POST" if "check" in path else "GET", f"{base}{path}", headers={"host": "evil.example"}
        )
    assert response.status_code == 404
    assert response.json()["error"]["reason"] == "not_found"
    assert "location" not in response.headers


def test_access_log_never_holds_an_arbitrary_path(service: Service, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service() as base:
        httpx2.get(f"{base}/https:%2F%2Fmcp.example.com%2Fmcp%3Fapi_key%3DSECRET1")
        httpx2.post(f"{base}/v1/mcp/check;jsessionid=SECRET2", json={})
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_sonde.access"]
    assert len(lines) == 2
    assert all("SECRET" not in line and '"path":"<unmatched>"' in line for line in lines)
