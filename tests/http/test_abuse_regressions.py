"""Regression tests for abuse of the fair shares and the badge cache: one per fault, named after it."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest

from app.guard.shares import LookupShares
from tests.conftest import Service
from tests.servers.raw import RawServer, Request, send

FREE = {"X-Free-Pool": "1"}


def _loopback(port: Any) -> list[Any]:
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port or 0)))]


@pytest.fixture
def slow_names(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """``*.fast.test`` resolves at once to 127.0.0.1; ``*.slow.test`` hangs (a name server that
    never answers) until the returned event is set. Nothing leaves the machine."""
    real = socket.getaddrinfo
    release = threading.Event()

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".slow.test"):
            release.wait(20)
            raise socket.gaierror(socket.EAI_AGAIN, "timed out")
        if host.endswith(".fast.test"):
            return _loopback(port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    yield release
    release.set()


def _protected(raw: RawServer) -> None:
    """``/mcp?n=N``: a server behind sign-in whose challenge names metadata on ``mN.slow.test``."""

    @raw.route("/mcp")
    def challenge(request: Request, conn: socket.socket) -> None:
        n = parse_qs(urlsplit(request.path).query).get("n", ["0"])[0]
        meta = f"http://m{n}.slow.test:{raw.port}/prm"
        send(conn, 401, {"www-authenticate": f'Bearer resource_metadata="{meta}"'})


def test_metadata_lookups_inside_a_probe_escape_the_client_share_and_the_paid_reserve(
    service: Service, raw: RawServer, slow_names: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Policy (app/guard/shares.py, README step 3): one client holds at most CLIENT_SHARE lookup
    threads, and free work never takes the PAID_RESERVE. But the probe's own lookups (the
    RFC 9728 ``resource_metadata`` host a 401 names, app/probe/reach.py) run outside
    ``lookups_for``: they have no owner and count against the total only. One client's free
    badge misses of its own servers, each naming a metadata host whose name server hangs, take
    every thread, the paid reserve included; another client's check is then 503 resolver_busy."""
    import app.guard.resolver as resolver_module

    shares = LookupShares(total=4, paid_reserve=1, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    _protected(raw)
    with service(dns_timeout_s=0.5, trusted_proxies=["127.0.0.1"], badge_rate_limit="100/minute") as base:
        attacker = {"X-Forwarded-For": "203.0.113.7"}
        for n in range(4):  # sequential, so the attacker never holds more than one owned lookup
            url = f"http://a{n}.fast.test:{raw.port}/mcp?n={n}"
            badge = httpx2.get(f"{base}/badge/mcp", params={"url": url}, headers=attacker, timeout=30)
            assert badge.headers["x-badge-state"] in ("auth", "busy")
        time.sleep(0.5)
        held = shares.in_use
        other = httpx2.post(
            f"{base}/v1/mcp/check",
            json={"url": "http://localhost:9/mcp"},
            headers=FREE | {"X-Forwarded-For": "198.51.100.9"},
            timeout=30,
        )
        slow_names.set()
    assert (other.status_code, other.json().get("status")) == (200, "unreachable"), other.json()
    assert held <= shares.client_share, f"one client's badge misses hold {held} lookup threads"


PAY_TO = "0x" + "11" * 20


def _junk_payment(base: str) -> str:
    """A PAYMENT-SIGNATURE any stranger can write: our published requirement copied from the 402,
    a made-up authorization and an all-zero signature: it parses, but the facilitator refuses it."""
    import base64
    import json
    import secrets

    required = httpx2.post(f"{base}/v1/mcp/check", json={"url": "http://localhost:9/mcp"}, timeout=30)
    accepted = required.json()["accepts"][0]
    authorization = {
        "from": "0x" + "22" * 20,
        "to": PAY_TO,
        "value": accepted["amount"],
        "validAfter": "0",
        "validBefore": "99999999999",
        "nonce": "0x" + secrets.token_hex(32),
    }
    payload = {
        "x402Version": 2,
        "accepted": accepted,
        "payload": {"authorization": authorization, "signature": "0x" + "00" * 65},
    }
    return base64.b64encode(json.dumps(payload).encode()).decode()


def test_a_junk_payment_that_merely_parses_takes_the_paid_reserve(
    service: Service, slow_names: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Policy (README step 3): 8 lookup threads are kept for checks that carry a well-formed
    payment, "so free work never leaves a paid check without one". The lookup runs before the
    facilitator sees the payment, and "well-formed" is only a copy of the public 402 document
    with a zero signature: one client (its share, 8, equals the reserve, 8) takes the whole
    reserve for nothing (each request ends 503 facilitator_unavailable / 402 payment_invalid, no
    charge), and a real payer's lookup is then refused while free work holds the rest."""
    import app.guard.resolver as resolver_module

    shares = LookupShares(total=4, paid_reserve=2, client_share=2)  # the defaults, scaled: reserve == share
    monkeypatch.setattr(resolver_module, "_shares", shares)
    settings = {
        "dns_timeout_s": 0.5,
        "trusted_proxies": ["127.0.0.1"],
        "pay_to": PAY_TO,
        "facilitator_url": "http://127.0.0.1:9/",  # loopback, nothing listens: verify fails fast
        "free_pool_per_ip": 100,
    }
    with service(**settings) as base:
        junk, payers = _junk_payment(base), _junk_payment(base)
        answers: list[httpx2.Response] = []

        def post(url: str, client: str, headers: dict[str, str]) -> None:
            answers.append(
                httpx2.post(
                    f"{base}/v1/mcp/check",
                    json={"url": url},
                    headers={"X-Forwarded-For": client} | headers,
                    timeout=30,
                )
            )

        # Free work from two ordinary clients fills the threads outside the reserve ...
        threads = [
            threading.Thread(target=post, args=(f"http://f{n}.slow.test/mcp", f"198.51.100.{n // 2 + 1}", FREE))
            for n in range(2)
        ]
        # ... and one stranger's junk payments fill the reserve.
        threads += [
            threading.Thread(
                target=post, args=(f"http://j{n}.slow.test/mcp", "203.0.113.7", {"PAYMENT-SIGNATURE": junk})
            )
            for n in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        payer = httpx2.post(
            f"{base}/v1/mcp/check",
            json={"url": "http://localhost:9/mcp"},
            headers={"X-Forwarded-For": "192.0.2.50", "PAYMENT-SIGNATURE": payers},
            timeout=30,
        )
        slow_names.set()
    # The stranger paid nothing for holding the reserve ...
    assert all(a.status_code != 200 for a in answers if a.request.headers.get("payment-signature"))
    # ... and the payer (whose payment also only parses here; a real one would too) got no lookup.
    assert payer.json().get("reason") != "resolver_busy", "the paid reserve was taken by payments that only parse"


def test_stale_badges_of_slow_names_starve_every_other_badge_refresh(
    service: Service, raw: RawServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Policy (README, badges): a stale badge is served while one refresh runs, and a client holds
    at most CLIENT_SHARE lookup threads. Every refresh runs as one client, ``badge-refresh``
    (app/http/badges/route.py REFRESH_CLIENT), so all refreshes of all badges share one client's
    share. Anyone whose badges went stale and whose names now resolve slowly (their own DNS)
    views those badges (cached hits: never limited) and holds that whole share; every other
    badge's refresh is then refused (client_lookups_busy), tried again only every 20 s, and the
    badges turn grey ``aged`` after 2 TTLs. Nothing is charged and no limit applies."""
    import logging

    import app.guard.resolver as resolver_module
    from tests.servers.raw_mcp import MiniMcp

    shares = LookupShares(total=8, paid_reserve=2, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    real = socket.getaddrinfo
    slow, release = threading.Event(), threading.Event()

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".flip.test"):  # the attacker's names: fast at first, then hanging
            if slow.is_set():
                release.wait(20)
                raise socket.gaierror(socket.EAI_AGAIN, "timed out")
            return _loopback(port)
        if host.endswith(".fast.test"):
            return _loopback(port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    raw.routes["/mcp"] = MiniMcp()
    victim = f"http://victim.fast.test:{raw.port}/mcp"
    attacker = [f"http://a{n}.flip.test:{raw.port}/mcp" for n in range(2)]
    caplog.set_level(logging.INFO, logger="mcp_sonde.badge")
    try:
        with service(badge_ttl_s=10, dns_timeout_s=0.5, badge_rate_limit="100/minute") as base:

            def view(url: str) -> str:
                return httpx2.get(f"{base}/badge/mcp", params={"url": url}, timeout=30).headers["x-badge-state"]

            assert [view(u) for u in [victim, *attacker]] == ["ok"] * 3
            time.sleep(10.5)  # every badge is stale now
            slow.set()
            for url in attacker:
                view(url)  # a cached hit: starts a refresh whose lookup hangs
            time.sleep(0.3)
            view(victim)  # starts the victim's refresh
            time.sleep(1.5)
    finally:
        release.set()
    refusals = [r.getMessage() for r in caplog.records if "badge refresh" in r.getMessage()]
    assert not any("client_lookups_busy" in m for m in refusals), refusals


def test_last_modified_of_a_miss_that_waited_for_its_turn_is_not_after_date(service: Service, raw: RawServer) -> None:
    """Policy (README, badges): ``Last-Modified`` is the probe's time less 2 s, "so never later
    than Date". But uvicorn fixes ``Date`` when the request *arrives* (the request cycle copies
    the server's default headers then), and a miss can wait up to the light-probe budget (5 s)
    for its host's turn (one new probe per second per host) before its probe, whose start is
    ``checked_at``, begins. Four concurrent misses of one host: the later ones answer with a
    Last-Modified seconds after their Date (RFC 9110 section 8.8.2.1 forbids that)."""
    import concurrent.futures
    from email.utils import parsedate_to_datetime

    from tests.servers.raw_mcp import MiniMcp

    raw.routes["/mcp"] = MiniMcp()
    with service(host_start_interval_s=1.0, badge_rate_limit="100/minute") as base:

        def miss(n: int) -> httpx2.Response:
            return httpx2.get(f"{base}/badge/mcp", params={"url": raw.url(f"/mcp?n={n}")}, timeout=30)

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(miss, range(4)))
    late = [
        (a.headers["date"], a.headers["last-modified"])
        for a in answers
        if "last-modified" in a.headers
        and parsedate_to_datetime(a.headers["last-modified"]) > parsedate_to_datetime(a.headers["date"])
    ]
    assert not late, f"Last-Modified after Date: {late}"


@pytest.mark.parametrize("checked", [1e20, -1e20, 1e300])
def test_a_corrupted_badge_entry_with_an_absurd_time_is_a_miss_not_a_500(service: Service, checked: float) -> None:
    """Policy (app/http/badges/cache.py): "An entry that is not one of ours (wrong types, text a
    header cannot carry, no finite time) is a miss, probed and written again", and a badge is
    "always 200 with an image". ``_entry`` checks that ``checked`` is finite, but then calls
    ``http_date(checked - 2)`` outside its ``try``: a finite time outside datetime's range raises
    (OverflowError / ValueError / OSError) out of the cache read. The edge fast path
    (app/http/badges/hits.py) answers a plain-text 500 "Internal Server Error": no image, no
    problem details."""
    import uuid

    from tests.http.badges.test_route import _seed
    from tests.servers.redis_server import shared_redis_url

    url = "https://corrupt.example.com/mcp"
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    entry = {"state": "ok", "message": "live", "color": "brightgreen", "checked": checked}
    _seed(shared, url, entry | {"modified": "Mon, 30 Nov 2026 00:00:00 GMT", "fresh_until": 1e300})
    with service(**shared) as base:
        svg = httpx2.get(f"{base}/badge/mcp", params={"url": url}, timeout=30)
        json_badge = httpx2.get(f"{base}/badge/mcp.json", params={"url": url}, timeout=30)
        png = httpx2.get(f"{base}/badge/mcp.png", params={"url": url}, timeout=30)
    for answer in (svg, json_badge, png):
        assert answer.status_code == 200, (answer.status_code, answer.headers.get("content-type"), answer.text[:80])


@pytest.mark.anyio
async def test_a_lookup_cancelled_before_its_thread_starts_gives_its_share_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Policy (app/guard/shares.py): a thread is counted "from the moment it starts until it
    ends". ``SystemResolver.resolve`` takes the share *before* ``anyio.to_thread.run_sync`` and
    gives it back only in the finally of the thread function. If the caller is cancelled at
    run_sync's first checkpoint (or before the worker dequeues the job: anyio then skips the
    function), the function never runs and the share is never given back: the slot leaks for
    the life of the process. In the service the probe's metadata lookup runs inside
    ``anyio.fail_after(remaining)`` (app/probe/auth.py), so a deadline that fires in that window
    leaks one slot per occurrence; 32 leaks and every check is 503 resolver_busy for good."""
    import anyio

    import app.guard.resolver as resolver_module
    from app.guard.shares import LookupOwner, lookups_for

    shares = LookupShares(total=2, paid_reserve=0, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    resolver = resolver_module.SystemResolver(1.0)
    with anyio.move_on_after(0), lookups_for(LookupOwner("203.0.113.7")):  # a deadline already reached
        await resolver.resolve("localhost", 80)
    await anyio.sleep(0.3)  # any thread would have ended by now
    assert shares.in_use == 0, "the cancelled lookup never ran, yet its slot is still taken"


def test_a_readyz_burst_asks_the_facilitator_once(service: Service, raw: RawServer) -> None:
    """/readyz is unauthenticated and not rate limited: 100 of them, 50 at a time, against a
    facilitator that takes 1 s to answer /supported, are at most two facilitator requests (the
    start's, and one joined by every concurrent /readyz), not one per caller."""
    import concurrent.futures

    kinds = [{"x402Version": 2, "scheme": "exact", "network": n} for n in ("eip155:8453", "eip155:137")]
    body = json.dumps({"kinds": kinds, "extensions": [], "signers": {}}).encode()

    @raw.route("/supported")
    def supported(request: Request, conn: socket.socket) -> None:
        time.sleep(1.0)
        send(conn, 200, {"content-type": "application/json"}, body)

    with service(pay_to=PAY_TO, facilitator_url=raw.url("")) as base, concurrent.futures.ThreadPoolExecutor(50) as pool:
        list(pool.map(lambda _n: httpx2.get(f"{base}/readyz", timeout=30), range(100)))
    assert len(raw.requests_to("/supported")) <= 2, f"{len(raw.requests_to('/supported'))} GET /supported"
