"""Objects: one new branch against one old piece (JSON Schema 2020-12 core 10.3.2, validation 6.5).

- Every member name either side names (``properties``, ``required``) is compared on its own:
  the subschemas it must satisfy on each side (its ``properties`` entry, the
  ``patternProperties`` that match it, else ``additionalProperties``, per schema object, and
  ``propertyNames``). A member the old schema allows and the new one forbids is
  ``property_removed``; a member the new schema declares and old values cannot hold is
  ``property_added`` (compatible).
- Members neither side names: each old ``patternProperties`` entry and the old
  ``additionalProperties`` (when the old schema allows such members at all) must be admitted by
  every new entry that may apply to the same names; entries paired by an identical pattern are
  decided as usual, entries that only may share names give ``pattern_properties`` instead of an
  unchecked break.
- Under the declared-members reading (the default, :mod:`app.drift.schema`) an old *record* (an
  object naming its ``properties`` without an ``additionalProperties`` that admits others) holds
  only the members it declares.
- ``required``, ``minProperties``/``maxProperties``, ``propertyNames`` and ``dependentRequired``
  compare as sets and counts, with an example old object for each break.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from app.drift import bounds
from app.drift import keys as keys_module
from app.drift.bounds import PROPERTIES
from app.drift.branches import Branch, Undecided, key_conj
from app.drift.document import Ref
from app.drift.keys import holding, lacking, place_for, values_of
from app.drift.limits import MAX_VALUES
from app.drift.notes import Note, Place

if TYPE_CHECKING:
    from app.drift.checker import Checker


def _declared(branch: Branch, key: str) -> Ref | None:
    for shape in branch.shapes:
        if key in shape.props:
            return shape.prop(key)
    return None


def _plain(branch: Branch) -> bool:
    """One schema object with ``properties`` only (no patterns, no ``propertyNames``)."""
    return len(branch.shapes) == 1 and not branch.shapes[0].patterns and not branch.names


def compare(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    """Compare the object keywords of a ``sup`` branch (``new``) with a ``sub`` piece (``old``)."""
    names = {key for branch in (new, old) for shape in branch.shapes for key in shape.props}
    names |= set(new.required) | set(old.required)
    if len(names) > MAX_VALUES:
        check.undecided(sink, "too_large", old.shapes[0].pointer if old.shapes else "")
        return
    keys = sorted(names)
    plain = _plain(new) and _plain(old)
    for key in keys:
        check.budget.spend()
        mine, theirs = (new.shapes[0].props, old.shapes[0].props) if plain else ({}, {})
        if key in mine and key in theirs and check.same(mine[key], theirs[key]):
            continue  # one schema object each side, and the member's subschema is the same
        try:
            _member(check, new, old, key, place, sink)
        except Undecided as exc:
            check.undecided(sink, exc.reason, exc.pointer)
    keys_module.others(check, new, old, keys, place, sink)
    _required(check, new, old, place, sink)
    _counts(check, new, old, keys, place, sink)
    keys_module.names(check, new, old, keys, place, sink)
    _dependent(check, new, old, place, sink)


def _member(check: Checker, new: Branch, old: Branch, key: str, place: Place, sink: list[Note]) -> None:
    theirs = check.sampler.member(old, key)
    mine_at, theirs_at = _declared(new, key), _declared(old, key)
    added = "property_added" if check.sup_is_new else "property_removed"
    removed = "property_removed" if check.sup_is_new else "property_added"
    if theirs is None:
        if mine_at is not None and theirs_at is None:
            check.relax(sink, "property", sup_at=mine_at.pointer, sub_at=None, sup_val=mine_at.node, name=added)
        return
    mine = key_conj(new, key, closed_record=False, names=check.sup_names)
    where = place_for(check, place, old, key)
    if mine is None:
        check.fail(
            sink,
            "property",
            where,
            sup_at=mine_at.pointer if mine_at else None,
            sub_at=theirs_at.pointer if theirs_at else None,
            sub_val=theirs_at.node if theirs_at else True,
            candidates=values_of(check, theirs, place.depth),
            branch=old,
            name=removed,
        )
        return
    notes = check.admits(mine, theirs, where)
    if all(note.verdict == "compatible" for note in notes):
        if mine_at is not None and theirs_at is None:
            check.relax(sink, "property", sup_at=mine_at.pointer, sub_at=None, sup_val=mine_at.node, name=added)
        elif theirs_at is not None and mine_at is None:
            check.relax(sink, "property", sup_at=None, sub_at=theirs_at.pointer, sub_val=theirs_at.node, name=removed)
    sink.extend(notes)


def _required(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    for key, at in new.required.items():
        if key not in old.required:
            check.fail(
                sink,
                "required",
                place,
                sup_at=at,
                sub_at=None,
                sup_val=key,
                sub_val=None,
                candidates=lacking(check, old, place.depth, key),
                branch=old,
            )
    for key, at in old.required.items():
        if key not in new.required:
            check.relax(sink, "required", sup_at=None, sub_at=at, sub_val=key)


def _counts(check: Checker, new: Branch, old: Branch, keys: list[str], place: Place, sink: list[Note]) -> None:
    """Member counts; an old object holds at least its required members, and at most the members
    it may hold at all when no pattern or ``additionalProperties`` admits others."""
    objects, depth = check.sampler.objects, place.depth

    def fewer(low: int) -> Iterator[dict[str, Any]]:
        return objects(old, depth, bounds.under(low, old.min_props))

    held = max(bounds.floor(old.min_props), len(old.required))
    bounds.count(check, PROPERTIES, True, new, old, place, sink, fewer, reach=held)
    most = old.max_props.value if old.max_props else None
    if not keys_module.entries(check, old):
        count = sum(1 for key in keys if check.sampler.member(old, key) is not None)
        most = count if most is None else min(most, count)
    bounds.count(check, PROPERTIES, False, new, old, place, sink, lambda n: objects(old, depth, [n + 1]), reach=most)


def _dependent(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    for key, (needs, at) in new.dependent.items():
        if check.sampler.member(old, key) is None:
            continue
        known = old.dependent.get(key, ((), ""))[0]
        for need in needs:
            if need not in old.required and need not in known:
                check.fail(
                    sink,
                    "dependent_required",
                    place,
                    sup_at=at,
                    sub_at=None,
                    sup_val=list(needs),
                    candidates=holding(check, old, place.depth, key, absent=need),
                    branch=old,
                )
                break
    for key, (needs, at) in old.dependent.items():
        if key not in new.dependent:
            check.relax(sink, "dependent_required", sup_at=None, sub_at=at, sub_val=list(needs))
