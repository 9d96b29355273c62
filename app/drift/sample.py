"""Candidate values for example instances: simple values a branch of a schema allows.

Nothing here needs to be right: every value a finding shows is validated against both whole
schemas (:mod:`app.drift.validate`) first, so the sampler only has to propose likely values:
members of an ``enum``, a schema's own ``default``/``examples``, numbers at and near the bounds
(on a ``multipleOf`` grid), strings of the bounding lengths, a string a simple ``pattern``
matches, a well-known sample per ``format``, arrays of the minimum length and objects with
their required members. Each value built is a step of the budget; nesting stops at
:data:`MAX_DEPTH`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from fractions import Fraction
from itertools import islice
from typing import Any

from app.drift import regex
from app.drift.branches import Branch, Undecided, finite, item_conj, key_conj, kinds
from app.drift.document import Conj, Document, Ref
from app.drift.expand import Expander
from app.drift.jsonvalue import Index, kind_of, to_json
from app.drift.limits import Budget
from app.drift.validate import Validator

MAX_DEPTH = 8
MAX_LENGTH = 4096
#: A value of each common ``format`` (2020-12 validation, section 7.3, and OpenAPI's).
FORMATS: dict[str, str] = {
    "date-time": "2020-01-01T00:00:00Z",
    "date": "2020-01-01",
    "time": "00:00:00Z",
    "duration": "P1D",
    "email": "a@example.com",
    "idn-email": "a@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri": "https://example.com/",
    "iri-reference": "https://example.com/",
    "url": "https://example.com/",
    "uri-template": "https://example.com/{a}",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "json-pointer": "/a",
    "relative-json-pointer": "0",
    "regex": "a",
    "byte": "YQ==",
    "binary": "a",
    "password": "a",
}
_PREFERENCE = ("null", "boolean", "number", "string", "object", "array")
_STRINGS = ("a", "", "0", "A", "-", "a b", "x1")
_NUMBERS = (Fraction(0), Fraction(1), Fraction(-1), Fraction(1, 2), Fraction(-1, 2), Fraction(2), Fraction(10))


class NoInstance(Exception):
    """No value was found."""


def _whole(value: Fraction) -> bool:
    return value.denominator == 1


class Sampler:
    """Proposes values of the subschemas of one document."""

    __slots__ = ("budget", "closed_record", "expander", "validator")

    def __init__(self, doc: Document, budget: Budget, *, closed_record: bool) -> None:
        self.budget = budget
        self.expander = Expander(doc, budget)
        self.validator = Validator(doc, budget)
        self.closed_record = closed_record

    def names(self, schema: Ref, key: str) -> bool | None:
        """Whether ``key`` is a valid member name under a ``propertyNames`` schema."""
        return Validator(self.validator.doc, self.budget).valid(schema.node, key, schema.pointer)

    def member(self, branch: Branch, key: str) -> Conj | None:
        """:func:`~app.drift.branches.key_conj` under this document's reading."""
        return key_conj(branch, key, closed_record=self.closed_record, names=self.names)

    def value(self, conj: Conj, depth: int = 0) -> Any:
        """A value valid under ``conj``; :class:`NoInstance` when none was found."""
        if depth > MAX_DEPTH:
            raise NoInstance
        try:
            branches = self.expander.expand(conj)
        except Undecided as exc:
            raise NoInstance from exc
        for branch in branches[:4]:
            allowed = kinds(branch)
            for kind in sorted(allowed, key=_PREFERENCE.index):
                for candidate in islice(self.candidates(branch, kind, depth), 6):
                    if self.validator.valid_conj(conj, candidate) is True:
                        return candidate
        raise NoInstance

    def candidates(self, branch: Branch, kind: str, depth: int = 0) -> Iterator[Any]:
        """Values of ``kind`` the branch likely allows."""
        self.budget.spend()
        values = finite(branch, kind)
        if values is not None:
            yield from values[:16]
            return
        yield from self.annotated(branch, kind)
        if kind == "number":
            yield from self.numbers(branch)
        elif kind == "string":
            yield from self.strings(branch)
        elif kind == "array":
            yield from self.arrays(branch, depth)
        elif kind == "object":
            yield from self.objects(branch, depth)

    def annotated(self, branch: Branch, kind: str) -> Iterator[Any]:
        """The ``default`` and ``examples`` of the branch's own subschemas, of ``kind``."""
        for ref in branch.refs:
            if isinstance(ref.node, dict):
                found = [ref.node["default"]] if "default" in ref.node else []
                examples = ref.node.get("examples")
                found += examples[:4] if isinstance(examples, list) else []
                yield from (value for value in found if kind_of(value) == kind)

    def numbers(
        self,
        branch: Branch,
        *,
        below: tuple[Fraction, bool] | None = None,
        above: tuple[Fraction, bool] | None = None,
        fractional: bool = False,
        avoid: Fraction | None = None,
    ) -> Iterator[int | float]:
        """Numbers within the branch's bounds and the extra region given.

        ``below=(v, inclusive)`` keeps numbers under ``v`` (``above`` over it); ``fractional``
        keeps non-integers only; ``avoid`` drops the multiples of a step.
        """
        low = None if branch.lo is None else (branch.lo.value, branch.lo.exclusive)
        high = None if branch.hi is None else (branch.hi.value, branch.hi.exclusive)
        if above is not None and (low is None or above[0] > low[0] or (above[0] == low[0] and not above[1])):
            low = (above[0], not above[1])
        if below is not None and (high is None or below[0] < high[0] or (below[0] == high[0] and not below[1])):
            high = (below[0], not below[1])
        whole = branch.whole()
        steps = [step for step, _, _ in branch.multiples]
        seeds: list[Fraction] = list(_NUMBERS)
        for bound, sign in ((low, 1), (high, -1)):
            if bound is not None:
                value = bound[0]
                seeds += [value, value + sign * Fraction(1, 2), value + sign, Fraction(math.floor(value) + sign)]
                seeds += [Fraction(math.ceil(value) if sign > 0 else math.floor(value))]
                seeds += [step * (math.ceil(value / step) if sign > 0 else math.floor(value / step)) for step in steps]
                seeds += [step * (math.ceil(value / step) + sign) for step in steps]
        if low is not None and high is not None:
            seeds.append((low[0] + high[0]) / 2)
        seeds += steps
        seen: set[Fraction] = set()
        for seed in seeds:
            if seed in seen:
                continue
            seen.add(seed)
            if low is not None and (seed < low[0] or (low[1] and seed == low[0])):
                continue
            if high is not None and (seed > high[0] or (high[1] and seed == high[0])):
                continue
            if (whole and not _whole(seed)) or (fractional and _whole(seed)):
                continue
            if any(not _whole(seed / step) for step in steps) or (avoid is not None and _whole(seed / avoid)):
                continue
            yield to_json(seed)

    def strings(self, branch: Branch, *, shortest: int = 0, longest: int | None = None) -> Iterator[str]:
        """Strings of lengths within the branch's bounds and ``[shortest, longest]``."""
        low = max(shortest, branch.min_len.value if branch.min_len else 0)
        high = longest if longest is not None else MAX_LENGTH
        if branch.max_len is not None:
            high = min(high, branch.max_len.value)
        if low > high or low > MAX_LENGTH:
            return
        seeds = [FORMATS[name] for name, _ in branch.formats if name in FORMATS]
        seeds += [text for pattern, _ in branch.patterns if (text := regex.example(pattern)) is not None]
        seeds += [value for value in self.annotated(branch, "string") if isinstance(value, str)]
        seeds += _STRINGS
        for seed in seeds:
            if low <= len(seed) <= high:
                yield seed
            elif seed and len(seed) < low:
                yield seed + seed[-1] * (low - len(seed))
        yield "a" * low
        if high > low:
            yield "a" * min(high, low + 1)

    def array_with(self, branch: Branch, index: int, value: Any, depth: int = 0) -> list[Any]:
        """An array the branch likely allows whose item ``index`` is ``value``."""
        length = max(index + 1, branch.min_items.value if branch.min_items else 0)
        if length > 16:
            raise NoInstance
        return [value if i == index else self.value(item_conj(branch, i), depth + 1) for i in range(length)]

    def arrays(self, branch: Branch, depth: int = 0, lengths: Iterable[int] | None = None) -> Iterator[list[Any]]:
        """Arrays the branch likely allows, of the lengths given (default: its minimum)."""
        for length in lengths if lengths is not None else [branch.min_items.value if branch.min_items else 0]:
            if length > 16:
                continue
            try:
                yield [self.value(item_conj(branch, i), depth + 1) for i in range(length)]
            except NoInstance:
                continue

    def duplicates(self, branch: Branch, depth: int = 0) -> Iterator[list[Any]]:
        """Arrays holding one value twice."""
        try:
            item = self.value(item_conj(branch, 0) + item_conj(branch, 1), depth + 1)
            length = max(2, branch.min_items.value if branch.min_items else 0)
            if length <= 16:
                yield [item] * length
        except NoInstance:
            return

    def object(
        self, branch: Branch, depth: int = 0, *, without: str | None = None, members: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """An object with the branch's required members (but ``without``), then ``members``."""
        out: dict[str, Any] = {}
        try:
            for key in branch.required:
                if key != without and not (members and key in members):
                    conj = self.member(branch, key)
                    if conj is None:
                        raise NoInstance
                    out[key] = self.value(conj, depth + 1)
            out.update(members or {})
            for shape in branch.shapes:
                for key in shape.props:
                    if branch.min_props is None or len(out) >= branch.min_props.value:
                        return out
                    conj = self.member(branch, key)
                    if key not in out and key != without and conj is not None:
                        out[key] = self.value(conj, depth + 1)
        except Undecided as exc:
            raise NoInstance from exc
        return out

    def objects(self, branch: Branch, depth: int = 0, sizes: Iterable[int] | None = None) -> Iterator[dict[str, Any]]:
        """Objects the branch likely allows (of the member counts given)."""
        try:
            base = self.object(branch, depth)
        except NoInstance:
            return
        if sizes is None:
            yield base
            return
        for size in sizes:
            out = dict(base)
            for index in range(64):
                if len(out) >= size:
                    break
                key = f"k{index}"
                try:
                    conj = self.member(branch, key)
                    if conj is not None and key not in out:
                        out[key] = self.value(conj, depth + 1)
                except (NoInstance, Undecided):
                    continue
            if len(out) == size:
                yield out

    def fresh_key(self, branch: Branch, taken: Iterable[str], pattern: str | None = None) -> str | None:
        """A member name not in ``taken``: one ``pattern`` matches, or one no pattern of the branch does."""
        taken = set(taken)
        if pattern is not None:
            text = regex.example(pattern)
            ok = text is not None and text not in taken and regex.search(pattern, text) is True
            return text if ok else None
        for key in ("extra", "x", "other", "k0", "zz"):
            if key in taken:
                continue
            if all(regex.search(p, key) is False for shape in branch.shapes for p, _ in shape.patterns):
                return key
        return None


def without(values: Iterable[Any], excluded: list[Any]) -> Iterator[Any]:
    """``values`` that equal none of ``excluded``."""
    index = Index(excluded)
    return (value for value in values if value not in index)
