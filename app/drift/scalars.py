"""Numbers and strings: one new branch against one old piece of the same kind.

Rules (JSON Schema 2020-12 validation, sections 6.2 and 6.3; the kinds of ``type`` in 6.1.1):

- ``type: integer`` where numbers with a fraction were allowed is ``type_narrowed`` (example:
  a number with a fraction within the old bounds); the reverse is ``type_widened``. A
  ``multipleOf`` with a whole step makes the old numbers integers too.
- Bounds are compared as exact fractions (:mod:`app.drift.bounds`); ``exclusiveMinimum``/``exclusiveMaximum`` in their
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

from fractions import Fraction
from typing import TYPE_CHECKING

from app.drift import bounds, regex
from app.drift.bounds import LENGTH
from app.drift.branches import Branch
from app.drift.notes import Note, Place

if TYPE_CHECKING:
    from app.drift.checker import Checker

#: An old integer range at most this wide is compared value by value with a new ``enum``.
SPAN = 64


def integers(branch: Branch) -> list[int] | None:
    """The integers of a whole-number piece with both bounds and at most :data:`SPAN` values."""
    if not branch.whole():
        return None
    low, high = bounds.whole_point(branch.lo, True, True), bounds.whole_point(branch.hi, False, True)
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
    for lower in (True, False):
        bounds.numeric(check, lower, new, old, whole, place, sink)
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
    strings = check.sampler.strings
    bounds.count(check, LENGTH, True, new, old, place, sink, lambda n: strings(old, longest=n - 1))
    bounds.count(check, LENGTH, False, new, old, place, sink, lambda n: strings(old, shortest=n + 1))
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
