"""Benchmark: the CPU a full check costs, against the probe before the check suite existed.

Baseline: ``probe()`` of the named commit (:data:`BASELINE`, the last commit before the check
suite: handshake, ``tools/list``, session end), extracted with ``git archive`` and run in a child
process on this same interpreter. Measured: ``full_check()`` of this tree (the same steps, the
refusal call, and every judge of the suite), and ``probe()`` of this tree. All three run N
times sequentially against the same local ``mcp`` SDK server (separate process); the figure is
the client process's CPU time per probe (``time.process_time``), median of R repeats, and the
ratio full check / baseline (goal: at most 1.3).

Usage: ``python -m bench.checks [N] [REPEATS]`` (defaults 200, 5).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._servers import sdk_fixture_process

BASELINE = "975f694"
ROOT = Path(__file__).resolve().parent.parent

_MEASURE = """
import sys, time, anyio
from app.settings import Settings
{imports}
async def main(url, n):
    settings = Settings(allow_private=True)
    for _ in range(5):
        await {call}
    started = time.process_time()
    for _ in range(n):
        result = await {call}
        assert result.status == "ok", result.reason
    print((time.process_time() - started) / n * 1000)
anyio.run(main, sys.argv[1], int(sys.argv[2]))
"""

_CASES = {
    "baseline probe()": ("from app.probe import probe", "probe(url, settings=settings)"),
    "probe() now": ("from app.probe import probe", "probe(url, settings=settings)"),
    "full_check() now": ("from app.suite.full import full_check", "full_check(url, settings=settings)"),
}


def _cpu_ms(tree: Path, case: str, url: str, n: int) -> float:
    imports, call = _CASES[case]
    code = _MEASURE.format(imports=imports, call=call)
    out = subprocess.run(
        [sys.executable, "-c", code, url, str(n)], cwd=tree, capture_output=True, text=True, check=True, timeout=600
    )
    return float(out.stdout.strip().splitlines()[-1])


def _baseline_tree(into: Path) -> Path:
    archive = subprocess.run(["git", "archive", BASELINE, "app"], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run(n: int, repeats: int) -> list[tuple[str, str, float]]:
    """Rows (server, case, median CPU ms per probe)."""
    rows = []
    with tempfile.TemporaryDirectory() as scratch, sdk_fixture_process() as base:
        baseline = _baseline_tree(Path(scratch))
        for label, mount in (("modern", "stateless-json"), ("legacy", "initialize-only")):
            url = f"{base}/{mount}/mcp"
            for case in _CASES:
                tree = baseline if case.startswith("baseline") else ROOT
                samples = [_cpu_ms(tree, case, url, n) for _ in range(repeats)]
                rows.append((label, case, statistics.median(samples)))
    return rows


def main() -> None:
    """Print the table."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    started = time.monotonic()
    rows = run(n, repeats)
    print(f"check-suite cost: client CPU ms per probe, N={n} sequential, median of {repeats} (baseline {BASELINE})")
    print(f"{'server':<8}{'case':<20}{'CPU ms':>9}{'vs baseline':>13}")
    for server, case, ms in rows:
        base = next(v for s, c, v in rows if s == server and c.startswith("baseline"))
        print(f"{server:<8}{case:<20}{ms:>9.3f}{ms / base:>13.2f}")
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
