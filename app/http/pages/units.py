"""Figures as people read them on the pages: sizes, durations and times (one place for all).

- sizes in binary multiples with the short names people expect (256 kB is 262,144 bytes);
- durations in the largest unit that keeps them whole or short: ``15 s``, ``5 min``,
  ``24 hours``, ``7 days``;
- times in UTC to the minute, ``2026-12-03 13:40 UTC`` (an ISO 8601 string from a JSON document
  is read the same way; anything else is shown as it is, escaped like all text).
"""

from __future__ import annotations

from datetime import UTC, datetime


def size(count: int) -> str:
    """``262144`` -> ``256 kB``."""
    value = float(count)
    for unit in ("bytes", "kB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def duration(seconds: float) -> str:
    """``15`` -> ``15 s``; ``300`` -> ``5 min``; ``86400`` -> ``24 hours``; ``604800`` -> ``7 days``."""
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:g} min"
    hours = seconds / 3600
    return f"{hours:g} hours" if hours < 48 else f"{hours / 24:g} days"


def moment(value: datetime | str | None) -> str:
    """A time in UTC to the minute (``—`` for none)."""
    if value is None:
        return "—"
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
