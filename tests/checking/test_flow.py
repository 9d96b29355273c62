"""One check through :func:`app.checking.flow.run_check`: the lookup on the client's share, a
payment verified before the lookup, and nothing charged for what our own lookup could not answer."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time

import httpx2
import pytest

from app.guard import IPAddress, ResolutionFailed
from app.guard.shares import LookupShares
from tests.conftest import Service
from tests.payment.chain import START_BALANCE, Chain
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import paid_post, payment_for

FREE = {"X-Free-Pool": "1"}
PAY_TO = "0x" + "11" * 20


def test_lookup_threads_are_bounded_and_busy_is_not_charged(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    import app.guard.resolver as resolver_module

    monkeypatch.setattr(resolver_module, "_shares", LookupShares(total=1, paid_reserve=0, client_share=1))
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
    assert (busy.status_code, busy.json()["reason"]) == (503, "resolver_busy")
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


def test_our_dns_timeout_is_served_but_not_charged(paid_service: PaidService, chain: Chain) -> None:
    class Silent:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            raise ResolutionFailed("dns_timeout", "no answer")

    url = {"url": "https://quiet.example.org/mcp"}
    with paid_service(allow_private=False) as working:
        signature = payment_for(working, chain, url)
    with paid_service(allow_private=False, resolver=Silent()) as base:
        response = paid_post(base, url, signature)
    assert response.status_code == 200 and response.json()["reason"] == "dns_timeout"
    assert "payment-response" not in response.headers
    assert chain.balance(chain.payer) == START_BALANCE
