"""Validating arrays and objects (JSON Schema 2020-12 core 10.3.1 and 10.3.2, validation 6.4 and
6.5), with the draft-07 forms ``items: [...]``/``additionalItems`` and ``dependencies``; for
:class:`~app.drift.validate.Validator`, whose three-valued answers and budget they share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.drift import bounds, regex
from app.drift.bounds import ITEMS, PROPERTIES
from app.drift.jsonvalue import equal

if TYPE_CHECKING:
    from app.drift.validate import Answer, Path, Validator


def _and(first: Answer, second: Answer) -> Answer:
    if first is False or second is False:
        return False
    return None if first is None or second is None else True


def array(v: Validator, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
    if not isinstance(inst, list):
        return True
    result: Answer = True
    if "prefixItems" in schema:
        prefix, prefix_key = schema["prefixItems"], "prefixItems"
        tail, tail_key = schema.get("items"), "items"
    elif isinstance(schema.get("items"), list):
        prefix, prefix_key = schema["items"], "items"
        tail, tail_key = schema.get("additionalItems"), "additionalItems"
    else:
        prefix, prefix_key, tail, tail_key = [], "prefixItems", schema.get("items"), "items"
    if not isinstance(prefix, list) or isinstance(tail, list):
        return v.maybe("invalid_schema")
    for index, item in enumerate(inst):
        if index < len(prefix):
            result = _and(result, v.check(prefix[index], (ptr, prefix_key, index), item, depth + 1))
        elif tail is not None:
            result = _and(result, v.check(tail, (ptr, tail_key), item, depth + 1))
        if result is False:
            return False
    decided, answer = bounds.sizes(v, schema, ptr, len(inst), ITEMS)
    if decided:
        return answer
    if schema.get("uniqueItems") is True:
        v.budget.spend(len(inst) * len(inst) // 8)
        for i, item in enumerate(inst):
            if any(equal(item, other) for other in inst[i + 1 :]):
                return v.no((ptr, "uniqueItems"), "uniqueItems")
    if "contains" in schema:
        result = _and(result, _contains(v, schema, ptr, inst, depth))
    if schema.get("unevaluatedItems", True) is not True:
        result = _and(result, v.maybe("unevaluated"))
    return result


def _contains(v: Validator, schema: dict[str, Any], ptr: Path, inst: list[Any], depth: int) -> Answer:
    counts = bounds.contains_of(schema)
    if counts is None:
        return v.maybe("invalid_schema")
    low, high = counts
    failure = v.failed
    answers = [v.check(schema["contains"], (ptr, "contains"), item, depth + 1) for item in inst]
    v.failed = failure
    yes, maybe = answers.count(True), answers.count(None)
    if not bounds.meets(yes, yes + maybe, low, high):
        return v.no((ptr, "contains"), "contains")
    if bounds.inside(yes, yes + maybe, low, high):
        return True
    return v.maybe("regex_unsupported" if v.reason is None else v.reason)


def members(v: Validator, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
    if not isinstance(inst, dict):
        return True
    props, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
    if not isinstance(props, dict) or not isinstance(patterns, dict):
        return v.maybe("invalid_schema")
    result: Answer = True
    for key, value in inst.items():
        matched = key in props
        if matched:
            result = _and(result, v.check(props[key], (ptr, "properties", key), value, depth + 1))
        for pattern, sub in patterns.items():
            found = regex.search(pattern, key)
            if found is None:
                result, matched = _and(result, v.maybe("regex_unsupported")), True
            elif found:
                matched = True
                result = _and(result, v.check(sub, (ptr, "patternProperties", pattern), value, depth + 1))
        if not matched and "additionalProperties" in schema:
            extra = schema["additionalProperties"]
            result = _and(result, v.check(extra, (ptr, "additionalProperties"), value, depth + 1))
        if "propertyNames" in schema:
            result = _and(result, v.check(schema["propertyNames"], (ptr, "propertyNames"), key, depth + 1))
        if result is False:
            return False
    required = schema.get("required", [])
    if not isinstance(required, list):
        return v.maybe("invalid_schema")
    for index, name in enumerate(required):
        if name not in inst:
            return v.no((ptr, "required", index), "required")
    decided, answer = bounds.sizes(v, schema, ptr, len(inst), PROPERTIES)
    if decided:
        return answer
    for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
        table = schema.get(keyword, {})
        if not isinstance(table, dict):
            return v.maybe("invalid_schema")
        for name, need in table.items():
            if name not in inst:
                continue
            if isinstance(need, list):
                if any(other not in inst for other in need):
                    return v.no((ptr, keyword, name), "dependentRequired")
            else:
                result = _and(result, v.check(need, (ptr, keyword, name), inst, depth + 1))
    if schema.get("unevaluatedProperties", True) is not True:
        result = _and(result, v.maybe("unevaluated"))
    return result
