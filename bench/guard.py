"""The regression guard: run the fast benchmarks, print each figure beside its goal, fail on a gross loss.

``bench/run --check`` runs this. The figures, their goals and their last figures on main are
data (``bench/goals.yaml``); each benchmark runs once as its own process (figures that come from
the same run share it). A figure fails the guard when it is past its bound:

- one that meets its goal on main: a throughput ratio under half the goal, a time or a size
  over twice the goal;
- one that does not meet it yet: the same against its own figure on main, so a change that
  halves what is there is seen even before the goal is reached.

A figure marked ``guarded: false`` is printed and never fails the guard: an absolute CPU time
follows the host's speed (the same commit's full check took 1.4 ms and 5.5 ms of CPU on this
project's virtual machine on two days, its neighbours' load being what changed), so what is
guarded is its ratio to the baseline measured in the same run.

A benchmark that fails to run fails the guard and says why in one line. Exit status 0 when
every figure is within its bound, 1 otherwise.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

GOALS = Path(__file__).with_name("goals.yaml")
#: Seconds one benchmark may take before the guard gives up on it.
BENCH_TIMEOUT_S = 600


@dataclass(frozen=True)
class Goal:
    """One guarded figure (see ``bench/goals.yaml``)."""

    key: str
    label: str
    bench: tuple[str, ...]
    pattern: str
    goal: float
    better: Literal["higher", "lower"]
    main: float
    guarded: bool = True

    def met(self, figure: float) -> bool:
        """Whether ``figure`` meets the goal."""
        return figure >= self.goal if self.better == "higher" else figure <= self.goal

    @property
    def bound(self) -> float:
        """The worst figure that still passes (see the module docs)."""
        if self.better == "higher":
            return min(self.goal, self.main) / 2
        return max(self.goal, self.main) * 2

    def within(self, figure: float) -> bool:
        """Whether ``figure`` is within the bound."""
        return figure >= self.bound if self.better == "higher" else figure <= self.bound


def goals(path: Path = GOALS) -> list[Goal]:
    """The guarded figures, in the file's order."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [Goal(key=key, **{**entry, "bench": tuple(entry["bench"])}) for key, entry in data.items()]


def _run(command: tuple[str, ...]) -> tuple[str, str | None]:
    """The benchmark's output, and why it failed (``None``: it ran)."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", *command], capture_output=True, text=True, timeout=BENCH_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return "", f"did not finish in {BENCH_TIMEOUT_S} s"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return done.stdout, last[:100]
    return done.stdout, None


def check(items: list[Goal]) -> tuple[list[tuple[str, ...]], bool]:
    """Run the benchmarks; the table's rows and whether every figure passed."""
    outputs: dict[tuple[str, ...], tuple[str, str | None, float]] = {}
    rows: list[tuple[str, ...]] = []
    passed = True
    for item in items:
        if item.bench not in outputs:
            started = time.monotonic()
            out, failed = _run(item.bench)
            outputs[item.bench] = (out, failed, time.monotonic() - started)
        out, failed, took = outputs[item.bench]
        found = re.search(item.pattern, out, flags=re.MULTILINE)
        if failed is not None or found is None:
            passed = False
            why = failed or f"its output has no figure for {item.pattern!r}"
            rows.append((item.label, "failed", f"{item.goal:g}", f"{item.main:g}", "-", f"FAIL, {why}"))
            continue
        figure = float(found.group(1))
        verdict = "pass, meets goal" if item.met(figure) else "pass, misses goal"
        if not item.guarded:
            verdict = ("meets goal" if item.met(figure) else "misses goal") + ", shown only (not guarded)"
        elif not item.within(figure):
            passed = False
            verdict = "FAIL, gross regression (past the bound)"
        side = ">=" if item.better == "higher" else "<="
        rows.append(
            (
                item.label,
                f"{figure:g}",
                f"{side} {item.goal:g}",
                f"{item.main:g}",
                f"{item.bound:g}" if item.guarded else "-",
                f"{verdict} ({took:.0f} s)",
            )
        )
    return rows, passed


def main() -> int:
    """Print the table; the exit status."""
    rows, passed = check(goals())
    table = [("figure", "now", "goal", "main", "bound", "verdict"), *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    print(
        "(bound: the worst figure that passes: half of the goal, or of main's figure when main misses the goal,"
        " for a ratio; twice it for a time or a size; the seconds are the benchmark's run)"
    )
    print("guard: every figure within its bound" if passed else "guard: FAILED (see the rows above)")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
