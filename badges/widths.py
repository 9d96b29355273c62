"""Text widths from the Verdana width tables (anafanafo 2.0.0 data, see ``data/README.md``).

Same rules as anafanafo's ``char-width-table-consumer``: per-code-point widths summed left to
right with no kerning, control characters (<= 31 and 127) are 0 wide, and a code point missing
from the table counts as wide as ``m``.
"""

from __future__ import annotations

import bisect
import functools
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
FONTS = {
    "11px Verdana": "verdana-11px-normal.json",
    "10px Verdana": "verdana-10px-normal.json",
    "bold 10px Verdana": "verdana-10px-bold.json",
}


class WidthTable:
    """One font's table of ``[first, last, width]`` code point ranges."""

    def __init__(self, ranges: list[list[float]]) -> None:
        self._starts = [int(r[0]) for r in ranges]
        self._ranges = ranges
        self._em = self.width_of("m")

    def _char(self, code: int) -> float | None:
        if code <= 31 or code == 127:
            return 0.0
        index = bisect.bisect_right(self._starts, code) - 1
        if index < 0:
            return None
        first, last, width = self._ranges[index]
        return float(width) if first <= code <= last else None

    def width_of(self, text: str) -> float:
        """Width of ``text`` in px (a float, as anafanafo returns it)."""
        total = 0.0
        for char in text:
            width = self._char(ord(char))
            total += self._em if width is None else width
        return total


@functools.cache
def table(font: str) -> WidthTable:
    """The table for ``font`` (one of :data:`FONTS`), loaded once."""
    ranges = json.loads((DATA / FONTS[font]).read_text())
    return WidthTable(ranges)


def width_of(text: str, font: str = "11px Verdana") -> float:
    """Width of ``text`` in px for ``font``."""
    return table(font).width_of(text)
