"""Merging the keywords of one schema object into a branch (:mod:`app.drift.branches`).

Applicators (``allOf``, ``anyOf``, ``oneOf``, ``$ref``) are :mod:`app.drift.expand`'s; here are
the assertions (JSON Schema 2020-12 validation, sections 6.1 to 6.5), merged by conjunction:
types intersect, ``enum``/``const`` values intersect, the tightest bound of each side stays,
``required`` members add up, and each object keeps its own ``properties`` shape. The forms seen
in the wild are read as what they meant: draft-04 boolean ``exclusiveMinimum``/``exclusiveMaximum``,
draft-07 ``items: [...]``/``additionalItems`` and ``dependencies``, OpenAPI's ``nullable``.
``not``, ``if``/``then``/``else``, ``dependentSchemas``, ``unevaluated*`` and ``$dynamicRef``
are kept as :class:`~app.drift.branches.Opaque`. A value the specification does not allow is
recorded as invalid.
"""

from __future__ import annotations

from typing import Any

from app.drift import bounds
from app.drift.bounds import ITEMS, LENGTH, NUMBER, PROPERTIES, Counts
from app.drift.branches import Bound, Branch, Contains, Items, Limit, Opaque, Shape
from app.drift.document import Ref, child
from app.drift.jsonvalue import TYPE_ATOMS, Index, count, number

_OBJECT, _ARRAY = frozenset({"object"}), frozenset({"array"})
_NO_ASSERTION = frozenset({"title", "description", "default", "examples", "$comment", "deprecated"})


def apply(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    """Merge the keywords of one schema object (not its applicators) into ``branch``."""
    _types(branch, node, ptr)
    _numbers(branch, node, ptr)
    _arrays(branch, node, ptr)
    _objects(branch, node, ptr)
    _others(branch, node, ptr)


def _types(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    if "type" in node:
        names = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if not all(isinstance(name, str) and name in TYPE_ATOMS for name in names):
            branch.invalid.append(child(ptr, "type"))
        else:
            atoms = frozenset(atom for name in names for atom in TYPE_ATOMS[name])
            raw = node["type"]
            if node.get("nullable") is True:
                atoms |= TYPE_ATOMS["null"]
                raw = {"type": raw, "nullable": True}
            branch.atoms &= atoms
            branch.type_at, branch.type_raw = child(ptr, "type"), raw
    for keyword in ("enum", "const"):
        if keyword not in node:
            continue
        allowed = node["enum"] if keyword == "enum" else [node["const"]]
        if not isinstance(allowed, list):
            branch.invalid.append(child(ptr, keyword))
            continue
        index = Index(allowed)
        kept = allowed if branch.values is None else [value for value in branch.values if value in index]
        branch.values, branch.values_at, branch.values_kw = list(kept), child(ptr, keyword), keyword
    if not branch.atoms or branch.values == []:
        branch.empty = True


def _limit(
    branch: Branch, node: dict[str, Any], ptr: str, family: Counts, lower: bool, current: Limit | None
) -> Limit | None:
    keyword = family.keyword(lower)
    if keyword not in node:
        return current
    value = count(node[keyword])
    if value is None:
        branch.invalid.append(child(ptr, keyword))
        return current
    if bounds.stricter((value, False), bounds.counted(current), lower):
        return Limit(value, child(ptr, keyword))
    return current


def _bound(branch: Branch, node: dict[str, Any], ptr: str, lower: bool) -> None:
    found: list[Bound] = []
    for keyword, value, strict in bounds.numbers_of(node, lower):
        if value is None:
            branch.invalid.append(child(ptr, keyword))
            continue
        raw = {keyword: node[keyword]}
        if strict and keyword == NUMBER.keyword(lower):
            raw[NUMBER.keywords(lower)[1]] = True  # the draft-04 flag is shown with its bound
        found.append(Bound(value, strict, child(ptr, keyword), raw))
    for bound in found:
        current = branch.lo if lower else branch.hi
        if bounds.stricter(bounds.point(bound), bounds.point(current), lower):
            if lower:
                branch.lo = bound
            else:
                branch.hi = bound


def _numbers(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    _bound(branch, node, ptr, True)
    _bound(branch, node, ptr, False)
    if "multipleOf" in node:
        step = number(node["multipleOf"])
        if step is None or step <= 0:
            branch.invalid.append(child(ptr, "multipleOf"))
        else:
            branch.multiples.append((step, child(ptr, "multipleOf"), node["multipleOf"]))
    branch.min_len = _limit(branch, node, ptr, LENGTH, True, branch.min_len)
    branch.max_len = _limit(branch, node, ptr, LENGTH, False, branch.max_len)
    for keyword, target in (("pattern", branch.patterns), ("format", branch.formats)):
        if keyword in node:
            if isinstance(node[keyword], str):
                target.append((node[keyword], child(ptr, keyword)))
            elif keyword == "pattern":
                branch.invalid.append(child(ptr, keyword))


def _arrays(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    items = node.get("items")
    if "prefixItems" in node or "items" in node:
        if "prefixItems" in node:
            prefix, prefix_key, tail, tail_key = node["prefixItems"], "prefixItems", items, "items"
        elif isinstance(items, list):
            prefix, prefix_key, tail, tail_key = items, "items", node.get("additionalItems"), "additionalItems"
        else:
            prefix, prefix_key, tail, tail_key = [], "prefixItems", items, "items"
        if not isinstance(prefix, list) or isinstance(tail, list):
            branch.invalid.append(child(ptr, "items"))
        else:
            branch.items.append(
                Items(
                    tuple(Ref(sub, child(ptr, prefix_key, i)) for i, sub in enumerate(prefix)),
                    None if tail is None else Ref(tail, child(ptr, tail_key)),
                    ptr,
                )
            )
    branch.min_items = _limit(branch, node, ptr, ITEMS, True, branch.min_items)
    branch.max_items = _limit(branch, node, ptr, ITEMS, False, branch.max_items)
    if node.get("uniqueItems") is True:
        branch.unique = branch.unique or child(ptr, "uniqueItems")
    if "contains" in node:
        counts = bounds.contains_of(node)
        if counts is None:
            branch.invalid.append(child(ptr, "contains"))
        else:
            branch.contains.append(Contains(Ref(node["contains"], child(ptr, "contains")), *counts, ptr))
    if node.get("unevaluatedItems", True) is not True:
        branch.opaque.append(Opaque("unevaluated", child(ptr, "unevaluatedItems"), (node["unevaluatedItems"],), _ARRAY))


def _objects(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    props, patterns = node.get("properties", {}), node.get("patternProperties", {})
    if not isinstance(props, dict) or not isinstance(patterns, dict):
        branch.invalid.append(child(ptr, "properties"))
    elif props or patterns or "additionalProperties" in node:
        branch.shapes.append(
            Shape(
                props,
                tuple((key, Ref(sub, child(ptr, "patternProperties", key))) for key, sub in patterns.items()),
                Ref(node["additionalProperties"], child(ptr, "additionalProperties"))
                if "additionalProperties" in node
                else None,
                ptr,
            )
        )
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(name, str) for name in required):
        branch.invalid.append(child(ptr, "required"))
    else:
        for index, name in enumerate(required):
            branch.required.setdefault(name, child(ptr, "required", index))
    branch.min_props = _limit(branch, node, ptr, PROPERTIES, True, branch.min_props)
    branch.max_props = _limit(branch, node, ptr, PROPERTIES, False, branch.max_props)
    if "propertyNames" in node:
        branch.names.append(Ref(node["propertyNames"], child(ptr, "propertyNames")))
    for keyword in ("dependentRequired", "dependencies", "dependentSchemas"):
        table = node.get(keyword, {})
        if not isinstance(table, dict):
            branch.invalid.append(child(ptr, keyword))
            continue
        for name, need in table.items():
            at = child(ptr, keyword, name)
            if isinstance(need, list) and keyword != "dependentSchemas":
                known = branch.dependent.get(name, ((), at))[0]
                branch.dependent[name] = (tuple(dict.fromkeys((*known, *map(str, need)))), at)
            else:
                branch.opaque.append(Opaque("dependent_schemas", at, (name, need), _OBJECT))
    if node.get("unevaluatedProperties", True) is not True:
        at = child(ptr, "unevaluatedProperties")
        branch.opaque.append(Opaque("unevaluated", at, (node["unevaluatedProperties"],), _OBJECT))


def _others(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    if "not" in node:
        negated = node["not"]
        if negated is True or (isinstance(negated, dict) and _NO_ASSERTION.issuperset(negated)):
            branch.empty = True
        elif negated is not False:
            branch.opaque.append(Opaque("not_keyword", child(ptr, "not"), (negated,)))
    if "if" in node and ("then" in node or "else" in node):
        parts = (node["if"], node.get("then"), node.get("else"))
        branch.opaque.append(Opaque("if_then_else", child(ptr, "if"), parts))
    for keyword in ("$dynamicRef", "$recursiveRef"):
        if keyword in node:
            branch.opaque.append(Opaque("dynamic_ref", child(ptr, keyword), (node[keyword],)))
