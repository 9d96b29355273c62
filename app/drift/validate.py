"""A bounded, three-valued JSON Schema validator: ``True``, ``False`` or ``None`` (cannot tell).

Every example instance a finding shows is checked here against both whole schemas before it is
shown, and so is every value of an old ``enum`` against the new schema. The semantics are JSON
Schema 2020-12 (validation vocabulary, sections 6.1 to 6.5; applicators, core section 10) with
the forms seen in the wild that the comparison also reads: draft-07 ``definitions``, array
``items`` with ``additionalItems``, ``dependencies``, draft-04 boolean ``exclusiveMinimum`` and
``exclusiveMaximum``, and OpenAPI's ``nullable: true`` (with a ``type``, it also admits ``null``).
``format`` is an annotation (validation, section 7.2.1), as by default in 2020-12.

``None`` is the answer, with a reason key in :attr:`Validator.reason`, for what cannot be told
safely: a ``pattern`` :mod:`app.drift.regex` does not run, an unresolved ``$ref``,
``$dynamicRef``, ``unevaluatedProperties``/``unevaluatedItems``, a keyword with an invalid value,
nesting beyond :data:`MAX_DEPTH`. Each keyword checked is a step of the :class:`Budget`.
"""

from __future__ import annotations

from typing import Any

from app.drift import regex
from app.drift.document import Conj, Document, child
from app.drift.jsonvalue import TYPE_ATOMS, Index, atom_of, count, equal, number
from app.drift.limits import Budget

MAX_DEPTH = 64
Answer = bool | None
#: A location, built only when a failure is read: a pointer, or ``(parent, *tokens)``.
Path = str | tuple[Any, ...]


def _text(path: Path) -> str:
    """The RFC 6901 pointer of a :data:`Path`."""
    steps: list[tuple[Any, ...]] = []
    while isinstance(path, tuple):
        steps.append(path[1:])
        path = path[0]
    for tokens in reversed(steps):
        path = child(path, *tokens)
    return path


def _and(first: Answer, second: Answer) -> Answer:
    if first is False or second is False:
        return False
    return None if first is None or second is None else True


class Validator:
    """Validates instances against the subschemas of one document."""

    __slots__ = ("_failure", "_index", "budget", "doc", "reason")

    def __init__(self, doc: Document, budget: Budget) -> None:
        self.doc = doc
        self.budget = budget
        self._failure: tuple[Path, str] | None = None
        self._index: dict[int, tuple[list[Any], Index]] = {}
        #: Why the last answer was ``None``.
        self.reason: str | None = None

    @property
    def failure(self) -> tuple[str, str] | None:
        """The pointer and keyword of the last assertion that failed."""
        return None if self._failure is None else (_text(self._failure[0]), self._failure[1])

    def _member(self, value: Any, values: list[Any]) -> bool:
        held = self._index.get(id(values))
        if held is None or held[0] is not values:
            held = self._index[id(values)] = (values, Index(values))
        return value in held[1]

    def valid(self, schema: Any, instance: Any, pointer: str = "") -> Answer:
        """Whether ``instance`` is valid under ``schema`` (located at ``pointer``)."""
        self._failure = self.reason = None
        return self._check(schema, pointer, instance, 0)

    def valid_conj(self, conj: Conj, instance: Any) -> Answer:
        """Whether ``instance`` is valid under every subschema of ``conj``."""
        self._failure = self.reason = None
        result: Answer = True
        for ref in conj:
            result = _and(result, self._check(ref.node, ref.pointer, instance, 0))
            if result is False:
                return False
        return result

    def _no(self, pointer: Path, keyword: str) -> bool:
        self._failure = (pointer, keyword)
        return False

    def _maybe(self, reason: str) -> Answer:
        self.reason = self.reason or reason
        return None

    def _check(self, schema: Any, ptr: Path, inst: Any, depth: int) -> Answer:
        self.budget.spend()
        if schema is True:
            return True
        if schema is False:
            return self._no(ptr, "false")
        if not isinstance(schema, dict):
            return self._maybe("invalid_schema")
        if depth > MAX_DEPTH:
            return self._maybe("too_deep")
        result: Answer = True
        if "$ref" in schema:
            target = self.doc.resolve(schema["$ref"]) if isinstance(schema["$ref"], str) else None
            if target is None:
                found: Answer = self._maybe("ref_unresolved")
            else:
                found = self._check(target.node, target.pointer, inst, depth + 1)
            if self.doc.legacy or found is False:
                return found
            result = found
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            result = self._maybe("dynamic_ref")
        for check in (self._type, self._numeric, self._string, self._array, self._object, self._logic):
            result = _and(result, check(schema, ptr, inst, depth))
            if result is False:
                return False
        return result

    def _type(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        result: Answer = True
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not all(isinstance(name, str) and name in TYPE_ATOMS for name in names):
                return self._maybe("invalid_schema")
            atom = atom_of(inst)
            if not any(atom in TYPE_ATOMS[name] for name in names) and not (
                inst is None and schema.get("nullable") is True
            ):
                return self._no((ptr, "type"), "type")
        if "enum" in schema:
            if not isinstance(schema["enum"], list):
                return self._maybe("invalid_schema")
            if not self._member(inst, schema["enum"]):
                return self._no((ptr, "enum"), "enum")
        if "const" in schema and not equal(inst, schema["const"]):
            return self._no((ptr, "const"), "const")
        return result

    def _numeric(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        value = number(inst)
        if value is None:
            return True
        for keyword, above in (("minimum", True), ("maximum", False)):
            if keyword in schema:
                bound = number(schema[keyword])
                if bound is None:
                    return self._maybe("invalid_schema")
                strict = schema.get("exclusiveM" + keyword[1:]) is True
                if (value < bound if above else value > bound) or (strict and value == bound):
                    return self._no((ptr, keyword), keyword)
            exclusive = "exclusiveM" + keyword[1:]
            if exclusive in schema and not isinstance(schema[exclusive], bool):
                bound = number(schema[exclusive])
                if bound is None:
                    return self._maybe("invalid_schema")
                if value <= bound if above else value >= bound:
                    return self._no((ptr, exclusive), exclusive)
        if "multipleOf" in schema:
            step = number(schema["multipleOf"])
            if step is None or step <= 0:
                return self._maybe("invalid_schema")
            if (value / step).denominator != 1:
                return self._no((ptr, "multipleOf"), "multipleOf")
        return True

    def _string(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        if not isinstance(inst, str):
            return True
        for keyword, above in (("minLength", True), ("maxLength", False)):
            if keyword in schema:
                limit = count(schema[keyword])
                if limit is None:
                    return self._maybe("invalid_schema")
                if len(inst) < limit if above else len(inst) > limit:
                    return self._no((ptr, keyword), keyword)
        if "pattern" in schema:
            pattern = schema["pattern"]
            found = regex.search(pattern, inst) if isinstance(pattern, str) else None
            if found is None:
                return self._maybe("regex_unsupported" if isinstance(pattern, str) else "invalid_schema")
            if not found:
                return self._no((ptr, "pattern"), "pattern")
        return True

    def _array(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
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
            return self._maybe("invalid_schema")
        for index, item in enumerate(inst):
            if index < len(prefix):
                result = _and(result, self._check(prefix[index], (ptr, prefix_key, index), item, depth + 1))
            elif tail is not None:
                result = _and(result, self._check(tail, (ptr, tail_key), item, depth + 1))
            if result is False:
                return False
        for keyword, above in (("minItems", True), ("maxItems", False)):
            if keyword in schema:
                limit = count(schema[keyword])
                if limit is None:
                    return self._maybe("invalid_schema")
                if len(inst) < limit if above else len(inst) > limit:
                    return self._no((ptr, keyword), keyword)
        if schema.get("uniqueItems") is True:
            self.budget.spend(len(inst) * len(inst) // 8)
            for i, item in enumerate(inst):
                if any(equal(item, other) for other in inst[i + 1 :]):
                    return self._no((ptr, "uniqueItems"), "uniqueItems")
        if "contains" in schema:
            result = _and(result, self._contains(schema, ptr, inst, depth))
        if schema.get("unevaluatedItems", True) is not True:
            result = _and(result, self._maybe("unevaluated"))
        return result

    def _contains(self, schema: dict[str, Any], ptr: Path, inst: list[Any], depth: int) -> Answer:
        low = count(schema.get("minContains", 1))
        high = count(schema["maxContains"]) if "maxContains" in schema else None
        if low is None or ("maxContains" in schema and high is None):
            return self._maybe("invalid_schema")
        failure = self._failure
        answers = [self._check(schema["contains"], (ptr, "contains"), item, depth + 1) for item in inst]
        self._failure = failure
        yes, maybe = answers.count(True), answers.count(None)
        if yes + maybe < low or (high is not None and yes > high):
            return self._no((ptr, "contains"), "contains")
        if yes >= low and (high is None or yes + maybe <= high):
            return True
        return self._maybe("regex_unsupported" if self.reason is None else self.reason)

    def _object(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        if not isinstance(inst, dict):
            return True
        props, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        if not isinstance(props, dict) or not isinstance(patterns, dict):
            return self._maybe("invalid_schema")
        result: Answer = True
        for key, value in inst.items():
            matched = key in props
            if matched:
                result = _and(result, self._check(props[key], (ptr, "properties", key), value, depth + 1))
            for pattern, sub in patterns.items():
                found = regex.search(pattern, key)
                if found is None:
                    result, matched = _and(result, self._maybe("regex_unsupported")), True
                elif found:
                    matched = True
                    result = _and(result, self._check(sub, (ptr, "patternProperties", pattern), value, depth + 1))
            if not matched and "additionalProperties" in schema:
                extra = schema["additionalProperties"]
                result = _and(result, self._check(extra, (ptr, "additionalProperties"), value, depth + 1))
            if "propertyNames" in schema:
                result = _and(result, self._check(schema["propertyNames"], (ptr, "propertyNames"), key, depth + 1))
            if result is False:
                return False
        required = schema.get("required", [])
        if not isinstance(required, list):
            return self._maybe("invalid_schema")
        for index, name in enumerate(required):
            if name not in inst:
                return self._no((ptr, "required", index), "required")
        for keyword, above in (("minProperties", True), ("maxProperties", False)):
            if keyword in schema:
                limit = count(schema[keyword])
                if limit is None:
                    return self._maybe("invalid_schema")
                if len(inst) < limit if above else len(inst) > limit:
                    return self._no((ptr, keyword), keyword)
        for keyword in ("dependentRequired", "dependentSchemas", "dependencies"):
            table = schema.get(keyword, {})
            if not isinstance(table, dict):
                return self._maybe("invalid_schema")
            for name, need in table.items():
                if name not in inst:
                    continue
                if isinstance(need, list):
                    if any(other not in inst for other in need):
                        return self._no((ptr, keyword, name), "dependentRequired")
                else:
                    result = _and(result, self._check(need, (ptr, keyword, name), inst, depth + 1))
        if schema.get("unevaluatedProperties", True) is not True:
            result = _and(result, self._maybe("unevaluated"))
        return result

    def _logic(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        result: Answer = True
        conjuncts = schema.get("allOf", [])
        if not isinstance(conjuncts, list):
            return self._maybe("invalid_schema")
        for index, sub in enumerate(conjuncts):
            result = _and(result, self._check(sub, (ptr, "allOf", index), inst, depth + 1))
            if result is False:
                return False
        for keyword in ("anyOf", "oneOf"):
            if keyword not in schema:
                continue
            alternatives = schema[keyword]
            if not isinstance(alternatives, list) or not alternatives:
                return self._maybe("invalid_schema")
            answers = [
                self._check(sub, (ptr, keyword, index), inst, depth + 1) for index, sub in enumerate(alternatives)
            ]
            yes, maybe = answers.count(True), answers.count(None)
            if keyword == "anyOf":
                found: Answer = True if yes else (None if maybe else False)
            else:
                found = False if yes > 1 else (None if maybe else yes == 1)
            if found is False:
                return self._no((ptr, keyword), keyword)
            result = _and(result, found)
        if "not" in schema:
            inner = self._check(schema["not"], (ptr, "not"), inst, depth + 1)
            if inner is True:
                return self._no((ptr, "not"), "not")
            result = _and(result, None if inner is None else True)
        if "if" in schema:
            condition = self._check(schema["if"], (ptr, "if"), inst, depth + 1)
            if condition is None:
                return self._maybe(self.reason or "invalid_schema")
            branch = "then" if condition else "else"
            if branch in schema:
                result = _and(result, self._check(schema[branch], (ptr, branch), inst, depth + 1))
        return result
