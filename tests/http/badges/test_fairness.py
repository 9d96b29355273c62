"""Badge misses shared out by network, and misses of names that do not resolve on a budget of their own."""

from __future__ import annotations

import ipaddress

import httpx2

from app.guard import IPAddress, ResolutionFailed
from tests.conftest import Service
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp


class Names:
    """Resolves ``real.test`` to loopback; every other name does not exist."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        if host == "real.test":
            return [ipaddress.ip_address("127.0.0.1")]
        raise ResolutionFailed("dns_nxdomain", f"{host} does not exist")


def from_(base: str, url: str, address: str) -> httpx2.Response:
    return httpx2.get(f"{base}/badge/mcp", params={"url": url}, headers={"X-Forwarded-For": address}, timeout=30)


def test_misses_of_names_that_do_not_exist_from_twenty_64s_leave_the_global_budget_to_real_badges(
    service: Service, raw: RawServer
) -> None:
    """Regression: 20 /64s × 30 badge misses of names that do not exist exhausted the global
    badge budget in seconds, and every innocent README badge showed ``rate_limited``."""
    raw.routes["/mcp"] = MiniMcp()
    real = f"http://real.test:{raw.port}/mcp"
    settings = {
        "trusted_proxies": ["127.0.0.1/32"],
        "badge_rate_limit": "30/minute",
        "badge_global_limit": "600/minute",
    }
    with service(resolver=Names(), **settings) as base:
        states = [
            from_(base, f"http://nosuch-{n}-{i}.test/mcp", f"2001:db8:66:{n:x}::1").headers["x-badge-state"]
            for n in range(20)
            for i in range(30)
        ]
        innocent = from_(base, real, "2001:db8:beef::1")
    assert states.count("unreachable") == 30  # the unresolved budget: 5 % of 600 a minute
    assert states.count("rate_limited") == 600 - 30
    assert innocent.headers["x-badge-state"] == "ok"  # the global budget was never touched


def test_one_48_takes_at_most_its_share_of_badge_misses(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    settings = {
        "trusted_proxies": ["127.0.0.1/32"],
        "badge_rate_limit": "30/minute",
        "badge_global_limit": "400/minute",
    }
    with service(resolver=Names(), **settings) as base:
        states = [
            from_(base, f"http://real.test:{raw.port}/mcp?n={n}-{i}", f"2001:db8:66:{n:x}00::1").headers[
                "x-badge-state"
            ]
            for n in range(4)
            for i in range(30)
        ]
        elsewhere = from_(base, f"http://real.test:{raw.port}/mcp?elsewhere", "198.51.100.9")
    # four /56s of one /48: the /56 share is 30 (never below one client's 30), the /48's 10 % is 40
    assert states.count("ok") == 40 and states.count("rate_limited") == 80
    assert elsewhere.headers["x-badge-state"] == "ok"
