"""The subsumption check: does every instance of one schema (``sub``) satisfy another (``sup``)?

For a tool's input ``sup`` is the new schema and ``sub`` the old one (an old call must still be
accepted); for its output they swap. :meth:`Checker.admits` compares two conjunctions at one
instance level and returns its findings: none that is ``breaking`` or ``unknown`` means *yes*.

1. Equal subschemas (same text and same reachable references) are admitted at once.
2. Both sides are expanded into branches (:mod:`app.drift.expand`). Every branch of ``sub`` and
   every kind of value it allows is one *piece*; each piece must be admitted by ``sup``.
3. A piece with finitely many values (an ``enum``, ``const``, ``null``, ``boolean``) is decided
   value by value with the validator against the whole of ``sup``: exact.
4. Otherwise the piece is compared with the ``sup`` branches that allow its kind: one branch,
   keyword by keyword (:mod:`app.drift.scalars`, :mod:`app.drift.arrays`,
   :mod:`app.drift.objects`); several (an ``anyOf``), one must admit the whole piece, or a
   checked example must show that none does, else ``any_of_split``. A ``sup`` branch that came
   from a ``oneOf`` also needs its other alternatives shown disjoint from the piece
   (:mod:`app.drift.disjoint`), unless ``sub`` took the same alternative of the same ``oneOf``.
5. A failed comparison is ``breaking`` with an example when one can be built and validated (valid
   under the whole of ``sub``, invalid under the whole of ``sup``). Without an example it stays
   ``breaking`` (judged keyword by keyword), unless something the comparison does not model on the
   ``sub`` side could exclude the values in question (``not``, ``if``, ``oneOf`` exclusivity...):
   then ``unknown`` with that reason.
6. Recursion (a ``$ref`` reached again through members or items) is assumed admitted while it is
   being checked (coinduction: instances are finite, so this is sound); results are remembered
   per pair once they no longer rest on such an assumption.
"""

from __future__ import annotations

from collections.abc import Callable

from app.drift import arrays, enums, objects, rules, scalars
from app.drift.branches import Branch, Opaque, Undecided, finite, kinds, kinds_of
from app.drift.disjoint import disjoint, exclusive
from app.drift.document import Conj, Ref, child
from app.drift.limits import MAX_DEPTH, MAX_VALUES
from app.drift.notes import Note, Place, answer, unique
from app.drift.report import Reporter


class Checker(Reporter):
    """One comparison of two documents (see the module docs)."""

    def run(self) -> list[Note]:
        """The findings of the whole comparison."""
        return self.admits((Ref(self.sup.root, ""),), (Ref(self.sub.root, ""),), Place(0, lambda value: value))

    def admits(self, a: Conj, b: Conj, place: Place) -> list[Note]:
        """The findings of ``a`` (sup) admitting every value of ``b`` (sub) at ``place``."""
        if not a:
            return []
        self.budget.spend()
        if place.depth > MAX_DEPTH:
            return [Note(a[0].pointer, "unknown", "too_deep", reason="too_deep")]
        if self.shortcuts and all(any(self.same(x.node, y.node) for y in b) for x in a):
            return []
        notes = self._annotations(a, b)
        key = (tuple(id(ref.node) for ref in a), tuple(id(ref.node) for ref in b), place.caution, self.quiet > 0)
        if key in self._active:
            self._hits.append(key)
            return notes
        if key in self._memo:
            return notes + self._memo[key]
        self._active.add(key)
        start = len(self._hits)
        try:
            body = unique(self._admits(a, b, place))
        finally:
            self._active.discard(key)
        if all(hit not in self._active for hit in self._hits[start:]):
            self._memo[key] = body
        return notes + body

    def _annotations(self, a: Conj, b: Conj) -> list[Note]:
        notes: list[Note] = []
        x, y = a[0], b[0] if b else None
        if len(a) != 1 or y is None or len(b) != 1 or not isinstance(x.node, dict) or not isinstance(y.node, dict):
            return notes
        for keyword, name in rules.ANNOTATIONS.items():
            here, there = x.node.get(keyword), y.node.get(keyword)
            if (here is not None or there is not None) and self.sup.text(here) != self.sub.text(there):
                sup_at = child(x.pointer, keyword) if keyword in x.node else None
                sub_at = child(y.pointer, keyword) if keyword in y.node else None
                self.relax(notes, "", sup_at=sup_at, sub_at=sub_at, sup_val=here, sub_val=there, name=name)
        return notes

    def _admits(self, a: Conj, b: Conj, place: Place) -> list[Note]:
        sink: list[Note] = []
        try:
            b_branches = self.sub_exp.expand(b)
            a_branches = self.sup_exp.expand(a)
        except Undecided as exc:
            self.undecided(sink, exc.reason, exc.pointer)
            return sink
        for b_branch in b_branches:
            for kind in kinds(b_branch):
                try:
                    self._piece(a, a_branches, b_branch, kind, place, sink)
                except Undecided as exc:
                    self.undecided(sink, exc.reason, exc.pointer)
        wider = {kind for x in a_branches for kind in kinds_of(x)}
        narrower = {kind for y in b_branches for kind in kinds_of(y)}
        if b_branches and a_branches and any(x.type_at for x in a_branches) and narrower < wider:
            x, y = a_branches[0], b_branches[0]
            several = len(a_branches) > 1 and x.choices
            sup_at = x.choices[-1].pointer if several else x.type_at
            sup_val = sorted(wider) if several else x.type_raw
            sub_val = sorted(narrower) if len(b_branches) > 1 else y.type_raw
            self.relax(sink, "type", sup_at=sup_at, sub_at=y.type_at, sup_val=sup_val, sub_val=sub_val)
        return sink

    def _piece(self, a: Conj, a_branches: list[Branch], b: Branch, kind: str, place: Place, sink: list[Note]) -> None:
        values = finite(b, kind)
        if values is not None:
            enums.values(self, a, a_branches, b, kind, values, place, sink)
            return
        fits = [x for x in a_branches if kind in kinds(x)]
        if not fits:
            x = a_branches[0] if a_branches else None
            family = (
                "schema_false" if x is None else "type" if all(kind not in kinds_of(y) for y in a_branches) else "enum"
            )
            at = a[-1].pointer if x is None else (x.type_at if family == "type" else x.values_at)
            self.fail(
                sink,
                family,
                place,
                sup_at=at,
                sub_at=b.type_at,
                sup_val=None if x is None else (x.type_raw if family == "type" else x.values),
                sub_val=b.type_raw,
                candidates=self.sampler.candidates(b, kind, place.depth),
                branch=b,
            )
            return
        if len(fits) == 1:
            sink.extend(self._pair(fits[0], b, kind, place))
            return
        trials = []
        theirs = {self.sub.text(d.owner[d.index]) for d in b.choices}
        fits.sort(key=lambda x: -sum(1 for c in x.choices if self.sup.text(c.owner[c.index]) in theirs))
        self.quiet += 1
        try:
            for x in fits:
                notes = self._pair(x, b, kind, place)
                if answer(notes) == "yes":
                    sink.extend(notes)
                    return
                trials.append(notes)
        finally:
            self.quiet -= 1
        for notes in trials:
            if answer(notes) == "unknown":
                sink.extend(note for note in notes if note.verdict != "breaking")
                return
        loud = self._pair(fits[0], b, kind, place)
        shown = [note for note in loud if note.verdict == "breaking" and note.example is not None]
        if shown:
            sink.extend(shown)
            return
        choice = fits[0].choices[-1].pointer if fits[0].choices else a[0].pointer
        self.undecided(sink, "any_of_split", choice)

    def _pair(self, x: Branch, b: Branch, kind: str, place: Place) -> list[Note]:
        sink: list[Note] = []
        try:
            if x.invalid or b.invalid:
                self.undecided(sink, "invalid_schema", (x.invalid or b.invalid)[0])
                return sink
            values = finite(x, kind) if x.values is not None else None
            if values is not None:
                enums.enum(self, x, b, kind, values, place, sink)
            elif kind in COMPARE:
                COMPARE[kind](self, x, b, place, sink)
            self._opaque(x, b, kind, place, sink)
            self._exclusive(x, b, kind, sink)
        except Undecided as exc:
            self.undecided(sink, exc.reason, exc.pointer)
        return sink

    def _opaque(self, x: Branch, b: Branch, kind: str, place: Place, sink: list[Note]) -> None:
        for item in x.opaque:
            if item.kinds is not None and kind not in item.kinds:
                continue
            if any(self._same_opaque(item, other) for other in b.opaque):
                continue
            if item.reason != "not_keyword":
                self.undecided(sink, item.reason, item.pointer)
                continue
            negated = Ref(item.parts[0], item.pointer)
            if disjoint(self, negated, b, kind):
                continue
            excluded = [
                value
                for branch in self.sup_exp.expand((negated,))
                for value in (finite(branch, kind) if branch.values is not None else None) or []
            ]
            self.fail(
                sink,
                "value",
                place,
                sup_at=item.pointer,
                sub_at=None,
                sup_val=item.parts[0],
                candidates=excluded[:MAX_VALUES],
                branch=b,
                unconfirmed="not_keyword",
            )

    def _same_opaque(self, item: Opaque, other: Opaque) -> bool:
        if item.reason != other.reason or len(item.parts) != len(other.parts):
            return False
        return all(
            (p == q) if isinstance(p, str) or p is None or q is None else self.same(p, q)
            for p, q in zip(item.parts, other.parts, strict=True)
        )

    def _exclusive(self, x: Branch, b: Branch, kind: str, sink: list[Note]) -> None:
        for choice in x.choices:
            if choice.keyword != "oneOf":
                continue
            held = self._exclusive_memo.get(id(choice.owner))
            if held is None or held[0] is not choice.owner:
                held = self._exclusive_memo[id(choice.owner)] = (
                    choice.owner,
                    exclusive(self, choice.owner, choice.pointer),
                )
            if held[1]:
                continue  # the alternatives exclude each other: only the one taken can match
            if any(
                mine.keyword == "oneOf" and mine.index == choice.index and self.same(choice.owner, mine.owner)
                for mine in b.choices
            ):
                continue
            for other in choice.others():
                if not disjoint(self, other, b, kind):
                    self.undecided(sink, "one_of_overlap", other.pointer)
                    break


COMPARE: dict[str, Callable[[Checker, Branch, Branch, Place, list[Note]], None]] = {
    "number": scalars.numbers,
    "string": scalars.strings,
    "array": arrays.compare,
    "object": objects.compare,
}
