"""Pieces with finitely many values: each old value is checked against the new schema.

An old ``enum``, ``const``, ``null`` or ``boolean`` piece is admitted exactly when each value it
really holds (checked with the validator) validates under the whole new schema (JSON Schema
2020-12 validation 6.1.2, 6.1.3); a value that fails is the example, and the keyword it fails
names the rule (a value outside a new ``enum`` is ``enum_value_removed``, a number above a new
``maximum`` is ``maximum_lowered``...). A new ``enum`` against an old piece with infinitely many
values is ``enum_added``, with an old value outside it, except for an old integer range of at
most :data:`~app.drift.scalars.SPAN` values, which is compared value by value.
"""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING, Any

from app.drift import scalars
from app.drift.bounds import LENGTH, NUMBER
from app.drift.branches import Branch, finite, kinds, kinds_of
from app.drift.document import Conj
from app.drift.jsonvalue import member
from app.drift.limits import MAX_VALUES
from app.drift.notes import Note, Place
from app.drift.sample import without

if TYPE_CHECKING:
    from app.drift.checker import Checker

#: The family of a change told by the keyword an old value fails in the new schema.
FAILED: dict[str, str] = {
    "type": "type",
    "enum": "enum_value",
    "const": "const",
    "false": "schema_false",
    **NUMBER.failed(),
    "multipleOf": "multiple_of",
    **LENGTH.failed(),  # not the counts of arrays and objects: an old value they reject is ``value``
    "pattern": "pattern",
}


def values(
    check: Checker,
    a: Conj,
    a_branches: list[Branch],
    b: Branch,
    kind: str,
    values: list[Any],
    place: Place,
    sink: list[Note],
) -> None:
    if len(values) > MAX_VALUES:
        check.undecided(sink, "too_large", b.values_at or b.type_at or "")
        return
    for value in values:
        if check.sub_val.valid_conj(tuple(b.refs), value) is False:
            continue  # not an old value after all (another keyword of the piece excludes it)
        ok = check.sup_val.valid_conj(a, value)
        if ok is True:
            continue
        if ok is None:
            check.undecided(sink, check.sup_val.reason or "invalid_schema", a[0].pointer, family="value", sub_val=value)
            continue
        at, keyword = check.sup_val.failure or (a[0].pointer, "false")
        family = FAILED.get(keyword, "value")
        if family == "value" and all(kind not in kinds_of(x) for x in a_branches):
            family = "type"
        if family == "const" and b.values_kw != "const":
            family = "enum_value" if b.values is not None else "enum"
        elif family == "enum_value" and b.values is None:
            family = "enum"
        sup_val = value if family == "enum_value" else check.sup.at(at)
        sub_val = b.type_raw if family in ("type", "enum") else value
        check.fail(
            sink,
            family,
            place,
            sup_at=at,
            sub_at=b.values_at or b.type_at,
            sup_val=None if family == "enum_value" else sup_val,
            sub_val=sub_val,
            candidates=[value],
            branch=b,
        )
    if b.values is None:
        return
    allowed = [x for x in a_branches if kind in kinds(x)]
    if any(x.values is None for x in allowed):
        check.relax(sink, "enum", sup_at=None, sub_at=b.values_at, sub_val=b.values)
        return
    for x in allowed:
        if x.values_kw == "const" and b.values_kw == "const":
            continue
        for value in islice(without(finite(x, kind) or [], values), 16):
            check.relax(sink, "enum_value", sup_at=x.values_at, sub_at=b.values_at, sup_val=value)


def enum(check: Checker, x: Branch, b: Branch, kind: str, values: list[Any], place: Place, sink: list[Note]) -> None:
    span = scalars.integers(b) if kind == "number" else None
    if span is not None:
        for value in span:
            if not member(value, values):
                check.fail(
                    sink,
                    "enum_value",
                    place,
                    sup_at=x.values_at,
                    sub_at=b.type_at,
                    sub_val=value,
                    candidates=[value],
                    branch=b,
                )
        return
    check.fail(
        sink,
        "enum",
        place,
        sup_at=x.values_at,
        sub_at=b.type_at,
        sup_val=x.values,
        sub_val=b.type_raw,
        candidates=without(check.sampler.candidates(b, kind, place.depth), values),
        branch=b,
    )
