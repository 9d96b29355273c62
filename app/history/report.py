"""A server's history as the API reports it, from stored days and runs (pure functions).

- **Uptime rates** over 7, 30 and 90 UTC days ending today: the share of *counted* days that
  were ``up`` (:func:`app.history.uptime.day_state`); ``left_out`` days and days without a run
  are not counted, and each rate says how many days were. A rate over fewer than
  :data:`MIN_COUNTED_DAYS` counted days is reported, but the uptime badge stays grey.
- **Latency percentiles** (p50, p90, p99 of the handshake latency, nearest-rank) over the runs
  that reached the server.
- **Status changes**: each run whose status class differs from the run before it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from app.history.records import Day
from app.history.uptime import day_state

WINDOWS = (7, 30, 90)
#: Statuses of runs that never reached the server (their latency is not the server's).
UNREACHED = ("dns", "unreachable", "timeout")
MIN_COUNTED_DAYS = 7


def rates(days: Sequence[Day], today: date) -> dict[str, dict[str, Any]]:
    """``{"7d": {"rate", "counted_days", "up_days", "down_days"}, ...}`` (``rate`` null with no counted day)."""
    states = {day.day: day_state(day.up, day.gated, day.down) for day in days}
    out: dict[str, dict[str, Any]] = {}
    for window in WINDOWS:
        first = today - timedelta(days=window - 1)
        counted = [state for when, state in states.items() if first <= when <= today and state != "left_out"]
        up = sum(state == "up" for state in counted)
        out[f"{window}d"] = {
            "rate": round(up / len(counted), 4) if counted else None,
            "counted_days": len(counted),
            "up_days": up,
            "down_days": len(counted) - up,
        }
    return out


def daily(days: Sequence[Day]) -> list[dict[str, Any]]:
    """Each stored day with its state and counts, oldest first."""
    return [
        {"day": day.day.isoformat(), "state": day_state(day.up, day.gated, day.down), "up": day.up,
         "gated": day.gated, "down": day.down, "left_out": day.left_out}
        for day in days
    ]  # fmt: skip


def percentiles(latencies: Sequence[float]) -> dict[str, float | None]:
    """Nearest-rank p50, p90 and p99 (``None`` without a sample)."""
    ordered = sorted(latencies)
    if not ordered:
        return {"p50_ms": None, "p90_ms": None, "p99_ms": None}
    pick = {q: ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)] for q in (50, 90, 99)}
    return {"p50_ms": pick[50], "p90_ms": pick[90], "p99_ms": pick[99]}


def status_changes(points: Sequence[tuple[datetime, str, str, float | None]]) -> list[dict[str, str]]:
    """``[{"at", "from", "to", "reason"}]`` for each run ``(observed_at, status, reason, latency)``
    whose status differs from the one before (points oldest first)."""
    changes: list[dict[str, str]] = []
    for previous, (at, status, reason, _latency) in itertools.pairwise(points):
        before = previous[1]
        if status != before:
            changes.append(
                {"at": at.isoformat().replace("+00:00", "Z"), "from": before, "to": status, "reason": reason}
            )
    return changes
