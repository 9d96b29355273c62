"""POST /v1/mcp/check: guard before payment, the free pool, results, and nothing charged on refusal."""

from __future__ import annotations

import ipaddress
import socket

import httpx2
import pytest

from app.http import create_app
from app.settings import Settings
from tests.conftest import Service, reason_of
from tests.servers.network import FixedResolver
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_mcp import MiniMcp
from tests.servers.uvicorn_thread import serve

FREE = {"X-Free-Pool": "1"}


def check(base: str, url: str, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=headers or {}, timeout=30)


def test_free_pool_check_of_a_real_server(service: Service, sdk_base: str) -> None:
    with service(free_pool_per_ip=5) as base:
        response = check(base, f"{sdk_base}/stateless-json/mcp", FREE)
        assert response.status_code == 200
        result = response.json()
        assert (result["status"], result["era"], result["untrusted_content"]) == ("ok", "modern", True)
        assert result["tools"]["names"] == ["add", "echo", "now"]
        assert response.headers["x-free-pool-remaining"] == "4"
        assert response.headers["x-ratelimit-limit"] == "60"
        assert check(base, f"{sdk_base}/initialize-only/mcp", FREE).headers["x-free-pool-remaining"] == "3"


def test_unreachable_target_is_a_normal_result(service: Service) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    with service() as base:
        response = check(base, f"http://127.0.0.1:{port}/mcp", FREE)
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["reason"]) == ("unreachable", "connection_refused")


def test_no_payment_and_no_pool_header_is_402(service: Service, sdk_base: str) -> None:
    with service() as base:
        for headers in ({}, {"X-Free-Pool": "0"}, {"X-Free-Pool": "yes"}):
            response = check(base, f"{sdk_base}/stateless-json/mcp", headers)
            assert (response.status_code, reason_of(response)) == (402, "payment_required")
            assert response.json()["x402Version"] == 2 and "payment-required" in response.headers


def test_per_client_share_then_402(service: Service, sdk_base: str) -> None:
    with service(free_pool_per_ip=2) as base:
        codes = [check(base, f"{sdk_base}/stateless-json/mcp", FREE).status_code for _ in range(3)]
        last = check(base, f"{sdk_base}/stateless-json/mcp", FREE)
    assert codes == [200, 200, 402]
    assert reason_of(last) == "free_pool_exhausted"
    assert 1 <= int(last.headers["retry-after"]) <= 86_400
    assert last.headers["x-free-pool-remaining"] == "0"
    assert "client's share" in last.json()["message"]


def test_every_answer_of_the_route_shows_the_rate_limit(service: Service) -> None:
    with service(rate_limit="10/minute") as base:
        answers = [
            httpx2.post(f"{base}/v1/mcp/check", content=b"x", headers={"content-type": "text/plain"}),
            httpx2.post(f"{base}/v1/mcp/check", content=b"{", headers={"content-type": "application/json"}),
            check(base, "https://127.0.0.1/"),
            check(base, "http://127.0.0.1:9/mcp"),
        ]
    assert [a.status_code for a in answers] == [415, 400, 402, 402]
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == ["9", "8", "7", "6"]


def test_daily_pool_shared_by_all_clients(service: Service, sdk_base: str) -> None:
    with service(free_pool_size=2, free_pool_per_ip=10, trusted_proxies=["127.0.0.1/32"]) as base:
        codes = [
            check(base, f"{sdk_base}/stateless-json/mcp", FREE | {"X-Forwarded-For": f"203.0.113.{i}"}).status_code
            for i in range(3)
        ]
    assert codes == [200, 200, 402]


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://mcp.example.com/mcp", "scheme_not_https"),
        ("https://127.0.0.1/mcp", "host_ip_literal"),
        ("https://user:pw@mcp.example.com/mcp", "userinfo_present"),
        ("https://mcp.example.com:8443/mcp", "port_not_allowed"),
        ("https://mcp.example.com/{id}", "placeholder_present"),
        ("https://localhost/mcp", "host_not_public_name"),
        ("https://internal.example.com/mcp", "address_not_public"),
        ("not a url", "url_malformed"),
        ("https://" + "a" * 2100 + ".com/", "url_too_long"),
    ],
)
def test_refused_urls_are_422_and_draw_nothing(service: Service, url: str, reason: str) -> None:
    resolver = FixedResolver({"internal.example.com": [ipaddress.ip_address("10.0.0.8")]})
    with service(resolver=resolver, allow_private=False, free_pool_per_ip=1) as base:
        response = check(base, url, FREE)
        assert (response.status_code, response.json()["reason"]) == (422, reason)
        # Without the header the URL is refused the same way: the guard comes before payment.
        assert check(base, url).json()["reason"] == reason
        pool = httpx2.get(f"{base}/metrics").text
    assert 'mcp_sonde_free_pool_draws_total{outcome="drawn"}' not in pool


def test_dns_failure_is_a_200_dns_result(service: Service) -> None:
    class NoSuchHost:
        async def resolve(self, host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
            from app.guard import ResolutionFailed

            raise ResolutionFailed("dns_nxdomain", "no such host")

    with service(resolver=NoSuchHost(), allow_private=False) as base:
        response = check(base, "https://missing.example.com/mcp", FREE)
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["reason"]) == ("dns", "dns_nxdomain")


def test_busy_target_gives_the_draw_back(service: Service, raw: RawServer) -> None:
    import threading
    import time

    release = threading.Event()

    @raw.route("/slow")
    def slow(request: Request, conn: socket.socket) -> None:
        release.wait(5)
        MiniMcp()(request, conn)

    with service(host_concurrency=1, queue_budget_s=0.5, free_pool_per_ip=5) as base:
        results: list[httpx2.Response] = []
        first = threading.Thread(target=lambda: results.append(check(base, raw.url("/slow"), FREE)))
        first.start()
        time.sleep(0.3)
        busy = check(base, raw.url("/slow?other=1"), FREE)
        release.set()
        first.join()
        assert (busy.status_code, busy.json()["reason"]) == (429, "target_busy")
        assert int(busy.headers["retry-after"]) >= 1
        after = check(base, raw.url("/slow"), FREE)
    assert results[0].status_code == 200
    # five per client: one served, one given back after the 429, this one is the second served
    assert after.headers["x-free-pool-remaining"] == "3"


def test_probe_html_target(service: Service, raw: RawServer) -> None:
    @raw.route("/page")
    def page(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "text/html"}, b"<html>hi</html>")

    with service() as base:
        result = check(base, raw.url("/page"), FREE).json()
    assert (result["status"], result["reason"]) == ("not_mcp", "html_page")


def test_check_answers_are_never_stored_by_a_cache(service: Service, sdk_base: str) -> None:
    """A result is one live observation, perhaps a paid one: ``no-store`` on results and refusals alike."""
    with service() as base:
        answers = [
            check(base, f"{sdk_base}/stateless-json/mcp", FREE),  # 200
            check(base, f"{sdk_base}/stateless-json/mcp"),  # 402
            check(base, "http://169.254.169.254/mcp", FREE),  # refused
            httpx2.post(f"{base}/v1/mcp/check", content=b"{", headers={"content-type": "application/json"}),  # 4xx
        ]
    assert [a.status_code for a in answers][:2] == [200, 402]
    assert all(a.headers["cache-control"] == "no-store" for a in answers), [a.headers for a in answers]


def test_free_pool_refusals_name_the_setting_that_raises_them(service: Service, sdk_base: str) -> None:
    url = {"url": f"{sdk_base}/stateless-json/mcp"}
    with service(free_pool_per_ip=1, free_pool_size=100) as base:
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 200
        share = httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30)
    with service(free_pool_per_ip=5, free_pool_size=1) as base:
        assert httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30).status_code == 200
        pool = httpx2.post(f"{base}/v1/mcp/check", json=url, headers=FREE, timeout=30)
    assert (share.status_code, reason_of(share)) == (402, "free_pool_exhausted")
    assert (pool.status_code, reason_of(pool)) == (402, "free_pool_exhausted")
    assert "MCP_SONDE_FREE_POOL_PER_IP" in share.json()["message"]
    assert "MCP_SONDE_FREE_POOL_SIZE" in pool.json()["message"]


def test_in_development_the_free_pool_is_not_a_wall(sdk_base: str) -> None:
    """Under allow_private, with no per-client share set, one client gets far more than 20 checks a day."""
    url = {"url": f"{sdk_base}/stateless-json/mcp"}
    settings = Settings(allow_private=True, rate_limit="1000/minute", host_start_interval_s=0.0, redis_url=None)
    with serve(create_app(settings), proxy_headers=False) as port:
        answers = [
            httpx2.post(f"http://127.0.0.1:{port}/v1/mcp/check", json=url, headers=FREE, timeout=30) for _ in range(25)
        ]
    assert [a.status_code for a in answers] == [200] * 25
    assert answers[-1].headers["x-free-pool-remaining"] == "975"
