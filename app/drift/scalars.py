"""Numbers and strings: one new branch against one old piece of the same kind.

Rules (JSON Schema 2020-12 validation, sections 6.2 and 6.3; the kinds of ``type`` in 6.1.1):

- ``type: integer`` where numbers with a fraction were allowed is ``type_narrowed`` (example:
  a number with a fraction within the old bounds); the reverse is ``type_widened``. A
  ``multipleOf`` with a whole step makes the old numbers integers too.
- Bounds are compared as exact fractions; ``exclusiveMinimum``/``exclusiveMaximum`` in their
  2020-12 numeric form and their draft-04 boolean form are one bound with an exclusive flag. Over
  integers, bounds are first rounded to the inclusive integer bound they mean (``exclusiveMinimum:
  0`` is ``minimum: 1``). A raised lower or lowered upper bound is breaking, with the nearest old
  value beyond the new bound as an example.
- ``multipleOf: m`` is implied by an old ``multipleOf`` that is a whole multiple of ``m``, or by
  integers when ``1/m`` is whole; otherwise it is tightened.
- ``minLength``/``maxLength`` compare as counts. A new ``pattern`` is breaking only with an
  example (an old string it rejects, found among simple candidates), else ``pattern_changed``:
  whether one regular language contains another is not decided here. A ``pattern`` dropped is
  compatible.
- ``format`` is an annotation by default in 2020-12 (section 7.2.1) but an assertion in many
  servers: one added or changed is ``unknown`` (``format_changed``), one dropped compatible.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from app.drift import regex
from app.drift.branches import Bound, Branch
from app.drift.notes import Note, Place

if TYPE_CHECKING:
    from app.drift.checker import Checker

#: An old integer range at most this wide is compared value by value with a new ``enum``.
SPAN = 64


def _whole_bound(bound: Bound | None, lower: bool, whole: bool) -> tuple[Fraction, bool] | None:
    if bound is None:
        return None
    if not whole:
        return bound.value, bound.exclusive
    value = bound.value
    if lower:
        rounded = math.floor(value) + 1 if bound.exclusive else math.ceil(value)
    else:
        rounded = math.ceil(value) - 1 if bound.exclusive else math.floor(value)
    return Fraction(rounded), False


def _stricter(first: tuple[Fraction, bool] | None, second: tuple[Fraction, bool] | None, lower: bool) -> bool:
    """Whether bound ``first`` excludes a value ``second`` allows (``None``: unbounded)."""
    if first is None:
        return False
    if second is None:
        return True
    if first[0] == second[0]:
        return first[1] and not second[1]
    return first[0] > second[0] if lower else first[0] < second[0]


def integers(branch: Branch) -> list[int] | None:
    """The integers of a whole-number piece with both bounds and at most :data:`SPAN` values."""
    if not branch.whole():
        return None
    low, high = _whole_bound(branch.lo, True, True), _whole_bound(branch.hi, False, True)
    if low is None or high is None or high[0] - low[0] >= SPAN:
        return None
    steps = [step for step, _, _ in branch.multiples]
    return [n for n in range(int(low[0]), int(high[0]) + 1) if all((n / step).denominator == 1 for step in steps)]


def _implied(step: Fraction, old: Branch) -> bool:
    if any((mine / step).denominator == 1 for mine, _, _ in old.multiples):
        return True
    return old.int_only() and (1 / step).denominator == 1


def numbers(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    """Compare the number keywords of a ``sup`` branch (``new``) with a ``sub`` piece (``old``)."""
    whole = old.whole()
    if new.int_only() and not whole:
        check.fail(
            sink,
            "type",
            place,
            sup_at=new.type_at,
            sub_at=old.type_at,
            sup_val=new.type_raw,
            sub_val=old.type_raw,
            candidates=check.sampler.numbers(old, fractional=True),
            branch=old,
        )
    elif old.int_only() and not new.whole():
        check.relax(sink, "type", sup_at=new.type_at, sub_at=old.type_at, sup_val=new.type_raw, sub_val=old.type_raw)
    for lower, family in ((True, "minimum"), (False, "maximum")):
        mine, theirs = (new.lo, old.lo) if lower else (new.hi, old.hi)
        a, b = _whole_bound(mine, lower, whole), _whole_bound(theirs, lower, whole)
        sup_at, sub_at = mine.pointer if mine else None, theirs.pointer if theirs else None
        sup_val, sub_val = mine.raw if mine else None, theirs.raw if theirs else None
        if a is not None and _stricter(a, b, lower):
            region = (a[0], a[1])
            candidates = check.sampler.numbers(old, below=region) if lower else check.sampler.numbers(old, above=region)
            check.fail(
                sink,
                family,
                place,
                sup_at=sup_at,
                sub_at=sub_at,
                sup_val=sup_val,
                sub_val=sub_val,
                candidates=candidates,
                branch=old,
            )
        elif _stricter(b, a, lower):
            check.relax(sink, family, sup_at=sup_at, sub_at=sub_at, sup_val=sup_val, sub_val=sub_val)
    for step, at, raw in new.multiples:
        if not _implied(step, old):
            other = old.multiples[0] if old.multiples else None
            check.fail(
                sink,
                "multiple_of",
                place,
                sup_at=at,
                sub_at=other[1] if other else None,
                sup_val=raw,
                sub_val=other[2] if other else None,
                candidates=check.sampler.numbers(old, avoid=step),
                branch=old,
            )
    steps = {step for step, _, _ in new.multiples}
    tightened = any(not _implied(step, old) for step in steps)
    for step, at, raw in old.multiples:
        if step not in steps and not tightened:
            kept = new.multiples[0] if new.multiples else None
            check.relax(
                sink,
                "multiple_of",
                sup_at=kept[1] if kept else None,
                sub_at=at,
                sup_val=kept[2] if kept else None,
                sub_val=raw,
            )


def strings(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    """Compare the string keywords of a ``sup`` branch (``new``) with a ``sub`` piece (``old``)."""
    low_new = new.min_len.value if new.min_len else 0
    low_old = old.min_len.value if old.min_len else 0
    at = (new.min_len.pointer if new.min_len else None, old.min_len.pointer if old.min_len else None)
    if low_new > low_old:
        check.fail(
            sink,
            "min_length",
            place,
            sup_at=at[0],
            sub_at=at[1],
            sup_val=low_new,
            sub_val=low_old,
            candidates=check.sampler.strings(old, longest=low_new - 1),
            branch=old,
        )
    elif low_old > low_new:
        check.relax(sink, "min_length", sup_at=at[0], sub_at=at[1], sup_val=low_new, sub_val=low_old)
    high_new = new.max_len.value if new.max_len else None
    high_old = old.max_len.value if old.max_len else None
    at = (new.max_len.pointer if new.max_len else None, old.max_len.pointer if old.max_len else None)
    if high_new is not None and (high_old is None or high_new < high_old):
        check.fail(
            sink,
            "max_length",
            place,
            sup_at=at[0],
            sub_at=at[1],
            sup_val=high_new,
            sub_val=high_old,
            candidates=check.sampler.strings(old, shortest=high_new + 1),
            branch=old,
        )
    elif high_old is not None and (high_new is None or high_new > high_old):
        check.relax(sink, "max_length", sup_at=at[0], sub_at=at[1], sup_val=high_new, sub_val=high_old)
    _patterns(check, new, old, place, sink)
    old_formats = {name for name, _ in old.formats}
    for name, where in new.formats:
        if name not in old_formats:
            theirs = old.formats[0] if old.formats else None
            check.undecided(
                sink, "format_changed", where, family="format", sup_val=name, sub_val=theirs[0] if theirs else None
            )
    new_formats = {name for name, _ in new.formats}
    for name, where in old.formats:
        if name not in new_formats:
            check.relax(sink, "format", sup_at=None, sub_at=where, sub_val=name)


def _patterns(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    old_patterns = {pattern for pattern, _ in old.patterns}
    theirs = old.patterns[0] if old.patterns else None
    for pattern, where in new.patterns:
        if pattern in old_patterns:
            continue
        if not regex.supported(pattern):
            check.undecided(sink, "regex_unsupported", where, family="pattern", sup_val=pattern)
            continue
        candidates = (text for text in check.sampler.strings(old) if regex.search(pattern, text) is False)
        check.fail(
            sink,
            "pattern",
            place,
            sup_at=where,
            sub_at=theirs[1] if theirs else None,
            sup_val=pattern,
            sub_val=theirs[0] if theirs else None,
            candidates=candidates,
            branch=old,
            unconfirmed="pattern_changed",
        )
    new_patterns = {pattern for pattern, _ in new.patterns}
    for pattern, where in old.patterns:
        if pattern not in new_patterns:
            check.relax(sink, "pattern", sup_at=None, sub_at=where, sub_val=pattern)
