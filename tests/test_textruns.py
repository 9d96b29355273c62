"""Long runs of combining marks: the prefiltered search agrees with a plain count, and cutting keeps 30."""

from __future__ import annotations

import itertools
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from app.textruns import MAX_MARKS, cut_mark_runs, has_long_mark_run


def longest_run(text: str) -> int:
    runs = [
        len(list(group)) for mark, group in itertools.groupby(text, lambda c: unicodedata.category(c)[0] == "M") if mark
    ]
    return max(runs, default=0)


_PIECES = st.sampled_from(["a", " ", "\u0301", "\u0316", "\u3099", "\u05b0", "日", "é", "Ж", "\U0001d167", "\u0903"])


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_PIECES, st.integers(min_value=1, max_value=40)), max_size=12))
def test_property_the_search_is_a_plain_count(pieces: list[tuple[str, int]]) -> None:
    text = "".join(piece * count for piece, count in pieces)
    assert has_long_mark_run(text) == (longest_run(text) > MAX_MARKS)
    cut = cut_mark_runs(text)
    assert longest_run(cut) == min(longest_run(text), MAX_MARKS)
    assert not has_long_mark_run(cut)


def test_a_quarter_megabyte_of_marks_is_found_and_cut() -> None:
    bomb = "a" + "\u0301\u0316" * 60000
    assert has_long_mark_run(bomb) and cut_mark_runs(bomb) == "a" + ("\u0301\u0316" * 15)
