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

from app.drift import bounds, containers, regex
from app.drift.bounds import LENGTH
from app.drift.document import Conj, Document, child
from app.drift.jsonvalue import TYPE_ATOMS, Index, atom_of, equal, number
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

    __slots__ = ("_index", "budget", "doc", "failed", "reason")

    def __init__(self, doc: Document, budget: Budget) -> None:
        self.doc = doc
        self.budget = budget
        self.failed: tuple[Path, str] | None = None
        self._index: dict[int, tuple[list[Any], Index]] = {}
        #: Why the last answer was ``None``.
        self.reason: str | None = None

    @property
    def failure(self) -> tuple[str, str] | None:
        """The pointer and keyword of the last assertion that failed."""
        return None if self.failed is None else (_text(self.failed[0]), self.failed[1])

    def _member(self, value: Any, values: list[Any]) -> bool:
        held = self._index.get(id(values))
        if held is None or held[0] is not values:
            held = self._index[id(values)] = (values, Index(values))
        return value in held[1]

    def valid(self, schema: Any, instance: Any, pointer: str = "") -> Answer:
        """Whether ``instance`` is valid under ``schema`` (located at ``pointer``)."""
        self.failed = self.reason = None
        return self.check(schema, pointer, instance, 0)

    def valid_conj(self, conj: Conj, instance: Any) -> Answer:
        """Whether ``instance`` is valid under every subschema of ``conj``."""
        self.failed = self.reason = None
        result: Answer = True
        for ref in conj:
            result = _and(result, self.check(ref.node, ref.pointer, instance, 0))
            if result is False:
                return False
        return result

    def no(self, pointer: Path, keyword: str) -> bool:
        self.failed = (pointer, keyword)
        return False

    def maybe(self, reason: str) -> Answer:
        self.reason = self.reason or reason
        return None

    def check(self, schema: Any, ptr: Path, inst: Any, depth: int) -> Answer:
        self.budget.spend()
        if schema is True:
            return True
        if schema is False:
            return self.no(ptr, "false")
        if not isinstance(schema, dict):
            return self.maybe("invalid_schema")
        if depth > MAX_DEPTH:
            return self.maybe("too_deep")
        result: Answer = True
        if "$ref" in schema:
            target = self.doc.resolve(schema["$ref"]) if isinstance(schema["$ref"], str) else None
            if target is None:
                found: Answer = self.maybe("ref_unresolved")
            else:
                found = self.check(target.node, target.pointer, inst, depth + 1)
            if self.doc.legacy or found is False:
                return found
            result = found
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            result = self.maybe("dynamic_ref")
        for check in (self._type, self._numeric, self._string, self._logic):
            result = _and(result, check(schema, ptr, inst, depth))
            if result is False:
                return False
        for keyword_check in (containers.array, containers.members):
            result = _and(result, keyword_check(self, schema, ptr, inst, depth))
            if result is False:
                return False
        return result

    def _type(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        result: Answer = True
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not all(isinstance(name, str) and name in TYPE_ATOMS for name in names):
                return self.maybe("invalid_schema")
            atom = atom_of(inst)
            if not any(atom in TYPE_ATOMS[name] for name in names) and not (
                inst is None and schema.get("nullable") is True
            ):
                return self.no((ptr, "type"), "type")
        if "enum" in schema:
            if not isinstance(schema["enum"], list):
                return self.maybe("invalid_schema")
            if not self._member(inst, schema["enum"]):
                return self.no((ptr, "enum"), "enum")
        if "const" in schema and not equal(inst, schema["const"]):
            return self.no((ptr, "const"), "const")
        return result

    def _numeric(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        value = number(inst)
        if value is None:
            return True
        for lower in (True, False):
            for keyword, bound, strict in bounds.numbers_of(schema, lower):
                if bound is None:
                    return self.maybe("invalid_schema")
                if bounds.outside(value, bound, lower, strict):
                    return self.no((ptr, keyword), keyword)
        if "multipleOf" in schema:
            step = number(schema["multipleOf"])
            if step is None or step <= 0:
                return self.maybe("invalid_schema")
            if (value / step).denominator != 1:
                return self.no((ptr, "multipleOf"), "multipleOf")
        return True

    def _string(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        if not isinstance(inst, str):
            return True
        decided, answer = bounds.sizes(self, schema, ptr, len(inst), LENGTH)
        if decided:
            return answer
        if "pattern" in schema:
            pattern = schema["pattern"]
            found = regex.search(pattern, inst) if isinstance(pattern, str) else None
            if found is None:
                return self.maybe("regex_unsupported" if isinstance(pattern, str) else "invalid_schema")
            if not found:
                return self.no((ptr, "pattern"), "pattern")
        return True

    def _logic(self, schema: dict[str, Any], ptr: Path, inst: Any, depth: int) -> Answer:
        result: Answer = True
        conjuncts = schema.get("allOf", [])
        if not isinstance(conjuncts, list):
            return self.maybe("invalid_schema")
        for index, sub in enumerate(conjuncts):
            result = _and(result, self.check(sub, (ptr, "allOf", index), inst, depth + 1))
            if result is False:
                return False
        for keyword in ("anyOf", "oneOf"):
            if keyword not in schema:
                continue
            alternatives = schema[keyword]
            if not isinstance(alternatives, list) or not alternatives:
                return self.maybe("invalid_schema")
            answers = [
                self.check(sub, (ptr, keyword, index), inst, depth + 1) for index, sub in enumerate(alternatives)
            ]
            yes, maybe = answers.count(True), answers.count(None)
            if keyword == "anyOf":
                found: Answer = True if yes else (None if maybe else False)
            else:
                found = False if yes > 1 else (None if maybe else yes == 1)
            if found is False:
                return self.no((ptr, keyword), keyword)
            result = _and(result, found)
        if "not" in schema:
            inner = self.check(schema["not"], (ptr, "not"), inst, depth + 1)
            if inner is True:
                return self.no((ptr, "not"), "not")
            result = _and(result, None if inner is None else True)
        if "if" in schema:
            condition = self.check(schema["if"], (ptr, "if"), inst, depth + 1)
            if condition is None:
                return self.maybe(self.reason or "invalid_schema")
            branch = "then" if condition else "else"
            if branch in schema:
                result = _and(result, self.check(schema[branch], (ptr, branch), inst, depth + 1))
        return result
