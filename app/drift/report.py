"""Findings: how the comparison names a change, places it and backs a break with an example.

A finding's pointer is the keyword's location in the new schema, or in the old one when the new
schema has no such location; its ``old`` and ``new`` values are the keyword's values as written
(shortened). The rule comes from the change's family (:mod:`app.drift.rules`), named from old to
new whichever side the comparison admits into. A failure is ``breaking`` with an example when
one of the candidate values, embedded in a whole instance, validates under the schema relied on
and not under the other; see :mod:`app.drift.checker` for when it is ``breaking`` without one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.drift import rules
from app.drift.branches import Branch, Undecided
from app.drift.document import Document, Ref, Sameness
from app.drift.expand import Expander
from app.drift.limits import Budget
from app.drift.notes import Note, Place, brief, caution
from app.drift.sample import NoInstance, Sampler
from app.drift.validate import Validator


class Reporter:
    """The state of one comparison and the findings it makes."""

    def __init__(
        self, sup: Document, sub: Document, *, sup_is_new: bool, closed_records: bool, budget: Budget, shortcuts: bool
    ) -> None:
        self.sup, self.sub = sup, sub
        self.sup_is_new = sup_is_new
        self.closed_records = closed_records
        self.budget = budget
        self.shortcuts = shortcuts
        self.sup_exp, self.sub_exp = Expander(sup, budget), Expander(sub, budget)
        self.sup_val, self.sub_val = Validator(sup, budget), Validator(sub, budget)
        self.sampler = Sampler(sub, budget, closed_record=closed_records)
        self.same = Sameness(sup, sub, budget)
        self._active: set[tuple[Any, ...]] = set()
        self._hits: list[tuple[Any, ...]] = []
        self._memo: dict[tuple[Any, ...], list[Note]] = {}
        self._exclusive_memo: dict[int, tuple[Any, bool]] = {}
        #: Trials of alternatives build no examples (the one kept is run again with them).
        self.quiet = 0
        #: Every break shown by a checked example so far (true whatever else the schemas hold).
        self.shown: list[Note] = []

    def sup_names(self, schema: Ref, key: str) -> bool | None:
        """Whether ``key`` is a valid member name under a ``propertyNames`` of ``sup``."""
        return Validator(self.sup, self.budget).valid(schema.node, key, schema.pointer)

    def _at(self, sup_at: str | None, sub_at: str | None) -> str:
        new, old = (sup_at, sub_at) if self.sup_is_new else (sub_at, sup_at)
        return new if new is not None else (old or "")

    def _values(self, sup_val: Any, sub_val: Any) -> tuple[Any, Any]:
        pair = (sub_val, sup_val) if self.sup_is_new else (sup_val, sub_val)
        return brief(pair[0]), brief(pair[1])

    def fail(
        self,
        sink: list[Note],
        family: str,
        place: Place,
        *,
        sup_at: str | None,
        sub_at: str | None,
        sup_val: Any = None,
        sub_val: Any = None,
        candidates: Iterable[Any] = (),
        branch: Branch | None = None,
        unconfirmed: str | None = None,
        name: str | None = None,
    ) -> None:
        """A change that rejects values of ``sub``: breaking, with an example when one checks out."""
        example = self.example(candidates, place)
        old, new = self._values(sup_val, sub_val)
        rule = name or rules.rule(family, new_tighter=self.sup_is_new)
        at = self._at(sup_at, sub_at)
        if example is not None:
            note = Note(at, "breaking", rule, old, new, example)
            sink.append(note)
            self.shown.append(note)
            return
        reason = unconfirmed or (caution(place, branch) if branch is not None else place.caution)
        sink.append(Note(at, "unknown" if reason else "breaking", rule, old, new, None, reason))

    def relax(
        self,
        sink: list[Note],
        family: str,
        *,
        sup_at: str | None,
        sub_at: str | None,
        sup_val: Any = None,
        sub_val: Any = None,
        name: str | None = None,
    ) -> None:
        """A change that rejects no value of ``sub``."""
        old, new = self._values(sup_val, sub_val)
        rule = name or rules.rule(family, new_tighter=not self.sup_is_new)
        sink.append(Note(self._at(sup_at, sub_at), "compatible", rule, old, new))

    def undecided(
        self,
        sink: list[Note],
        reason: str,
        at: str,
        *,
        family: str | None = None,
        sup_val: Any = None,
        sub_val: Any = None,
    ) -> None:
        """A question the comparison cannot answer here."""
        old, new = self._values(sup_val, sub_val)
        rule = rules.rule(family, new_tighter=self.sup_is_new) if family else reason
        sink.append(Note(at, "unknown", rule, old, new, None, reason))

    def example(self, candidates: Iterable[Any], place: Place) -> tuple[Any] | None:
        """The first candidate whose whole instance is valid under ``sub`` and not under ``sup``."""
        if place.embed is None or self.quiet:
            return None
        values = iter(candidates)
        for _ in range(4):
            if self.budget.examples <= 0:
                return None
            try:
                value = next(values)
                self.budget.examples -= 1
                instance = place.embed(value)
            except StopIteration:
                return None
            except (NoInstance, Undecided):
                continue
            if (
                self.sub_val.valid(self.sub.root, instance) is True
                and self.sup_val.valid(self.sup.root, instance) is False
            ):
                return (instance,)
        return None
