"""Drill: two real instances on one real Redis, which is slowed, hung, killed and restarted under
a load of free and paid checks. The free pool and each client's share are never overdrawn, no
payment buys two checks, only ``shared_state_unavailable`` is a 5xx, and both instances serve
again within seconds of Redis answering. Marked ``soak`` (``scripts/test -m soak``)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import pytest

from tests.payment.chain import facilitator_app, new_chain, pay
from tests.payment.test_paid_check import settled_transfers
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import OwnRedis
from tests.servers.sonde import Served, sonde
from tests.servers.tcp_relay import relay
from tests.servers.uvicorn_thread import serve

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]

POOL, SHARE = 60, 20
CLIENTS = ("198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4")  # 4 x 20 > 60: the pool runs out
PAYMENTS = 6
#: Seconds within which an instance must serve again once Redis answers (it takes about one).
RECOVERY_BOUND_S = 15


@dataclass
class Tally:
    answers: list[tuple[str, int, str, str]] = field(default_factory=list)  # (phase, status, reason, client)
    paid: Counter[str] = field(default_factory=Counter)  # signature -> 200s
    phase: str = "normal"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int, reason: str, client: str) -> None:
        with self.lock:
            self.answers.append((self.phase, status, reason, client))


def reason(response: httpx2.Response) -> str:
    if response.status_code < 400:
        return ""
    try:
        document = response.json()
    except json.JSONDecodeError:
        return "not-json"
    return str(document.get("reason") or document.get("error") or "")


@contextmanager
def instances(
    redis_url: str, facilitator: str, chain_network: str, asset: str, pay_to: str, data: Path
) -> Iterator[list[Served]]:
    env = {
        "MCP_SONDE_REDIS_URL": redis_url,
        "MCP_SONDE_FREE_POOL_SIZE": str(POOL),
        "MCP_SONDE_FREE_POOL_PER_IP": str(SHARE),
        "MCP_SONDE_TRUSTED_PROXIES": '["127.0.0.1/32"]',
        "MCP_SONDE_RATE_LIMIT": "100000/minute",
        "MCP_SONDE_HOST_CONCURRENCY": "100",
        "MCP_SONDE_HOST_CLIENT_CONCURRENCY": "100",
        "MCP_SONDE_HOST_START_INTERVAL_S": "0",
        "MCP_SONDE_PAY_TO": pay_to,
        "MCP_SONDE_PAYMENT_NETWORKS": json.dumps([{"network": chain_network, "asset": asset}]),
        "MCP_SONDE_FACILITATOR_URL": facilitator,
        "MCP_SONDE_PUBLIC_URL": "https://sonde.example.org",
        "MCP_SONDE_LOG_LEVEL": "WARNING",
    }
    with ExitStack() as stack:
        served = [
            stack.enter_context(sonde("--allow-private", env=env | {"MCP_SONDE_DATA_DIR": str(data / str(n))}))
            for n in range(2)
        ]
        for one in served:  # (a start on a loaded machine takes a while)
            deadline = time.monotonic() + 120
            while httpx2.get(f"{one.base}/readyz", timeout=10).json()["store"]["ok"] is not True:
                assert time.monotonic() < deadline, "an instance never saw Redis"
                time.sleep(0.2)
        yield served


def test_two_instances_never_overdraw_or_serve_a_payment_twice_while_redis_fails(
    raw: RawServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    chain = new_chain()
    redis = OwnRedis(tmp_path, appendonly=True)
    redis.start()
    tally = Tally()
    stop = threading.Event()
    urls = itertools.count()
    recovered: dict[str, float] = {}
    with ExitStack() as stack:
        link = stack.enter_context(relay(("127.0.0.1", redis.port)))
        link.open = True
        facilitator = f"http://127.0.0.1:{stack.enter_context(serve(facilitator_app(chain)))}"
        served = stack.enter_context(
            instances(
                f"redis://127.0.0.1:{link.port}/0", facilitator, chain.network, chain.token.address,
                chain.pay_to.address, tmp_path,
            )
        )  # fmt: skip
        bases = [one.base for one in served]
        unpaid = httpx2.post(f"{bases[0]}/v1/mcp/check", json={"url": raw.url("/mcp")}, timeout=30)
        signatures = [anyio.run(pay, chain.payer, unpaid.headers["payment-required"]) for _ in range(PAYMENTS)]

        def free(client: str, base: str) -> None:
            with httpx2.Client(timeout=30) as http:
                while not stop.is_set():
                    body = {"url": raw.url(f"/mcp?n={next(urls)}")}
                    headers = {"X-Free-Pool": "1", "X-Forwarded-For": client}
                    answer = http.post(f"{base}/v1/mcp/check", json=body, headers=headers)
                    tally.add(answer.status_code, reason(answer), client)
                    time.sleep(0.05)

        def spend(signature: str, base: str) -> None:
            with httpx2.Client(timeout=30) as http:
                answer = http.post(
                    f"{base}/v1/mcp/check", json={"url": raw.url("/mcp")}, headers={"PAYMENT-SIGNATURE": signature}
                )
                tally.add(answer.status_code, reason(answer), "payer")
                if answer.status_code == 200:
                    with tally.lock:
                        tally.paid[signature] += 1

        def spend_everywhere(signature: str) -> None:
            both = [threading.Thread(target=spend, args=(signature, base)) for base in bases]
            for thread in both:
                thread.start()
            for thread in both:
                thread.join()

        def serving_again(phase: str) -> None:
            """Seconds until each instance answers a free check with 200 or 402 again."""
            started = time.monotonic()
            for base in bases:
                while True:
                    headers = {"X-Free-Pool": "1", "X-Forwarded-For": "192.0.2.9"}
                    body = {"url": raw.url("/mcp?r=1")}
                    answer = httpx2.post(f"{base}/v1/mcp/check", json=body, headers=headers, timeout=30)
                    tally.add(answer.status_code, reason(answer), "192.0.2.9")
                    if answer.status_code in (200, 402):
                        break
                    assert time.monotonic() - started < RECOVERY_BOUND_S + 60, f"{phase}: no recovery"
                    time.sleep(0.1)
            recovered[phase] = time.monotonic() - started

        load = [threading.Thread(target=free, args=(c, bases[n % 2])) for n, c in enumerate(CLIENTS * 2)]
        for thread in load:
            thread.start()
        try:
            spend_everywhere(signatures[0])
            time.sleep(2)
            tally.phase = "slow"
            link.delay_s = 0.1  # each way: slow, not down
            spend_everywhere(signatures[1])
            time.sleep(3)
            link.delay_s = 0.0
            tally.phase = "hung"
            link.stall()
            spend_everywhere(signatures[2])
            time.sleep(3)
            link.resume()
            tally.phase = "after-hang"
            serving_again("hang")
            tally.phase = "killed"
            redis.stop()
            spend_everywhere(signatures[3])
            time.sleep(3)
            redis.start()  # (its append-only file: what it answered before the kill is kept)
            tally.phase = "after-restart"
            serving_again("restart")
            spend_everywhere(signatures[4])
            spend_everywhere(signatures[3])  # the one refused while Redis was down buys its check now
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not any(
                r == "free_pool_exhausted" for _p, _s, r, _c in tally.answers[-20:]
            ):
                time.sleep(0.5)
            tally.phase = "end"
            for signature in signatures[:5]:
                spend_everywhere(signature)  # every one again, on both: none buys a second check
        finally:
            stop.set()
            for thread in load:
                thread.join(timeout=60)
        transfers = len(settled_transfers(chain))
    redis.stop()

    served_free = Counter(c for _p, s, _r, c in tally.answers if s == 200 and c != "payer")
    statuses = Counter((p, s, r) for p, s, r, _c in tally.answers)
    with capsys.disabled():  # the figures show in every run
        print(f"\nshared-state drill: free served {sum(served_free.values())} of a pool of {POOL} "
              f"({dict(served_free)}); paid 200s {dict(Counter(tally.paid.values()))}, transfers {transfers}; "
              f"recovery {({k: round(v, 2) for k, v in recovered.items()})} s")  # fmt: skip
        for (phase, status, why), n in sorted(statuses.items()):
            print(f"  {phase:14} {status} {why or '-':28} {n}")
    assert sum(served_free.values()) <= POOL, "the free pool was overdrawn"
    assert max(served_free.values()) <= SHARE, "a client's share was overdrawn"
    assert any(r == "free_pool_exhausted" for _p, _s, r, _c in tally.answers), "the load never reached the pool's end"
    assert all(n == 1 for n in tally.paid.values()), "a payment bought two checks"
    assert transfers == sum(tally.paid.values()) and transfers >= 4
    assert {(s, r) for _p, s, r, _c in tally.answers if s >= 500} <= {(503, "shared_state_unavailable")}
    assert not [a for a in tally.answers if a[0] in ("normal", "slow") and a[1] >= 500], (
        "ordinary or slow load looked like an outage"
    )
    assert all(seconds < RECOVERY_BOUND_S for seconds in recovered.values()), recovered
