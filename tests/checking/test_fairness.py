"""Fair shares under abuse: one client's flood never takes every lookup thread or every turn at a host."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx2
import pytest

from app.guard.shares import LookupShares
from tests.conftest import Service
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp


def post(base: str, url: str, client: str, **headers: str) -> httpx2.Response:
    headers = {"X-Free-Pool": "1", "X-Forwarded-For": client} | headers
    return httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=headers, timeout=30)


def test_one_client_with_slow_lookups_leaves_threads_for_others(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Client A's concurrent checks of hosts whose name servers hang hold at most its share of
    the lookup threads; client B's lookup still gets one."""
    import app.guard.resolver as resolver_module

    monkeypatch.setattr(resolver_module, "_shares", LookupShares(total=4, paid_reserve=1, client_share=2))
    real = socket.getaddrinfo
    release = threading.Event()

    def hangs_for_slow_names(host: str, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".slow.test"):
            release.wait(10)  # a name server that does not answer
            raise socket.gaierror(socket.EAI_AGAIN, "timed out")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hangs_for_slow_names)
    answers: list[httpx2.Response] = []
    with service(dns_timeout_s=5, trusted_proxies=["127.0.0.1"], free_pool_per_ip=100) as base:
        flood = [
            threading.Thread(target=lambda n=n: answers.append(post(base, f"http://h{n}.slow.test/mcp", "203.0.113.7")))
            for n in range(6)
        ]
        for thread in flood:
            thread.start()
        time.sleep(0.5)
        other = post(base, "http://localhost:9/mcp", "198.51.100.9")
        release.set()
        for thread in flood:
            thread.join()
    assert (other.status_code, other.json()["status"]) == (200, "unreachable")  # looked up, probed
    refused = [a for a in answers if a.status_code == 429]
    assert len(refused) == 4 and {a.json()["reason"] for a in refused} == {"client_lookups_busy"}
    assert all(a.headers["retry-after"] == "2" for a in refused)
    assert sorted(a.status_code for a in answers) == [200, 200, 429, 429, 429, 429]


def test_one_clients_checks_of_a_host_queue_behind_each_other_not_in_front_of_others(
    service: Service, raw: RawServer
) -> None:
    """Client A starts four slow checks of one host: it holds one of the host's two turns, and
    client B's check of that host runs at once instead of waiting into 429 target_busy."""
    hold = threading.Event()
    inner = MiniMcp()

    @raw.route("/slow")
    def slow(request: Request, conn: socket.socket) -> None:
        hold.wait(5)
        inner(request, conn)

    raw.routes["/mcp"] = MiniMcp()
    with service(host_concurrency=2, queue_budget_s=1.5, trusted_proxies=["127.0.0.1"]) as base:
        flood = [
            threading.Thread(target=lambda n=n: post(base, raw.url(f"/slow?n={n}"), "203.0.113.7")) for n in range(4)
        ]
        for thread in flood:
            thread.start()
        time.sleep(0.3)
        other = post(base, raw.url("/mcp"), "198.51.100.9")
        hold.set()
        for thread in flood:
            thread.join()
    assert (other.status_code, other.json()["status"]) == (200, "ok")
