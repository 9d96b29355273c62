"""The regression guard's bounds and its catalogue (bench/guard.py, bench/goals.yaml)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from bench.guard import Goal, check, goals


def goal(better: str, value: float, main: float) -> Goal:
    return Goal("x", "x", ("bench.cpu",), r"(\d+)", value, better, main)  # type: ignore[arg-type]


def test_a_ratio_that_meets_its_goal_fails_only_under_half_of_the_goal() -> None:
    met = goal("higher", 0.9, 0.95)
    assert met.bound == 0.45
    assert met.within(0.46) and not met.within(0.44)
    assert met.met(0.9) and not met.met(0.89)


def test_a_ratio_below_its_goal_fails_under_half_of_its_figure_on_main() -> None:
    below = goal("higher", 0.9, 0.6)
    assert below.bound == 0.3
    assert below.within(0.31) and not below.within(0.29)


def test_a_time_fails_over_twice_the_goal_or_twice_main_when_main_is_worse() -> None:
    assert goal("lower", 100, 62).bound == 200
    assert goal("lower", 1.0, 3.4).bound == 6.8
    assert goal("lower", 1.0, 3.4).within(6.8) and not goal("lower", 1.0, 3.4).within(6.9)


def test_every_guarded_figure_names_a_benchmark_module_and_a_pattern_with_one_group() -> None:
    items = goals()
    assert {item.key for item in items} >= {"cached_badge", "check_route", "probe_cpu", "cli_first_packet"}
    for item in items:
        assert importlib.util.find_spec(item.bench[0]) is not None, item.bench
        assert re.compile(item.pattern).groups == 1, item.key
        assert item.better in ("higher", "lower") and item.goal > 0 and item.main > 0


def test_a_benchmark_that_fails_fails_the_guard_with_its_last_line(tmp_path: Path) -> None:
    broken = Goal("x", "broken", ("bench.no_such_module",), r"(\d+)", 1.0, "lower", 1.0)
    rows, passed = check([broken])
    assert not passed
    assert rows[0][1] == "failed" and "No module named" in rows[0][-1]


def test_a_figure_past_its_bound_fails_the_guard() -> None:
    startup = next(item for item in goals() if item.key == "cli_first_packet")
    absurd = Goal(
        "x", "absurd", startup.bench, startup.pattern, 0.001, "lower", 0.001
    )  # (any real figure is past 0.002 ms)
    rows, passed = check([absurd])
    assert not passed and rows[0][-1].startswith("FAIL, gross regression")


def test_a_figure_shown_only_never_fails_the_guard_and_its_ratio_is_guarded() -> None:
    """An absolute CPU time follows the host's speed: it is printed, and its ratio to the baseline
    of the same run is what the guard holds."""
    startup = next(item for item in goals() if item.key == "cli_first_packet")
    shown = Goal("x", "shown", startup.bench, startup.pattern, 0.001, "lower", 0.001, guarded=False)
    rows, passed = check([shown])
    assert passed and rows[0][-1].startswith("misses goal, shown only") and rows[0][4] == "-"
    by_key = {item.key: item for item in goals()}
    assert not by_key["probe_cpu"].guarded
    ratio = by_key["probe_cpu_ratio"]
    assert ratio.guarded and ratio.bench == by_key["probe_cpu"].bench
    out = "  full_check()  5.539 ms  ratio to the SDK client  0.34\n  probe()  4.1 ms  ratio to the SDK client  0.2\n"
    found = re.search(ratio.pattern, out, flags=re.MULTILINE)
    assert found is not None and found.group(1) == "0.34"
