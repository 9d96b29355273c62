"""Arrays: one new branch against one old piece (JSON Schema 2020-12 core 10.3.1, validation 6.4).

- ``minItems``/``maxItems`` compare as counts; ``uniqueItems`` added is breaking when the old
  schema allowed two items (example: one value twice).
- Items are compared position by position: position ``i`` must satisfy every ``prefixItems[i]``
  (draft-07: ``items[i]``) of each schema object that applies, or its ``items`` (draft-07:
  ``additionalItems``) beyond its prefix. Positions are compared up to the longest prefix of
  either side, then once for every later position; a position the old schema cannot reach
  (``maxItems``, an ``items: false``) is not compared.
- A new ``contains`` is implied by the same ``contains`` in the old schema with counts at least as
  tight, or by every old item satisfying it with ``minItems`` reaching ``minContains``; an old
  array shorter than ``minContains`` is an example; otherwise ``contains_changed``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.drift import bounds
from app.drift.bounds import ITEMS
from app.drift.branches import Branch, item_conj, positions
from app.drift.notes import Note, Place, answer, caution

if TYPE_CHECKING:
    from app.drift.checker import Checker


def _place(check: Checker, place: Place, old: Branch, index: int) -> Place:
    outer = place.embed
    if outer is None:
        return Place(place.depth + 1, None, caution(place, old))

    def embed(value: Any) -> Any:
        return outer(check.sampler.array_with(old, index, value, place.depth))

    return Place(place.depth + 1, embed, caution(place, old))


def compare(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note]) -> None:
    """Compare the array keywords of a ``sup`` branch (``new``) with a ``sub`` piece (``old``)."""
    depth, arrays = place.depth, check.sampler.arrays
    bounds.count(
        check, ITEMS, True, new, old, place, sink, lambda n: arrays(old, depth, bounds.under(n, old.min_items))
    )
    bounds.count(check, ITEMS, False, new, old, place, sink, lambda n: arrays(old, depth, [n + 1]))
    high_old = old.max_items.value if old.max_items else None
    if new.unique and not old.unique and (high_old is None or high_old >= 2):
        check.fail(
            sink,
            "unique_items",
            place,
            sup_at=new.unique,
            sub_at=None,
            sup_val=True,
            sub_val=None,
            candidates=check.sampler.duplicates(old, depth),
            branch=old,
        )
    elif old.unique and not new.unique:
        check.relax(sink, "unique_items", sup_at=None, sub_at=old.unique, sub_val=True)
    count = positions(new, old)
    for index in range(count + 1):
        if high_old is not None and index >= high_old:
            break
        theirs = item_conj(old, index)
        sink.extend(check.admits(item_conj(new, index), theirs, _place(check, place, old, index)))
        if any(ref.node is False for ref in theirs):
            break
    _contains(check, new, old, place, sink, count)


def _contains(check: Checker, new: Branch, old: Branch, place: Place, sink: list[Note], count: int) -> None:
    low_old = bounds.floor(old.min_items)
    for item in new.contains:
        if bounds.inside(0, None, item.low, item.high):
            continue  # any count: the new ``contains`` asserts nothing
        if any(
            check.same(item.schema.node, mine.schema.node) and bounds.inside(mine.low, mine.high, item.low, item.high)
            for mine in old.contains
        ):
            continue
        if bounds.inside(low_old, None, item.low, item.high):
            quiet = [
                check.admits((item.schema,), item_conj(old, index), Place(place.depth + 1, None))
                for index in range(count + 1)
            ]
            if all(answer(notes) == "yes" for notes in quiet):
                continue
        if bounds.outside(low_old, item.low, True):
            shorter = check.sampler.arrays(old, place.depth, bounds.under(item.low, old.min_items))
            check.fail(
                sink,
                "contains",
                place,
                sup_at=item.schema.pointer,
                sub_at=None,
                sup_val=item.low,
                candidates=shorter,
                branch=old,
                unconfirmed="contains_changed",
            )
            continue
        check.undecided(sink, "contains_changed", item.schema.pointer, family="contains")
    for mine in old.contains:
        if not any(check.same(mine.schema.node, item.schema.node) for item in new.contains):
            check.relax(sink, "contains", sup_at=None, sub_at=mine.schema.pointer, sub_val=mine.low)
