"""Benchmark: ``/healthz`` while ``POST /v1/mcp/diff`` is attacked with costly tool lists.

``mcp-sonde serve`` runs in its own process (embedded defaults, the diff route's rate limit
lifted). ``/healthz`` is asked every 20 ms by one client in this process, first with nothing
else going on (the baseline), then while two attacker processes each send, in a loop, the
costliest body within the caps found (``tests/http/routes/test_diff.py``: 1,100 tools whose
schemas each spend their whole step budget, 1 MiB; about 27 s of comparison unbounded, cut at
``diff_timeout_s``). Prints p50/p95/p99 of both, the ratio of the p95s (goal: at most 2) and
how many comparisons the attackers got answered.

Usage: ``python -m bench.diff [SECONDS] [--tree DIR]`` (default 20 s per phase). ``--tree``
serves the app from another checkout (for a before-and-after on one machine).
"""

from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from tests.servers.ports import free_port, wait_ready

ATTACKERS = 2


def _costly_body(tools: int = 1100) -> bytes:
    heavy = {"allOf": [{"anyOf": [{"minLength": 1}, {}]} for _ in range(12)]}
    light = {"type": "string"}
    before = [{"name": f"t{i}", "inputSchema": heavy, "outputSchema": light} for i in range(tools)]
    after = [{"name": f"t{i}", "inputSchema": light, "outputSchema": heavy} for i in range(tools)]
    return json.dumps({"before": before, "after": after}, separators=(",", ":")).encode()


def attack(url: str, seconds: float) -> None:
    """One attacker: the costly body again and again; prints how many answers of each status."""
    body = _costly_body()
    counts: dict[int, int] = {}
    deadline = time.monotonic() + seconds
    with httpx2.Client(timeout=120) as client:
        while time.monotonic() < deadline:
            status = client.post(url, content=body, headers={"content-type": "application/json"}).status_code
            counts[status] = counts.get(status, 0) + 1
    print(json.dumps(counts))


def _sample(base: str, seconds: float) -> list[float]:
    """Wall ms of ``GET /healthz``, one every 20 ms for ``seconds``."""
    times: list[float] = []
    deadline = time.monotonic() + seconds
    with httpx2.Client(timeout=30) as client:
        while time.monotonic() < deadline:
            started = time.perf_counter()
            assert client.get(f"{base}/healthz").status_code == 200
            times.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    return times


def _quantiles(times: list[float]) -> tuple[float, float, float]:
    cuts = statistics.quantiles(times, n=100)
    return statistics.median(times), cuts[94], cuts[98]


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    args = sys.argv[1:]
    tree = None
    if "--tree" in args:
        at = args.index("--tree")
        tree = Path(args[at + 1]).resolve()
        del args[at : at + 2]
    seconds = float(args[0]) if args else 20.0
    port = free_port()
    env = {
        **os.environ,
        "MCP_SONDE_PORT": str(port),
        "MCP_SONDE_DIFF_RATE_LIMIT": "1000000/minute",
        "MCP_SONDE_DATA_DIR": str(Path(os.environ.get("TMPDIR", "/tmp")) / f"sonde-bench-diff-{port}"),
    }
    env.pop("REDIS_URL", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    api = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"],
        env=env,
        cwd=tree,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(port, api)
        _sample(base, 2)  # warm up
        idle = _sample(base, seconds)
        attackers = [
            subprocess.Popen(
                [sys.executable, "-c", f"from bench.diff import attack; attack({base + '/v1/mcp/diff'!r}, {seconds})"],
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(ATTACKERS)
        ]
        time.sleep(1)  # (the first bodies are on their way)
        attacked = _sample(base, seconds)
        answers: dict[str, int] = {}
        for attacker in attackers:
            out, _ = attacker.communicate(timeout=seconds + 300)
            for status, count in json.loads(out.strip().splitlines()[-1] or "{}").items():
                answers[status] = answers.get(status, 0) + count
    finally:
        api.terminate()
        api.wait(timeout=30)
    i50, i95, i99 = _quantiles(idle)
    a50, a95, a99 = _quantiles(attacked)
    what = f"{ATTACKERS} clients posting 1 MiB costly tool lists, /healthz every 20 ms, {seconds:.0f} s each"
    print(f"diff attack: {what}")
    print(f"  served from            {tree or 'this checkout'}")
    for name, (p50, p95, p99), n in (
        ("idle", (i50, i95, i99), len(idle)),
        ("under attack", (a50, a95, a99), len(attacked)),
    ):
        print(f"  /healthz {name:<13} p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  p99 {p99:7.2f} ms  ({n} requests)")
    print(f"  p95 under attack / idle  {a95 / i95:.2f}  (goal: at most 2)")
    print(f"  comparisons answered   {answers}")


if __name__ == "__main__":
    main()
