"""Benchmark: what signing adds to a served check (goal: at most 5 % of the check).

Two figures, each against a named baseline, medians of repeats, in one run:

- **CPU per result** (this process, ``time.process_time``): the work
  :func:`app.checking.flow.sign_answer` adds to a result (the statement with
  the result's digest, its canonical form, the Ed25519 signature over PAE, the envelope spliced
  into the answer) against the baseline, the same result's plain ``model_dump_json`` (what an
  unsigned answer costs to write). Two results of real full checks: *small*, the ``mcp`` SDK
  fixture server ``stateless-json`` (3 tools), and *large*, ``bench/tools_server.py`` (200 real
  tool definitions from the hygiene corpus, 166 kB) checked with ``include_tools``. The
  breakdown says where the time goes.
- **End to end** (wall clock): free-pool checks through the service (in this process, on
  loopback, embedded store; the MCP servers in their own processes) with signing, against the
  baseline, the same checks with ``sign_answer`` replaced by a function returning the unsigned
  answer and a dummy attestation (within this benchmark only). The two alternate check by
  check (which goes first alternates too), each with its own URL (a query string), so drift
  and caches treat both alike. Prints both medians, the overhead in ms and as a percentage of
  the unsigned check, and the CPU ``sign_answer()`` took inside the service (more than in the loop
  of the first figure: colder caches, and the copies the canonical form makes wake the garbage
  collector, which walks the service's whole heap).

Usage: ``python -m bench.attest [CHECKS] [REPEATS]`` (defaults 200 end-to-end checks per side
and server, 7 repeats of the CPU figures).
"""

from __future__ import annotations

import hashlib
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import anyio
import httpx2

from app.attest import dsse
from app.attest.keyring import open_keyring
from app.attest.signer import Attestation, Attestor
from app.attest.statement import result_digest, statement
from app.canonical import canonical_bytes
from app.checking import flow as checkflow
from app.checking.services import Services
from app.http import create_app
from app.settings import Settings
from app.suite.full import full_check
from app.suite.model import CheckResult
from bench._servers import sdk_fixture_process
from tests.servers.ports import free_port, wait_listening
from tests.servers.uvicorn_thread import serve

LARGE_TOOLS = 200
GOAL_PERCENT = 5.0
SIGNED = checkflow.sign_answer


@dataclass(frozen=True)
class Target:
    """A server to check: its label, URL and whether the answer carries the tool definitions."""

    label: str
    url: str
    include_tools: bool


@contextmanager
def tools_server(n: int) -> Iterator[str]:
    """``bench/tools_server.py`` listing ``n`` tools, in its own process; yields its MCP URL."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "bench.tools_server", str(port), str(n)])
    try:
        wait_listening(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


def unsigned(services: Services, result: CheckResult, raw: bytes) -> tuple[bytes, Attestation]:
    """The answer as ``sign_answer`` leaves it, without signing: the baseline of the end-to-end figure."""
    dummy = dsse.Envelope(payloadType=dsse.PAYLOAD_TYPE, payload="", signatures=[])
    return raw, Attestation("0" * 64, dummy, b"")


def cpu_ms(work: Callable[[], object], n: int, repeats: int) -> float:
    """Median over ``repeats`` of the CPU ms per call of ``work``, called ``n`` times a repeat."""
    for _ in range(max(3, n // 10)):
        work()
    samples = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(n):
            work()
        samples.append((time.process_time() - started) / n * 1000)
    return statistics.median(samples)


def cpu_rows(target: Target, attestor: Attestor, n: int, repeats: int) -> list[tuple[str, float]]:
    """(step, median CPU ms) for one real result of ``target``: the baseline, ``sign_answer`` whole, its parts."""
    settings = Settings(allow_private=True)
    result = anyio.run(lambda: full_check(target.url, settings=settings, include_tools=target.include_tools))
    assert isinstance(result, CheckResult) and result.status == "ok", result.reason
    assert result.tools is not None
    services = cast(Services, SimpleNamespace(attestor=attestor))
    exclude = {"attestation", "attestation_id"} | (set() if target.include_tools else {"tool_definitions"})
    raw = result.model_dump_json(exclude=exclude).encode()
    served = raw
    now = datetime.now(UTC)
    body = statement(result, served, now)
    payload = canonical_bytes(body)
    held = attestor.ring.signing_key(now)
    envelope = dsse.sign(payload, [(held.keyid, held.key)])
    steps: list[tuple[str, Callable[[], object]]] = [
        ("model_dump_json (baseline)", lambda: result.model_dump_json(exclude=exclude)),
        ("sign_answer() whole", lambda: SIGNED(services, result, raw)),
        ("  result_sha256 (canonical answer)", lambda: result_digest(served)),
        ("  statement() (includes result_sha256)", lambda: statement(result, served, now)),
        ("  canonical statement", lambda: canonical_bytes(body)),
        ("  Ed25519 over PAE", lambda: dsse.sign(payload, [(held.keyid, held.key)])),
        ("  envelope JSON + splice", lambda: raw[:-1] + json.dumps(envelope, separators=(",", ":")).encode()),
        ("  sha256 id", lambda: hashlib.sha256(payload).hexdigest()),
        ("  signing key lookup", lambda: attestor.ring.signing_key(now)),
    ]
    print(f"  {target.label}: {result.tools.count} tools, answer {len(raw):,} bytes, statement {len(payload):,} bytes")
    return [(name, cpu_ms(work, n, repeats)) for name, work in steps]


def end_to_end(base: str, target: Target, n: int) -> tuple[list[float], list[float], list[float]]:
    """Wall ms of ``n`` signed and ``n`` unsigned free-pool checks of ``target``, alternating, and
    the CPU ms each signed check spent in ``sign_answer()`` inside the service (its thread's time)."""
    times: dict[bool, list[float]] = {True: [], False: []}
    inside: list[float] = []

    def measured(services: Services, result: CheckResult, raw: bytes) -> tuple[bytes, Attestation]:
        started = time.thread_time()  # (a large answer is signed on a worker thread: this one's time)
        try:
            return SIGNED(services, result, raw)
        finally:
            inside.append((time.thread_time() - started) * 1000)

    body: dict[str, Any] = {"include": ["tools"]} if target.include_tools else {}
    with httpx2.Client(timeout=30) as client:
        for i in range(-10, n):  # ten rounds of warm-up
            for signing in (True, False) if i % 2 else (False, True):
                checkflow.sign_answer = measured if signing else unsigned
                url = f"{target.url}?n={i}&signed={int(signing)}"
                started = time.perf_counter()
                answer = client.post(f"{base}/v1/mcp/check", json={"url": url, **body}, headers={"X-Free-Pool": "1"})
                elapsed = (time.perf_counter() - started) * 1000
                assert answer.status_code == 200, answer.text
                document = answer.json()
                assert document["status"] == "ok" and ("attestation" in document) is signing
                if i >= 0:
                    times[signing].append(elapsed)
    checkflow.sign_answer = SIGNED
    return times[True], times[False], inside[10:]


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as data_dir,
        sdk_fixture_process() as sdk,
        tools_server(LARGE_TOOLS) as large_url,
    ):
        targets = [
            Target("small (3 tools)", f"{sdk}/stateless-json/mcp", False),
            Target(f"large ({LARGE_TOOLS} tools, include_tools)", large_url, True),
        ]
        attestor = Attestor(open_keyring(Path(data_dir) / "bench-keys" / "keys.json"))
        print(f"signing cost: CPU ms per result, median of {repeats} repeats (baseline: model_dump_json)")
        for target in targets:
            rows = cpu_rows(target, attestor, 30 if target.include_tools else 1000, repeats)
            for name, ms in rows:
                print(f"    {name:<40}{ms:9.3f} ms")
            dump, whole = rows[0][1], rows[1][1]
            print(f"  cpu {target.label}: {whole - dump:.3f} ms added, model_dump_json {dump:.3f} ms,"
                  f" ratio {whole / dump:.1f}")  # fmt: skip
        settings = Settings(
            allow_private=True,
            host_start_interval_s=0,
            rate_limit="1000000/minute",
            free_pool_size=100 * n,
            free_pool_per_ip=100 * n,
            redis_url=None,
            data_dir=Path(data_dir),
        )
        print(
            f"end to end: median wall ms of a free-pool check through the service on loopback, {n} per side,"
            f" alternating (baseline: sign_answer() replaced by the unsigned answer; goal: at most {GOAL_PERCENT:g} %)"
        )
        print(f"  {'':<4}{'server':<36}{'unsigned':>10}{'signed':>10}{'added':>9}{'added %':>9}{'in situ':>9}")
        with serve(create_app(settings), proxy_headers=False) as port:
            for target in targets:
                signed_ms, unsigned_ms, inside = end_to_end(f"http://127.0.0.1:{port}", target, n)
                base, with_signing = statistics.median(unsigned_ms), statistics.median(signed_ms)
                extra = with_signing - base
                print(f"  e2e {target.label:<36}{base:10.2f}{with_signing:10.2f}{extra:9.2f}{extra / base * 100:8.1f} %"
                      f"{statistics.median(inside):9.2f}")  # fmt: skip
    print("(added: signed - unsigned medians; in situ: median CPU ms of sign_answer() inside the service, where caches")
    print(" are colder and the garbage collector runs more than in the loop above)")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
