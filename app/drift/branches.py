"""The normal form the comparison works on: a schema at one instance level as alternatives.

A schema (a conjunction of subschemas, :data:`~app.drift.document.Conj`) is expanded by
:mod:`app.drift.expand` into :class:`Branch` es: each is one way to satisfy it (one choice per
``anyOf``/``oneOf``), with every keyword that applies merged (``allOf``, ``$ref`` and siblings).
Members and items stay subschemas (:class:`Shape`, :class:`Items`), compared one level down.

- ``atoms`` is the set of type atoms allowed (:mod:`app.drift.jsonvalue`), ``values`` the
  finite set allowed by ``enum``/``const`` (``None``: not finite).
- Bounds keep the tightest of all keywords that apply, with the pointer of the one that set it.
- Keywords the comparison does not reason about are kept as :class:`Opaque` constraints: a new
  one must be matched by the same one in the old schema (or, for ``not``, shown disjoint).
- ``additionalProperties`` is relative to the ``properties`` and ``patternProperties`` of its own
  schema object (2020-12 core, section 10.3.2.3), so each object keeps its own :class:`Shape`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import Any

from app.drift import regex
from app.drift.document import Conj, Ref, child
from app.drift.jsonvalue import ATOMS, KIND_ATOMS, KINDS, atom_of, kind_of


class Undecided(Exception):
    """A schema the comparison cannot decide here (``reason`` is a key of ``REASONS``)."""

    def __init__(self, reason: str, pointer: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.pointer = pointer


@dataclass(frozen=True, slots=True)
class Bound:
    """A numeric bound: its value, whether it is exclusive, and the keywords that set it."""

    value: Fraction
    exclusive: bool
    pointer: str
    raw: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Limit:
    """A count limit (``minLength``, ``maxItems``, ``minProperties``...)."""

    value: int
    pointer: str


@dataclass(frozen=True, slots=True)
class Shape:
    """``properties`` (the subschemas by name), ``patternProperties`` and ``additionalProperties``
    of one schema object at ``pointer``."""

    props: dict[str, Any]
    patterns: tuple[tuple[str, Ref], ...]
    additional: Ref | None
    pointer: str

    def prop(self, key: str) -> Ref:
        """The ``properties`` entry of ``key`` and its location."""
        return Ref(self.props[key], child(self.pointer, "properties", key))


@dataclass(frozen=True, slots=True)
class Items:
    """The item keywords of one schema object: positional schemas, then the rest."""

    prefix: tuple[Ref, ...]
    tail: Ref | None
    pointer: str


@dataclass(frozen=True, slots=True)
class Contains:
    """``contains`` with ``minContains`` (default 1) and ``maxContains``."""

    schema: Ref
    low: int
    high: int | None
    pointer: str


@dataclass(frozen=True, slots=True)
class Opaque:
    """A keyword kept as is: matched only by the same keyword (its parts) on the other side."""

    reason: str
    pointer: str
    parts: tuple[Any, ...]
    kinds: frozenset[str] | None = None  # the kinds it constrains; None: all


@dataclass(frozen=True, slots=True)
class Choice:
    """The alternative a branch took: ``keyword`` (``anyOf``/``oneOf``) of ``owner`` at ``index``."""

    keyword: str
    owner: Any
    index: int
    pointer: str

    def others(self) -> Iterator[Ref]:
        """The alternatives not taken."""
        return (Ref(alt, f"{self.pointer}/{i}") for i, alt in enumerate(self.owner) if i != self.index)


@dataclass(slots=True)
class Branch:
    """One alternative of a schema at one instance level (see the module docs)."""

    refs: list[Ref] = field(default_factory=list)
    atoms: frozenset[str] = ATOMS
    type_at: str | None = None
    type_raw: Any = None
    values: list[Any] | None = None
    values_at: str | None = None
    values_kw: str | None = None
    lo: Bound | None = None
    hi: Bound | None = None
    multiples: list[tuple[Fraction, str, Any]] = field(default_factory=list)
    min_len: Limit | None = None
    max_len: Limit | None = None
    patterns: list[tuple[str, str]] = field(default_factory=list)
    formats: list[tuple[str, str]] = field(default_factory=list)
    min_items: Limit | None = None
    max_items: Limit | None = None
    unique: str | None = None
    items: list[Items] = field(default_factory=list)
    contains: list[Contains] = field(default_factory=list)
    required: dict[str, str] = field(default_factory=dict)
    min_props: Limit | None = None
    max_props: Limit | None = None
    shapes: list[Shape] = field(default_factory=list)
    names: list[Ref] = field(default_factory=list)
    dependent: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)
    opaque: list[Opaque] = field(default_factory=list)
    choices: list[Choice] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    merged: set[int] = field(default_factory=set)  # the subschemas merged in (ids): A and A is A
    empty: bool = False
    allowed: list[str] | None = None  # the kinds, once asked (branches are final by then)

    def fork(self) -> Branch:
        """A copy whose lists and tables may change without changing this one."""
        copy = Branch.__new__(Branch)
        for name in _FIELDS:
            value = getattr(self, name)
            setattr(copy, name, value.copy() if type(value) in (list, dict, set) else value)
        return copy

    def int_only(self) -> bool:
        """Whether the numbers allowed are integers by ``type`` (``integer``)."""
        return "frac" not in self.atoms

    def whole(self) -> bool:
        """Whether every number allowed is an integer (by ``type`` or an integral ``multipleOf``)."""
        return self.int_only() or any(step.denominator == 1 for step, _, _ in self.multiples)

    def exclusive(self) -> bool:
        """Whether this branch came from a ``oneOf`` (its values must match one alternative only)."""
        return any(choice.keyword == "oneOf" for choice in self.choices)

    def is_record(self) -> bool:
        """Whether the object names its members and never allows others by ``additionalProperties``."""
        return any(shape.props for shape in self.shapes) and all(
            shape.additional is None or shape.additional.node is False for shape in self.shapes
        )

    def declares(self, key: str) -> bool:
        """Whether ``key`` is named (``properties``, ``required``) or matched by ``patternProperties``."""
        if key in self.required or any(key in shape.props for shape in self.shapes):
            return True
        return any(regex.search(pattern, key) is not False for shape in self.shapes for pattern, _ in shape.patterns)


_FIELDS = tuple(item.name for item in fields(Branch))


def kinds(branch: Branch) -> list[str]:
    """The kinds of value a branch allows, in :data:`~app.drift.jsonvalue.KINDS` order."""
    if branch.allowed is not None:
        return branch.allowed
    atoms = branch.atoms
    if branch.values is not None:
        atoms = atoms & frozenset(atom for atom in map(atom_of, branch.values) if atom is not None)
    branch.allowed = [kind for kind in KINDS if atoms & KIND_ATOMS[kind]]
    return branch.allowed


def kinds_of(branch: Branch) -> list[str]:
    """The kinds a branch's ``type`` allows, whatever its ``enum`` says."""
    return [kind for kind in KINDS if branch.atoms & KIND_ATOMS[kind]]


def finite(branch: Branch, kind: str) -> list[Any] | None:
    """The values of ``kind`` a branch allows when they are finitely many, else ``None``."""
    if branch.values is not None:
        return [value for value in branch.values if kind_of(value) == kind and atom_of(value) in branch.atoms]
    if kind == "null":
        return [None]
    if kind == "boolean":
        return [False, True]
    return None


def key_conj(branch: Branch, key: str, *, closed_record: bool, names: Callable[[Ref, str], bool | None]) -> Conj | None:
    """The subschemas a member ``key`` must satisfy, or ``None`` when it may not appear at all.

    ``closed_record`` applies the declared-members reading (:mod:`app.drift.schema`): a member a
    record does not declare is taken as absent. ``names`` validates a name against ``propertyNames``.

    Raises:
        Undecided: a pattern that cannot be run decides whether the member is allowed.
    """
    if closed_record and branch.is_record() and not branch.declares(key):
        return None
    parts: list[Ref] = []
    for shape in branch.shapes:
        matched = key in shape.props
        if matched:
            parts.append(shape.prop(key))
        for pattern, ref in shape.patterns:
            found = regex.search(pattern, key)
            if found is None:
                raise Undecided("regex_unsupported", ref.pointer)
            if found:
                parts.append(ref)
                matched = True
        if not matched and shape.additional is not None:
            parts.append(shape.additional)
    for schema in branch.names:
        allowed = names(schema, key)
        if allowed is None:
            raise Undecided("regex_unsupported", schema.pointer)
        if not allowed:
            return None
    if any(part.node is False for part in parts):
        return None
    return tuple(part for part in parts if part.node is not True)


def item_conj(branch: Branch, index: int) -> Conj:
    """The subschemas item ``index`` of an array must satisfy."""
    parts: list[Ref] = []
    for items in branch.items:
        if index < len(items.prefix):
            parts.append(items.prefix[index])
        elif items.tail is not None:
            parts.append(items.tail)
    return tuple(part for part in parts if part.node is not True)


def positions(*branches: Branch) -> int:
    """The number of positional item schemas of the longest ``prefixItems`` among ``branches``."""
    return max((len(items.prefix) for branch in branches for items in branch.items), default=0)
