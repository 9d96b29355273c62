"""The 90-day uptime strip of a server page: one bar per UTC day, drawn as inline SVG on the server.

Policy: the strip ends today (UTC) and holds :data:`DAYS` days, oldest on the left. A day's
state is the history's (:func:`app.history.uptime.day_state`: ``down`` when any run found it
down, else ``up`` when a run found it up or behind sign-in, else ``left_out``); a day without
any kept run is ``none``. Each bar has a ``<title>`` (the day, its state and its counts), a
class per state (coloured by the stylesheet), and the legend repeats the states in text, with
how many days had each, so nothing is told by colour alone (WCAG 2.2, 1.4.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Any, Final

from app.history.records import Day
from app.history.uptime import day_state

DAYS: Final = 90
#: Bar width and gap, and the strip's height, in SVG user units.
BAR: Final = 6
GAP: Final = 2
HEIGHT: Final = 32
STATE_WORDS: Final = {"up": "up", "down": "down", "left_out": "not counted", "none": "no check"}


def strip(days: Sequence[Day], today: date) -> dict[str, Any]:
    """The bars (``x``, ``state``, ``title``), the strip's width and height, and the legend."""
    first = today - timedelta(days=DAYS - 1)
    by_day = {day.day: day for day in days}
    bars = []
    counts = dict.fromkeys(STATE_WORDS, 0)
    for index in range(DAYS):
        when = first + timedelta(days=index)
        found = by_day.get(when)
        if found is None:
            state, title = "none", f"{when.isoformat()}: no check kept"
        else:
            state = day_state(found.up, found.gated, found.down)
            title = (
                f"{when.isoformat()}: {STATE_WORDS[state]} ({found.up} up, {found.gated} behind sign-in, "
                f"{found.down} down, {found.left_out} not counted)"
            )
        counts[state] += 1
        bars.append({"x": index * (BAR + GAP), "state": state, "title": title})
    legend = [{"state": state, "words": words, "days": counts[state]} for state, words in STATE_WORDS.items()]
    return {
        "bars": bars,
        "bar_width": BAR,
        "width": DAYS * (BAR + GAP) - GAP,
        "height": HEIGHT,
        "legend": legend,
        "first": first.isoformat(),
        "last": today.isoformat(),
    }
