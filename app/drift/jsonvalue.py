"""JSON values as JSON Schema sees them: their kind, their numbers, their equality.

- Kinds are the six of the data model (JSON Schema 2020-12 core, section 4.2.1): ``null``,
  ``boolean``, ``number``, ``string``, ``array``, ``object``. A Python ``bool`` is never a
  number. ``integer`` is not a kind but the numbers with a zero fractional part (section
  4.2.2: ``1.0`` is an integer).
- Type *atoms* split numbers in two, ``int`` and ``frac``, so that ``type`` keywords intersect
  as sets: ``number`` is ``{int, frac}``, ``integer`` is ``{int}``.
- Numbers are compared as exact fractions of their decimal spelling (``0.1`` is 1/10), so
  ``multipleOf: 0.01`` means what it says and bounds never drift by a rounding.
- Equality (``enum``, ``const``, ``uniqueItems``; section 4.2.2): numbers by value (``1 == 1.0``),
  ``true`` is not ``1``, objects without regard to member order, arrays item by item.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

KINDS: tuple[str, ...] = ("null", "boolean", "number", "string", "array", "object")
ATOMS: frozenset[str] = frozenset({"null", "boolean", "int", "frac", "string", "array", "object"})
#: The atoms of each ``type`` name.
TYPE_ATOMS: dict[str, frozenset[str]] = {
    "null": frozenset({"null"}),
    "boolean": frozenset({"boolean"}),
    "integer": frozenset({"int"}),
    "number": frozenset({"int", "frac"}),
    "string": frozenset({"string"}),
    "array": frozenset({"array"}),
    "object": frozenset({"object"}),
}
#: The atoms of each kind.
KIND_ATOMS: dict[str, frozenset[str]] = {kind: TYPE_ATOMS[kind] for kind in KINDS}


def kind_of(value: Any) -> str | None:
    """The kind of a JSON value, or ``None`` for anything JSON does not have."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return None


def number(value: Any) -> Fraction | None:
    """The exact value of a JSON number (its decimal spelling), ``None`` for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float) and math.isfinite(value):
        return Fraction(repr(value))
    return None


def atom_of(value: Any) -> str | None:
    """The type atom of a JSON value (``int`` or ``frac`` for numbers)."""
    kind = kind_of(value)
    if kind != "number":
        return kind
    exact = number(value)
    return "int" if exact is not None and exact.denominator == 1 else "frac"


def to_json(value: Fraction) -> int | float:
    """A fraction as a JSON number: an ``int`` when whole, else the nearest ``float``."""
    if value.denominator == 1:
        return int(value)
    return float(value)


def count(value: Any) -> int | None:
    """A non-negative integer keyword value (``5`` or ``5.0``), else ``None``."""
    exact = number(value)
    if exact is None or exact.denominator != 1 or exact < 0:
        return None
    return int(exact)


def equal(a: Any, b: Any, depth: int = 0) -> bool:
    """JSON equality (see the module docs); nesting beyond 64 levels is never equal."""
    if depth > 64:
        return False
    kind = kind_of(a)
    if kind != kind_of(b) or kind is None:
        return False
    if kind == "number":
        return number(a) == number(b)
    if kind == "array":
        return len(a) == len(b) and all(equal(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if kind == "object":
        return a.keys() == b.keys() and all(equal(a[key], b[key], depth + 1) for key in a)
    return bool(a == b)


def member(value: Any, values: list[Any]) -> bool:
    """Whether ``value`` equals one of ``values`` (JSON equality)."""
    return any(equal(value, item) for item in values)


def key_of(value: Any) -> tuple[Any, ...] | None:
    """A hashable key equal for JSON-equal scalars; ``None`` for arrays and objects."""
    kind = kind_of(value)
    if kind == "number":
        return ("number", number(value))
    if kind in ("null", "boolean", "string"):
        return (kind, value)
    return None


class Index:
    """A list of JSON values for fast membership: scalars hashed, containers compared in turn."""

    __slots__ = ("_keys", "_rest")

    def __init__(self, values: list[Any]) -> None:
        self._keys: set[tuple[Any, ...]] = set()
        self._rest: list[Any] = []
        for value in values:
            key = key_of(value)
            if key is None:
                self._rest.append(value)
            else:
                self._keys.add(key)

    def __contains__(self, value: Any) -> bool:
        key = key_of(value)
        if key is not None:
            return key in self._keys
        return any(equal(value, item) for item in self._rest)
