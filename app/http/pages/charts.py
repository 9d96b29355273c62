"""Bar charts drawn on the server as inline SVG (no chart library, no script): the geometry only.

A :func:`bars` chart is one horizontal bar per row, its length proportional to the row's value
against the largest one, with the label above it and the value right of it. The template
(``_bars.html``) draws it with a ``<title>`` and ``<desc>`` (``role="img"``) and the same
figures as a table beside it (folded), so nothing is said only by the drawing. Labels may be
servers' text (protocol versions): they stay data, escaped by the template.

Legibility: the drawing is :data:`WIDTH` units wide and drawn at most that many CSS pixels wide
(never scaled up), so its text (:data:`FONT` units) is drawn at ``FONT × shown width / WIDTH``
pixels: at least 12 px wherever the chart is given 310 px or more (a 390 px phone gives it 358).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: Geometry of a chart, in SVG user units: a row is its label's line, then its bar.
WIDTH: Final = 360
FONT: Final = 14
VALUE: Final = 110
ROW: Final = 44
LABEL_BASELINE: Final = 15
BAR_TOP: Final = 21
BAR: Final = 16
#: Longest label drawn in full (the table beside the chart has it whole).
LABEL_CHARS: Final = 44


@dataclass(frozen=True)
class Bar:
    """One bar: its label (as drawn and whole), value, its text, and where it is drawn."""

    label: str
    short: str
    value: int
    text: str
    y: int
    width: float


@dataclass(frozen=True)
class Chart:
    """A chart's id, title, description and bars, and its size."""

    id: str
    title: str
    desc: str
    bars: tuple[Bar, ...]
    width: int
    height: int
    font: int
    label_baseline: int
    bar_top: int
    bar_height: int


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"


def bars(chart_id: str, title: str, desc: str, rows: list[tuple[str, int, str]]) -> Chart:
    """A chart of ``rows`` (``(label, value, value as text)``), in the order given."""
    top = max((value for _, value, _ in rows), default=0)
    span = WIDTH - VALUE
    drawn = tuple(
        Bar(label, _short(label), value, text, i * ROW, round(span * value / top, 1) if top else 0.0)
        for i, (label, value, text) in enumerate(rows)
    )
    height = max(ROW * len(rows), ROW)
    return Chart(chart_id, title, desc, drawn, WIDTH, height, FONT, LABEL_BASELINE, BAR_TOP, BAR)
