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
    low_new = new.min_items.value if new.min_items else 0
    low_old = old.min_items.value if old.min_items else 0
    at = (new.min_items.pointer if new.min_items else None, old.min_items.pointer if old.min_items else None)
    depth = place.depth
    if low_new > low_old:
        shorter = check.sampler.arrays(old, depth, range(low_old, min(low_new, low_old + 3)))
        check.fail(
            sink,
            "min_items",
            place,
            sup_at=at[0],
            sub_at=at[1],
            sup_val=low_new,
            sub_val=low_old,
            candidates=shorter,
            branch=old,
        )
    elif low_old > low_new:
        check.relax(sink, "min_items", sup_at=at[0], sub_at=at[1], sup_val=low_new, sub_val=low_old)
    high_new = new.max_items.value if new.max_items else None
    high_old = old.max_items.value if old.max_items else None
    at = (new.max_items.pointer if new.max_items else None, old.max_items.pointer if old.max_items else None)
    if high_new is not None and (high_old is None or high_new < high_old):
        longer = check.sampler.arrays(old, depth, [high_new + 1])
        check.fail(
            sink,
            "max_items",
            place,
            sup_at=at[0],
            sub_at=at[1],
            sup_val=high_new,
            sub_val=high_old,
            candidates=longer,
            branch=old,
        )
    elif high_old is not None and (high_new is None or high_new > high_old):
        check.relax(sink, "max_items", sup_at=at[0], sub_at=at[1], sup_val=high_new, sub_val=high_old)
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
    low_old = old.min_items.value if old.min_items else 0
    for item in new.contains:
        if item.low == 0 and item.high is None:
            continue
        if any(
            check.same(item.schema.node, mine.schema.node)
            and mine.low >= item.low
            and (item.high is None or (mine.high is not None and mine.high <= item.high))
            for mine in old.contains
        ):
            continue
        if item.high is None and low_old >= item.low:
            quiet = [
                check.admits((item.schema,), item_conj(old, index), Place(place.depth + 1, None))
                for index in range(count + 1)
            ]
            if all(answer(notes) == "yes" for notes in quiet):
                continue
        if low_old < item.low:
            shorter = check.sampler.arrays(old, place.depth, range(low_old, min(item.low, low_old + 3)))
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
