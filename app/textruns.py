"""Long runs of combining marks: found and cut in linear time, before any normalisation.

Unicode normalisation reorders each run of combining marks by canonical combining class, and
CPython's ``unicodedata.normalize`` takes time quadratic in a run's length: one 240 kB string of
alternating marks holds the GIL for seconds. UAX #15 section 13 (Stream-Safe Text Format)
bounds a run to 30 non-starters; here a run is 30 characters of General Category Mark (Mn, Mc,
Me: every non-starter is one). Text with a longer run is refused where a canonical form is
made (:mod:`app.canonical`) and cut where it is only scanned (:mod:`app.suite.hygiene`).
The pattern is built from the Unicode database on first use (about 0.1 s, once).
"""

from __future__ import annotations

import functools
import re
import sys
import unicodedata

#: Most marks in a row that text may hold (UAX #15 section 13).
MAX_MARKS = 30


@functools.cache
def _marks() -> str:
    """A character class of every code point of General Category Mark, as ranges."""
    ranges: list[str] = []
    start = previous = -2
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code)).startswith("M"):
            if code != previous + 1:
                if start >= 0:
                    ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(previous))}")
                start = code
            previous = code
    ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(previous))}")
    return "[" + "".join(ranges) + "]"


@functools.cache
def _long_run() -> re.Pattern[str]:
    return re.compile(f"{_marks()}{{{MAX_MARKS + 1},}}")


#: Where a long run can be: no mark lies below U+0300, so a run of marks lies within a run of
#: characters from U+0300 up, which ordinary text (spaces, Latin letters) keeps short. Only
#: such stretches meet the exact pattern, whose many ranges cost about 150 ns a character.
_CANDIDATE = re.compile(f"[^\x00-\u02ff]{{{MAX_MARKS + 1},}}")


def has_long_mark_run(text: str) -> bool:
    """Whether ``text`` holds more than :data:`MAX_MARKS` marks in a row."""
    if text.isascii():
        return False
    return any(_long_run().search(stretch.group()) for stretch in _CANDIDATE.finditer(text))


def cut_mark_runs(text: str) -> str:
    """``text`` with every run of marks cut to :data:`MAX_MARKS`."""
    if text.isascii():
        return text
    return _CANDIDATE.sub(lambda stretch: _long_run().sub(lambda m: m.group()[:MAX_MARKS], stretch.group()), text)
