"""Hypothesis strategies: well-formed schemas, edits that always change their meaning, and instances.

Every schema drawn here is satisfiable and every subschema is reachable: bounds are ordered,
number ranges are at least 1 wide, arrays may hold an item, the alternatives of an ``anyOf`` or
``oneOf`` are of different kinds. So an edit made anywhere (a bound moved past a value the
range held, a member required, an alternative dropped...) always adds or removes an instance,
and the two schemas differ in meaning, not only in text.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from typing import Any

from hypothesis import strategies as st

NAMES = ("a", "b", "c", "d")
WORDS = ("x", "y", "z", "w")
#: Kinds of leaf and the family each belongs to (alternatives take distinct families).
FAMILY = {"integer": "num", "number": "num", "string": "str", "enum": "str", "boolean": "bool", "null": "null"}
Schema = dict[str, Any]


@st.composite
def _bounds(draw: st.DrawFn, low: int, high: int, gap: int) -> Schema:
    out: Schema = {}
    lo = draw(st.none() | st.integers(low, high))
    hi = draw(st.none() | st.integers(low, high))
    if lo is not None and hi is not None and hi < lo + gap:
        lo, hi = min(lo, hi), max(lo, hi) + gap
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    return out


@st.composite
def leaf(draw: st.DrawFn, kind: str | None = None, alone: bool = False) -> Schema:
    """A scalar schema of ``kind`` (any kind when ``None``); ``alone``: of that one kind (no null)."""
    kind = kind or draw(st.sampled_from(sorted(FAMILY)))
    if kind == "integer":
        if draw(st.booleans()):
            return {"type": "integer", "multipleOf": draw(st.sampled_from([2, 3, 5]))}
        return {"type": "integer", **draw(_bounds(-5, 5, 0))}
    if kind == "number":
        return {"type": "number", **draw(_bounds(-5, 5, 1))}
    if kind == "string":
        out: Schema = {"type": "string" if alone else draw(st.sampled_from(["string", ["string", "null"]]))}
        low, high = draw(st.none() | st.integers(0, 3)), draw(st.none() | st.integers(0, 4))
        if low is not None and high is not None and high < low:
            low, high = high, low
        if low is not None:
            out["minLength"] = low
        if high is not None:
            out["maxLength"] = high
        return out
    if kind == "enum":
        return {"type": "string", "enum": draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True))}
    return {"type": kind}


def _kind(schema: Schema) -> str:
    if "enum" in schema:
        return "enum"
    kind = schema.get("type")
    return kind[0] if isinstance(kind, list) else str(kind)


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2, closed: bool = False) -> Schema:
    """A schema nesting objects, arrays and alternatives ``depth`` levels deep."""
    shape = draw(st.sampled_from(["leaf", "leaf", "object", "array", "anyOf", "oneOf"] if depth > 0 else ["leaf"]))
    if shape == "leaf":
        return draw(leaf())
    if shape == "object":
        names = draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
        props = {name: draw(schemas(depth - 1, closed)) for name in names}
        out: Schema = {"type": "object", "properties": props}
        required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
        if required:
            out["required"] = required
        if closed or draw(st.booleans()):
            out["additionalProperties"] = False
        return out
    if shape == "array":
        low = draw(st.integers(0, 2))
        out = {"type": "array", "items": draw(schemas(depth - 1, closed)), "minItems": low}
        if draw(st.booleans()):
            out["maxItems"] = draw(st.integers(max(1, low), 3))
        return out
    families = draw(st.lists(st.sampled_from(sorted(set(FAMILY.values()))), min_size=2, max_size=3, unique=True))
    kinds = [draw(st.sampled_from([k for k, f in FAMILY.items() if f == family])) for family in families]
    return {shape: [draw(leaf(kind, alone=True)) for kind in kinds]}


def _positions(schema: Schema, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [] if "$ref" in schema else [path]
    for name, sub in schema.get("$defs", {}).items():
        out += _positions(sub, (*path, "$defs", name))
    for name, sub in schema.get("properties", {}).items():
        out += _positions(sub, (*path, "properties", name))
    if isinstance(schema.get("items"), dict):
        out += _positions(schema["items"], (*path, "items"))
    for keyword in ("anyOf", "oneOf"):
        for index, sub in enumerate(schema.get(keyword, [])):
            out += _positions(sub, (*path, keyword, index))
    return out


def _get(schema: Any, path: tuple[Any, ...]) -> Any:
    for token in path:
        schema = schema[token]
    return schema


Edit = Callable[[Schema], None]


def _bound_edits(node: Schema, whole: bool) -> list[Edit]:
    edits: list[Edit] = []
    lo, hi = node.get("minimum"), node.get("maximum")
    floor = float("-inf") if lo is None else lo
    ceiling = float("inf") if hi is None else hi
    gap = 0 if whole else 1
    if hi is not None:
        edits.append(lambda n: n.__setitem__("maximum", n["maximum"] + 1))
        edits.append(lambda n: n.pop("maximum"))
        if hi - 1 >= floor + gap:
            edits.append(lambda n: n.__setitem__("maximum", n["maximum"] - 1))
    else:
        edits.append(lambda n: n.__setitem__("maximum", (n.get("minimum", 0)) + gap + 2))
    if lo is not None:
        edits.append(lambda n: n.__setitem__("minimum", n["minimum"] - 1))
        edits.append(lambda n: n.pop("minimum"))
        if lo + 1 <= ceiling - gap:
            edits.append(lambda n: n.__setitem__("minimum", n["minimum"] + 1))
    else:
        edits.append(lambda n: n.__setitem__("minimum", (n.get("maximum", 0)) - gap - 2))
    return edits


def _edits(node: Schema, alternative: bool, closing: bool) -> list[Edit]:
    """Edits of one subschema that always change the set of instances it admits (``alternative``:
    the subschema is a branch of an ``anyOf``/``oneOf``, which a new ``null`` branch may not enlarge;
    ``closing``: ``additionalProperties`` may be toggled, a change of meaning in the strict reading only)."""
    kind = _kind(node) if "anyOf" not in node and "oneOf" not in node else "alternatives"
    types = node.get("type")
    nullable = "null" in (types if isinstance(types, list) else [types])
    edits: list[Edit] = [_wrap] if kind in FAMILY and not nullable and not alternative else []
    if kind == "integer" and "multipleOf" in node:
        edits += [
            lambda n: n.__setitem__("multipleOf", {2: 3, 3: 5, 5: 2}[n["multipleOf"]]),
            lambda n: n.pop("multipleOf"),
        ]
    elif kind == "integer":
        edits += _bound_edits(node, whole=True)
        if node.get("minimum") is None or node.get("minimum") != node.get("maximum"):
            edits.append(lambda n: n.__setitem__("type", "number"))
        if "minimum" not in node and "maximum" not in node:
            edits.append(lambda n: n.__setitem__("multipleOf", 2))
    elif kind == "number":
        edits += [*_bound_edits(node, whole=False), lambda n: n.__setitem__("type", "integer")]
    elif kind == "string":
        if not alternative:  # a null sibling would make adding or dropping null change nothing
            edits.append(
                lambda n: n.__setitem__("type", "string" if isinstance(n["type"], list) else ["string", "null"])
            )
        low, high = node.get("minLength", 0), node.get("maxLength")
        edits.append(lambda n: n.__setitem__("maxLength", n.get("maxLength", n.get("minLength", 0) + 2) + 1))
        if high is not None and high - 1 >= low:
            edits.append(lambda n: n.__setitem__("maxLength", n["maxLength"] - 1))
        if high is None or low + 1 <= high:
            edits.append(lambda n: n.__setitem__("minLength", n.get("minLength", 0) + 1))
        if low > 0:
            edits.append(lambda n: n.__setitem__("minLength", n["minLength"] - 1))
    elif kind == "enum":
        if len(node["enum"]) < len(WORDS):
            edits.append(lambda n: n["enum"].append(next(w for w in WORDS if w not in n["enum"])))
        if len(node["enum"]) > 1:
            edits.append(lambda n: n["enum"].pop())
    elif kind == "boolean":
        edits.append(lambda n: n.__setitem__("enum", [True]))
        if not alternative:
            edits.append(lambda n: n.__setitem__("type", ["boolean", "null"]))
    elif kind == "null" and not alternative:
        edits.append(lambda n: n.__setitem__("type", ["null", "string"]))
    elif kind == "object":
        edits += _object_edits(node, closing)
    elif kind == "array":
        edits += _array_edits(node)
    elif kind == "alternatives":
        keyword = "anyOf" if "anyOf" in node else "oneOf"
        if len(node[keyword]) > 2:
            edits.append(lambda n: n[keyword].pop())
        free = sorted(set(FAMILY.values()) - {FAMILY[_kind(sub)] for sub in node[keyword]})
        if free:
            kind_free = next(k for k, f in FAMILY.items() if f == free[0])
            edits.append(lambda n: n[keyword].append({"type": kind_free} if kind_free != "enum" else {"enum": ["x"]}))
    return edits


def _wrap(node: Schema) -> None:
    inner = dict(node)
    node.clear()
    node["anyOf"] = [inner, {"type": "null"}]


def _object_edits(node: Schema, closing: bool) -> list[Edit]:
    edits: list[Edit] = []
    props: dict[str, Any] = node["properties"]
    free = [name for name in NAMES if name not in props]
    if free:
        edits.append(lambda n: n["properties"].__setitem__(free[0], {"type": "integer"}))
    for name in props:
        edits.append(partial(_drop, name=name))
        edits.append(partial(_unrequire if name in node.get("required", []) else _require, name=name))
    if closing and node.get("additionalProperties") is False:
        edits.append(lambda n: n.pop("additionalProperties"))
    elif closing:
        edits.append(lambda n: n.__setitem__("additionalProperties", False))
    return edits


def _require(node: Schema, name: str) -> None:
    node.setdefault("required", []).append(name)


def _unrequire(node: Schema, name: str) -> None:
    node["required"].remove(name)


def _drop(node: Schema, name: str) -> None:
    node["properties"].pop(name)
    if name in node.get("required", []):
        node["required"].remove(name)


def _array_edits(node: Schema) -> list[Edit]:
    edits: list[Edit] = []
    low, high = node.get("minItems", 0), node.get("maxItems")
    if high is None or low + 1 <= high:
        edits.append(lambda n: n.__setitem__("minItems", n.get("minItems", 0) + 1))
    if low > 0:
        edits.append(lambda n: n.__setitem__("minItems", n["minItems"] - 1))
    if high is None:
        edits.append(lambda n: n.__setitem__("maxItems", max(1, n.get("minItems", 0)) + 1))
    else:
        edits.append(lambda n: n.pop("maxItems"))
        edits.append(lambda n: n.__setitem__("maxItems", n["maxItems"] + 1))
        if high - 1 >= max(low, 1):
            edits.append(lambda n: n.__setitem__("maxItems", n["maxItems"] - 1))
    return edits


@st.composite
def edited(draw: st.DrawFn, schema: Schema, closing: bool = True) -> Schema:
    """``schema`` with one edit that changes its meaning (see :func:`_edits` for ``closing``)."""
    out = copy.deepcopy(schema)
    candidates = [
        (path, edit)
        for path in _positions(out)
        for edit in _edits(_get(out, path), alternative=bool(path) and isinstance(path[-1], int), closing=closing)
    ]
    path, edit = draw(st.sampled_from(candidates))
    edit(_get(out, path))
    return out


@st.composite
def referenced(draw: st.DrawFn, schema: Schema) -> Schema:
    """``schema`` with one subschema moved to ``$defs`` behind a ``$ref`` (the same meaning)."""
    out = copy.deepcopy(schema)
    paths = [path for path in _positions(out) if path and path[0] != "$defs" and not isinstance(path[-1], int)]
    if not paths:
        return {"$defs": {"d0": out}, "$ref": "#/$defs/d0"}
    path = draw(st.sampled_from(paths))
    parent = _get(out, path[:-1])
    out.setdefault("$defs", {})["d0"] = parent[path[-1]]
    parent[path[-1]] = {"$ref": "#/$defs/d0"}
    return out


def instances(schema: Any, *, extra: bool, root: Any = None) -> st.SearchStrategy[Any]:
    """Values near what ``schema`` admits (often valid, sometimes not). ``extra`` adds members a
    schema does not declare wherever it allows them (the strict reading); otherwise only objects
    that name no properties get undeclared members (the declared reading)."""
    root = schema if root is None else root
    if "$ref" in schema:
        return instances(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], extra=extra, root=root)
    if schema is True or schema == {}:
        return st.none() | st.integers(-3, 3) | st.text("ab", max_size=3)
    for keyword in ("anyOf", "oneOf"):
        if keyword in schema:
            return st.one_of([instances(sub, extra=extra, root=root) for sub in schema[keyword]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"] + ["v"])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return st.one_of([_instances_of(schema, k, extra, root) for k in kinds])


def _instances_of(schema: Schema, kind: str, extra: bool, root: Any) -> st.SearchStrategy[Any]:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", -6) - 2, schema.get("maximum", 6) + 2
        values = st.integers(low * 2, high * 2)
        return values if kind == "integer" else values.map(lambda n: n / 2)
    if kind == "string":
        return st.text("ab", min_size=max(0, schema.get("minLength", 0) - 1), max_size=schema.get("maxLength", 4) + 1)
    if kind == "array":
        size = schema.get("maxItems", 3) + 1
        return st.lists(instances(schema["items"], extra=extra, root=root), min_size=0, max_size=size)
    props = schema.get("properties", {})
    members = st.fixed_dictionaries(
        {}, optional={name: instances(sub, extra=extra, root=root) for name, sub in props.items()}
    )
    open_object = schema.get("additionalProperties") is not False and (extra or not props)
    if not open_object:
        return members
    return st.tuples(members, st.none() | st.integers(0, 3)).map(lambda pair: pair[0] | {"zz": pair[1]})
