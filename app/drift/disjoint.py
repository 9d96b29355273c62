"""Disjointness: showing that no value satisfies two schemas at once.

A new ``not: S`` admits an old piece when ``S`` and the piece are disjoint; a new ``oneOf``
branch admits it only when the other alternatives are (2020-12 core, sections 10.2.1.3 and
10.2.1.4). Disjointness is shown, never assumed (``False`` means "not shown"), by one of:

- the kinds of value differ;
- every value of a finite side (``enum``, ``const``, ``null``, ``boolean``) fails the other side;
- numeric ranges, string lengths, array lengths or member counts do not overlap;
- a member both require (or one requires and the other forbids) has disjoint schemas
  (a discriminator such as ``"kind": {"const": "a"}``), to :data:`MAX_DEPTH` levels.

Both sides are over-approximated here (``not``, ``if`` and ``oneOf`` exclusivity ignored), which
can only make disjointness harder to show, never wrongly shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.drift.branches import Bound, Branch, Limit, Undecided, finite, key_conj, kinds
from app.drift.document import Conj, Ref
from app.drift.jsonvalue import key_of

if TYPE_CHECKING:
    from app.drift.checker import Checker

MAX_DEPTH = 3


def exclusive(check: Checker, alternatives: list[Any], pointer: str) -> bool:
    """Whether the alternatives of a ``oneOf`` are pairwise disjoint by a discriminator: a member
    every alternative requires, with a ``const``/``enum`` whose values no two alternatives share."""
    shared: dict[str, list[set[tuple[Any, ...]]]] | None = None
    for index, alternative in enumerate(alternatives):
        check.budget.spend()
        try:
            branches = check.sup_exp.expand((Ref(alternative, f"{pointer}/{index}"),))
        except Undecided:
            return False
        if len(branches) != 1:
            return False
        found: dict[str, list[set[tuple[Any, ...]]]] = {}
        for key in branches[0].required if shared is None else [key for key in shared if key in branches[0].required]:
            try:
                conj = key_conj(branches[0], key, closed_record=False, names=check.sup_names)
                values = [branch.values for branch in check.sup_exp.expand(conj or ())]
            except Undecided:
                continue
            keys = {key_of(value) for group in values if group is not None for value in group}
            if values and all(group is not None for group in values) and None not in keys:
                found[key] = [*(shared or {}).get(key, []), {k for k in keys if k is not None}]
        shared = found
        if not shared:
            return False
    return any(sum(map(len, groups)) == len(set().union(*groups)) for groups in (shared or {}).values())


def disjoint(check: Checker, schema: Ref, piece: Branch, kind: str) -> bool:
    """Whether no value of ``kind`` satisfies both ``schema`` (of ``sup``) and ``piece`` (of ``sub``)."""
    return _conj(check, (schema,), [piece], 0, kind)


def _conj(check: Checker, first: Conj, second: list[Branch], depth: int, kind: str | None) -> bool:
    try:
        mine = check.sup_exp.expand(first)
    except Undecided:
        return False
    return all(
        _apart(check, x, y, wanted, depth)
        for x in mine
        for y in second
        for wanted in (kinds(y) if kind is None else [kind])
    )


def _below(high: Bound | None, low: Bound | None) -> bool:
    if high is None or low is None:
        return False
    return high.value < low.value or (high.value == low.value and (high.exclusive or low.exclusive))


def _short(high: Limit | None, low: Limit | None) -> bool:
    return high is not None and low is not None and high.value < low.value


def _apart(check: Checker, x: Branch, y: Branch, kind: str, depth: int) -> bool:
    check.budget.spend()
    if kind not in kinds(x):
        return True
    theirs = finite(y, kind)
    if theirs is not None and all(check.sup_val.valid_conj(tuple(x.refs), value) is False for value in theirs):
        return True
    mine = finite(x, kind)
    if mine is not None and all(check.sub_val.valid_conj(tuple(y.refs), value) is False for value in mine):
        return True
    if kind == "number":
        return _below(x.hi, y.lo) or _below(y.hi, x.lo)
    if kind == "string":
        return _short(x.max_len, y.min_len) or _short(y.max_len, x.min_len)
    if kind == "array":
        return _short(x.max_items, y.min_items) or _short(y.max_items, x.min_items)
    if kind == "object":
        if _short(x.max_props, y.min_props) or _short(y.max_props, x.min_props):
            return True
        return depth < MAX_DEPTH and _members(check, x, y, depth)
    return False


def _members(check: Checker, x: Branch, y: Branch, depth: int) -> bool:
    for key in sorted(set(x.required) | set(y.required)):
        try:
            mine = key_conj(x, key, closed_record=False, names=check.sup_names)
            theirs = check.sampler.member(y, key)
        except Undecided:
            continue
        if (key in x.required and theirs is None) or (key in y.required and mine is None):
            return True
        if key in x.required and key in y.required and mine is not None and theirs is not None:
            try:
                pieces = check.sub_exp.expand(theirs)
            except Undecided:
                continue
            if _conj(check, mine, pieces, depth + 1, None):
                return True
    return False
