"""The 90-day strip: one bar per day ending today, each state counted in the legend."""

from __future__ import annotations

from datetime import date, timedelta

from app.history.records import Day
from app.http.pages.uptime import DAYS, strip

TODAY = date(2026, 6, 30)


def test_each_day_is_one_bar_with_its_state_and_counts() -> None:
    days = [
        Day(TODAY, up=3, gated=0, down=0, left_out=0),
        Day(TODAY - timedelta(days=1), up=2, gated=0, down=1, left_out=0),
        Day(TODAY - timedelta(days=2), up=0, gated=1, down=0, left_out=0),
        Day(TODAY - timedelta(days=3), up=0, gated=0, down=0, left_out=2),
        Day(TODAY - timedelta(days=DAYS), up=5, gated=0, down=0, left_out=0),  # before the strip
    ]
    drawn = strip(days, TODAY)
    states = [bar["state"] for bar in drawn["bars"]]
    assert len(states) == DAYS and states[-4:] == ["left_out", "up", "down", "up"]
    assert drawn["first"] == (TODAY - timedelta(days=DAYS - 1)).isoformat() and drawn["last"] == TODAY.isoformat()
    assert drawn["bars"][-2]["title"] == "2026-06-29: down (2 up, 0 behind sign-in, 1 down, 0 not counted)"
    assert {entry["state"]: entry["days"] for entry in drawn["legend"]} == {
        "up": 2, "down": 1, "left_out": 1, "none": DAYS - 4,
    }  # fmt: skip
    xs = [bar["x"] for bar in drawn["bars"]]
    assert xs == sorted(xs) and xs[-1] + drawn["bar_width"] == drawn["width"]
