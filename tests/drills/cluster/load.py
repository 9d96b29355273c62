"""The drill's load through nginx: free checks from many client identities, paid checks (each
payment sent twice at once), badge reads and reads of signed results, every answer recorded.

nginx replaces ``X-Forwarded-For`` with the address it sees (compose.yaml), so a client's
identity is its source address: each free client binds its connections to loopback addresses
of its own (``127.0.1.1``, ``127.0.1.2``, ...; Linux routes all of 127.0.0.0/8 to loopback), and
the instances, which trust nginx's ``127.0.0.1``, count the free pool and its shares per address.
"""

from __future__ import annotations

import itertools
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx2

from tests.drills.cluster.targets import Targets

CHECK = "/v1/mcp/check"


def identity(n: int) -> str:
    """The ``n``-th client source address."""
    return f"127.0.{1 + n // 250}.{1 + n % 250}"


def reason(response: httpx2.Response) -> str:
    """The problem's reason key ('' below 400; ``not-json`` for a body that is no JSON, as nginx's pages)."""
    if response.status_code < 400:
        return ""
    try:
        document = response.json()
    except ValueError:
        return "not-json"
    if not isinstance(document, dict):
        return "not-json"
    return str(document.get("reason") or document.get("error") or "")


@dataclass(frozen=True)
class Answer:
    phase: str
    kind: str  # free, paid, badge, attestation
    status: int  # 0: no answer (the exception's name is the reason)
    reason: str
    client: str
    at: float  # time.monotonic() when it came


@dataclass
class Served:
    """A check answered 200: what it was, and its body (a signed answer)."""

    kind: str
    client: str
    attestation_id: str
    url: str
    body: bytes


@dataclass
class Load:
    """The load's threads and what they recorded."""

    base: str
    targets: Targets
    signatures: list[str]
    clients: int
    identities: int
    pause_s: float
    phase: str = "start"
    answers: list[Answer] = field(default_factory=list)
    served: list[Served] = field(default_factory=list)
    paid: Counter[int] = field(default_factory=Counter)  # payment index -> 200s
    attestation_reads: list[bytes] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _payments: itertools.count[int] = field(default_factory=itertools.count)

    def record(self, kind: str, client: str, call: Callable[[], httpx2.Response]) -> httpx2.Response | None:
        try:
            response = call()
        except httpx2.HTTPError as exc:
            with self._lock:
                self.answers.append(Answer(self.phase, kind, 0, type(exc).__name__, client, time.monotonic()))
            return None
        with self._lock:
            self.answers.append(Answer(self.phase, kind, response.status_code, reason(response), client,
                                       time.monotonic()))  # fmt: skip
        return response

    def _keep(self, kind: str, client: str, url: str, response: httpx2.Response | None) -> bool:
        if response is None or response.status_code != 200:
            return False
        try:
            attestation_id = str(response.json()["attestation_id"])
        except (ValueError, KeyError, TypeError):
            attestation_id = ""
        with self._lock:
            self.served.append(Served(kind, client, attestation_id, url, response.content))
        return True

    # --- the clients -------------------------------------------------------------------------
    def free(self, n: int) -> None:
        mine = [identity(i) for i in range(n, self.identities, self.clients)]
        http = {address: self._client(address) for address in mine}
        try:
            for address in itertools.cycle(mine):
                if self.stop.is_set():
                    return
                url = self.targets.check_url("free")
                response = self.record("free", address, lambda a=address, u=url: http[a].post(  # type: ignore[misc]
                    CHECK, json={"url": u}, headers={"X-Free-Pool": "1"}))  # fmt: skip
                self._keep("free", address, url, response)
                self.stop.wait(self.pause_s)
        finally:
            for client in http.values():
                client.close()

    def spend(self, index: int, url: str, http: httpx2.Client) -> None:
        headers = {"PAYMENT-SIGNATURE": self.signatures[index]}
        response = self.record("paid", f"payment-{index}", lambda: http.post(CHECK, json={"url": url},
                                                                             headers=headers))  # fmt: skip
        if self._keep("paid", f"payment-{index}", url, response):
            with self._lock:
                self.paid[index] += 1

    def payer(self, n: int) -> None:
        """Spend each payment twice at once (two connections); once all are spent, spend old ones again."""
        clients = [self._client(identity(self.identities + 2 * n + k)) for k in (0, 1)]
        try:
            while not self.stop.is_set():
                index = next(self._payments)
                if index >= len(self.signatures):
                    index = random.randrange(len(self.signatures))
                url = self.targets.check_url("paid")
                both = [threading.Thread(target=self.spend, args=(index, url, client)) for client in clients]
                for thread in both:
                    thread.start()
                for thread in both:
                    thread.join()
                self.stop.wait(1.0)
        finally:
            for client in clients:
                client.close()

    def badges(self) -> None:
        urls = [self.targets.check_url("badge") for _ in range(12)]
        with self._client(identity(self.identities + 10)) as http:
            for url in itertools.cycle(urls):
                if self.stop.is_set():
                    return
                self.record("badge", "badge", lambda u=url: http.get("/badge/mcp", params={"url": u}))  # type: ignore[misc]
                self.stop.wait(0.5)

    def attestations(self) -> None:
        with self._client(identity(self.identities + 11)) as http:
            while not self.stop.is_set():
                with self._lock:
                    ids = [s.attestation_id for s in self.served[-200:] if s.attestation_id]
                if ids:
                    path = f"/v1/attestations/{random.choice(ids)}"
                    response = self.record("attestation", "reader", lambda p=path: http.get(p))  # type: ignore[misc]
                    if response is not None and response.status_code == 200:
                        with self._lock:
                            self.attestation_reads.append(response.content)
                self.stop.wait(0.5)

    def _client(self, address: str) -> httpx2.Client:
        transport = httpx2.HTTPTransport(local_address=address)
        return httpx2.Client(base_url=self.base, transport=transport, timeout=90)

    # --- start and stop ----------------------------------------------------------------------
    def start(self) -> None:
        """20 threads: the free clients, two payers, a badge reader and a reader of signed results."""
        targets: list[tuple[Callable[..., None], tuple[int, ...]]] = [(self.free, (n,)) for n in range(self.clients)]
        targets += [(self.payer, (0,)), (self.payer, (1,)), (self.badges, ()), (self.attestations, ())]
        for function, args in targets:
            thread = threading.Thread(target=function, args=args, daemon=True)
            thread.start()
            self.threads.append(thread)

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)

    def since(self, moment: float, kinds: tuple[str, ...] = ("free", "paid")) -> list[Answer]:
        with self._lock:
            return [a for a in self.answers if a.at >= moment and a.kind in kinds]


def is_served(answer: Answer) -> bool:
    """An answer that is not an outage: any status below 500 (a 402 or 429 is the service deciding)."""
    return 0 < answer.status < 500
