"""Lower and upper bounds of one keyword family, read and compared in one place.

The families are those of JSON Schema 2020-12 validation, sections 6.2 to 6.5: ``minimum``/
``maximum`` with ``exclusiveMinimum``/``exclusiveMaximum`` (6.2.2 to 6.2.5; the draft-04
boolean form of ``exclusive*`` is read too), ``minLength``/``maxLength`` (6.3.1, 6.3.2),
``minItems``/``maxItems`` and ``minContains``/``maxContains`` (6.4.1, 6.4.2, 6.4.4, 6.4.5),
``minProperties``/``maxProperties`` (6.5.1, 6.5.2).

A bound on one side is a *point*, its value and whether it is exclusive; ``None`` is no bound.
One comparison, :func:`outside`, answers every question asked of bounds: whether a value is
beyond a bound (validating), which of two bounds is tighter (merging the keywords of a schema,
:func:`stricter`), and whether a new bound rejects values an old one allowed (comparing two
schemas, :func:`judge`, :func:`count` and :func:`numeric`, which name the change by the family of
:mod:`app.drift.rules`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from app.drift.jsonvalue import count as count_of
from app.drift.jsonvalue import number

if TYPE_CHECKING:
    from app.drift.branches import Bound, Branch, Limit
    from app.drift.checker import Checker
    from app.drift.notes import Note, Place
    from app.drift.validate import Answer, Path, Validator

#: A bound's value: a count or an exact number.
V = TypeVar("V", int, Fraction)


@dataclass(frozen=True, slots=True)
class Family:
    """The lower and upper keyword of one family and the drift family (:data:`app.drift.rules.FAMILIES`)
    of a change to each."""

    low: str
    high: str
    names: tuple[str, str]

    def keyword(self, lower: bool) -> str:
        return self.low if lower else self.high

    def name(self, lower: bool) -> str:
        return self.names[0] if lower else self.names[1]

    def keywords(self, lower: bool) -> tuple[str, ...]:
        """Every keyword that sets the bound of one side."""
        return (self.keyword(lower),)

    def failed(self) -> dict[str, str]:
        """Each keyword of the family (the lower side first) and the drift family of a value it rejects."""
        return {keyword: self.name(lower) for lower in (True, False) for keyword in self.keywords(lower)}


@dataclass(frozen=True, slots=True)
class Numbers(Family):
    """``minimum``/``maximum``, with the keywords of their exclusive form."""

    exclusive: tuple[str, str]

    def keywords(self, lower: bool) -> tuple[str, ...]:
        return self.keyword(lower), self.exclusive[0 if lower else 1]


@dataclass(frozen=True, slots=True)
class Counts(Family):
    """A family of counts, with where a branch (:mod:`app.drift.branches`) keeps the tightest of each side."""

    limits: tuple[Callable[[Branch], Limit | None], Callable[[Branch], Limit | None]]

    def limit(self, branch: Branch, lower: bool) -> Limit | None:
        return self.limits[0 if lower else 1](branch)


NUMBER = Numbers("minimum", "maximum", ("minimum", "maximum"), ("exclusiveMinimum", "exclusiveMaximum"))
LENGTH = Counts("minLength", "maxLength", ("min_length", "max_length"), (lambda b: b.min_len, lambda b: b.max_len))
ITEMS = Counts("minItems", "maxItems", ("min_items", "max_items"), (lambda b: b.min_items, lambda b: b.max_items))
PROPERTIES = Counts(
    "minProperties",
    "maxProperties",
    ("min_properties", "max_properties"),
    (lambda b: b.min_props, lambda b: b.max_props),
)
CONTAINS = Family("minContains", "maxContains", ("contains", "contains"))


def outside(value: V, bound: V, lower: bool, exclusive: bool = False) -> bool:
    """Whether ``value`` is beyond a lower (``lower``) or upper ``bound``."""
    if value == bound:
        return exclusive
    return value < bound if lower else value > bound


def stricter(first: tuple[V, bool] | None, second: tuple[V, bool] | None, lower: bool) -> bool:
    """Whether bound ``first`` excludes a value bound ``second`` allows (points; ``None``: unbounded)."""
    if first is None:
        return False
    if second is None:
        return True
    return outside(second[0], first[0], lower, first[1] and not second[1])


def inside(low: int, high: int | None, outer_low: int, outer_high: int | None) -> bool:
    """Whether every count from ``low`` to ``high`` is one from ``outer_low`` to ``outer_high``
    (``None``: unbounded)."""
    if outside(low, outer_low, True):
        return False
    return outer_high is None or (high is not None and not outside(high, outer_high, False))


def meets(low: int, high: int, outer_low: int, outer_high: int | None) -> bool:
    """Whether some count from ``low`` to ``high`` is one from ``outer_low`` to ``outer_high``."""
    return not outside(high, outer_low, True) and (outer_high is None or not outside(low, outer_high, False))


def point(bound: Bound | None) -> tuple[Fraction, bool] | None:
    """The point of a numeric bound (``None``: unbounded)."""
    return None if bound is None else (bound.value, bound.exclusive)


def counted(limit: Limit | None) -> tuple[int, bool] | None:
    """The point of a count bound (``None``: unbounded)."""
    return None if limit is None else (limit.value, False)


def floor(limit: Limit | None) -> int:
    """The least count a lower count bound allows (0 without one)."""
    return limit.value if limit else 0


def under(low: int, was: Limit | None) -> range:
    """Up to three counts an old lower bound (``was``) allows and a new one (``low``) does not."""
    least = floor(was)
    return range(least, min(low, least + 3))


# Reading a schema object.


def numbers_of(node: dict[str, Any], lower: bool) -> Iterator[tuple[str, Fraction | None, bool]]:
    """The numeric bounds ``node`` sets on one side, in order: ``(keyword, value, exclusive)``, the
    value ``None`` when it is not a number. ``minimum: 1, exclusiveMinimum: true`` (draft-04) is
    one exclusive bound; a numeric ``exclusiveMinimum`` (2020-12) is another."""
    keyword, exclusive = NUMBER.keywords(lower)
    if keyword in node:
        yield keyword, number(node[keyword]), node.get(exclusive) is True
    if exclusive in node and not isinstance(node[exclusive], bool):
        yield exclusive, number(node[exclusive]), True


def contains_of(node: dict[str, Any]) -> tuple[int, int | None] | None:
    """``minContains`` (default 1) and ``maxContains`` of a ``contains``; ``None`` when invalid."""
    bounded = CONTAINS.high in node
    low = count_of(node.get(CONTAINS.low, 1))
    high = count_of(node[CONTAINS.high]) if bounded else None
    if low is None or (bounded and high is None):
        return None
    return low, high


def sizes(v: Validator, schema: dict[str, Any], ptr: Path, size: int, family: Family) -> tuple[bool, Answer]:
    """A size against the count bounds of ``family`` in ``schema`` (``minLength``/``maxLength``,
    ``minItems``/``maxItems``, ``minProperties``/``maxProperties``): ``(True, answer)`` when one
    decides, ``(False, None)`` when both hold."""
    for lower in (True, False):
        keyword = family.keyword(lower)
        if keyword in schema:
            limit = count_of(schema[keyword])
            if limit is None:
                return True, v.maybe("invalid_schema")
            if outside(size, limit, lower):
                return True, v.no((ptr, keyword), keyword)
    return False, None


# Comparing a new branch (``sup``) with an old piece (``sub``).


@dataclass(frozen=True, slots=True)
class End(Generic[V]):
    """One side's bound as a comparison sees it: the point compared, the value a finding shows,
    and where it stands."""

    point: tuple[V, bool] | None
    shown: Any
    pointer: str | None


class Reach(Enum):
    """:func:`count` without a ``reach``: old values keep the old bound itself."""

    OWN = "own"


def judge(
    check: Checker,
    sink: list[Note],
    place: Place,
    branch: Branch,
    family: str,
    lower: bool,
    new: End[V],
    old: End[V],
    held: tuple[V, bool] | None,
    examples: Callable[[tuple[V, bool]], Iterable[Any]],
) -> None:
    """A new bound that rejects old values (beyond ``held``, the bound old values really keep) is
    a failure with ``examples(new point)`` as candidates; an old one that rejected values the new
    one allows is a relaxation; findings show both bounds as written."""
    if new.point is not None and stricter(new.point, held, lower):
        check.fail(
            sink,
            family,
            place,
            sup_at=new.pointer,
            sub_at=old.pointer,
            sup_val=new.shown,
            sub_val=old.shown,
            candidates=examples(new.point),
            branch=branch,
        )
    elif stricter(old.point, new.point, lower):
        check.relax(sink, family, sup_at=new.pointer, sub_at=old.pointer, sup_val=new.shown, sub_val=old.shown)


def _count_end(limit: Limit | None, lower: bool) -> End[int]:
    if limit is None:
        return End((0, False), 0, None) if lower else End(None, None, None)
    return End(counted(limit), limit.value, limit.pointer)


def count(
    check: Checker,
    family: Counts,
    lower: bool,
    new: Branch,
    old: Branch,
    place: Place,
    sink: list[Note],
    examples: Callable[[int], Iterable[Any]],
    reach: int | Literal[Reach.OWN] | None = Reach.OWN,
) -> None:
    """Compare the lower (or upper) count bound of ``family`` of a new branch with an old piece
    (a lower one is 0 when absent). ``examples(new bound)``: old values beyond the new bound;
    ``reach``: the count old values really keep on that side where it is tighter than the old
    bound (``None``: unbounded)."""
    mine, theirs = _count_end(family.limit(new, lower), lower), _count_end(family.limit(old, lower), lower)
    held = theirs.point if reach is Reach.OWN else (None if reach is None else (reach, False))
    judge(check, sink, place, old, family.name(lower), lower, mine, theirs, held, lambda point: examples(point[0]))


def whole_point(bound: Bound | None, lower: bool, whole: bool) -> tuple[Fraction, bool] | None:
    """The point of a numeric bound; over integers (``whole``), the inclusive integer bound it
    means (``exclusiveMinimum: 0`` is ``minimum: 1``)."""
    if bound is None or not whole:
        return point(bound)
    value = bound.value
    if lower:
        rounded = math.floor(value) + 1 if bound.exclusive else math.ceil(value)
    else:
        rounded = math.ceil(value) - 1 if bound.exclusive else math.floor(value)
    return Fraction(rounded), False


def numeric(check: Checker, lower: bool, new: Branch, old: Branch, whole: bool, place: Place, sink: list[Note]) -> None:
    """Compare the lower (or upper) numeric bound of a new branch with an old piece; over
    integers (``whole``) both are first rounded (:func:`whole_point`)."""
    mine, theirs = (new.lo, old.lo) if lower else (new.hi, old.hi)
    ends = [
        End(whole_point(bound, lower, whole), bound.raw if bound else None, bound.pointer if bound else None)
        for bound in (mine, theirs)
    ]

    def beyond(region: tuple[Fraction, bool]) -> Iterator[int | float]:
        return check.sampler.numbers(old, below=region) if lower else check.sampler.numbers(old, above=region)

    judge(check, sink, place, old, NUMBER.name(lower), lower, ends[0], ends[1], ends[1].point, beyond)
