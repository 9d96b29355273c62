"""Expanding a schema at one instance level into branches (:mod:`app.drift.branches`).

``allOf`` and ``$ref`` merge into the branch (2020-12 core, sections 10.2.1.1 and 8.2.3.1);
``anyOf`` and ``oneOf`` fork it, one branch per alternative (sections 10.2.1.2 and 10.2.1.3),
so a branch is a conjunction with no disjunction left at this level. A ``oneOf`` branch keeps
its :class:`~app.drift.branches.Choice`, so exclusivity can be checked where it matters. A
keyword whose value the specification does not allow is recorded as invalid (``invalid_schema``).
A ``$ref`` that leads back to a subschema already being expanded at this level is a cycle that
no instance resolves (``ref_cycle``); through a member or an item it is recursion, compared
level by level (:mod:`app.drift.checker`).
"""

from __future__ import annotations

from typing import Any

from app.drift.branches import Bound, Branch, Choice, Contains, Items, Limit, Opaque, Shape, Undecided
from app.drift.document import Conj, Document, Ref, child
from app.drift.jsonvalue import TYPE_ATOMS, Index, count, number
from app.drift.limits import MAX_BRANCHES, Budget

_OBJECT, _ARRAY = frozenset({"object"}), frozenset({"array"})
_NO_ASSERTION = frozenset({"title", "description", "default", "examples", "$comment", "deprecated"})


class Expander:
    """Expands conjunctions of one document's subschemas into branches."""

    __slots__ = ("_memo", "budget", "doc")

    def __init__(self, doc: Document, budget: Budget) -> None:
        self.doc = doc
        self.budget = budget
        self._memo: dict[tuple[tuple[int, str], ...], list[Branch] | Undecided] = {}

    def expand(self, conj: Conj) -> list[Branch]:
        """The satisfiable-looking branches of ``conj`` (none: it accepts nothing), remembered:
        callers read branches and never change them.

        Raises:
            Undecided: ``ref_unresolved``, ``ref_cycle``, ``too_large`` (too many alternatives).
        """
        key = tuple((id(ref.node), ref.pointer) for ref in conj)
        found = self._memo.get(key)
        if found is None:
            try:
                found = self._expand(conj)
            except Undecided as exc:
                found = exc
            self._memo[key] = found
        if isinstance(found, Undecided):
            raise found
        return found

    def _expand(self, conj: Conj) -> list[Branch]:
        branches = [Branch()]
        for ref in conj:
            for branch in branches:
                branch.refs.append(ref)
            branches = self._node(ref, branches, ())
            if not branches:
                break
        return branches

    def _node(self, ref: Ref, branches: list[Branch], chain: tuple[int, ...]) -> list[Branch]:
        self.budget.spend()
        node, ptr = ref.node, ref.pointer
        if node is True:
            return branches
        if node is False:
            return []
        if not isinstance(node, dict):
            for branch in branches:
                branch.invalid.append(ptr)
            return branches
        if id(node) in chain:
            raise Undecided("ref_cycle", ptr)
        done = [branch for branch in branches if id(node) in branch.merged]
        if done:  # merged already (a diamond of references): merging it again changes nothing
            rest = [branch for branch in branches if id(node) not in branch.merged]
            return done + (self._node(ref, rest, chain) if rest else [])
        for branch in branches:
            branch.merged.add(id(node))
        chain = (*chain, id(node))
        legacy = self.doc.legacy and "$ref" in node
        if not legacy:
            for branch in branches:
                _apply(branch, node, ptr)
            branches = [branch for branch in branches if not branch.empty]
        if "$ref" in node:
            target = self.doc.resolve(node["$ref"]) if isinstance(node["$ref"], str) else None
            if target is None:
                raise Undecided("ref_unresolved", child(ptr, "$ref"))
            branches = self._node(target, branches, chain)
        if legacy or not branches:
            return branches
        conjuncts = node.get("allOf", [])
        if not isinstance(conjuncts, list):
            conjuncts = []
            for branch in branches:
                branch.invalid.append(child(ptr, "allOf"))
        for index, sub in enumerate(conjuncts):
            branches = self._node(Ref(sub, child(ptr, "allOf", index)), branches, chain)
        for keyword in ("anyOf", "oneOf"):
            if keyword in node and branches:
                branches = self._fork(node[keyword], child(ptr, keyword), keyword, branches, chain)
        return branches

    def _fork(
        self, alternatives: Any, ptr: str, keyword: str, branches: list[Branch], chain: tuple[int, ...]
    ) -> list[Branch]:
        if not isinstance(alternatives, list) or not alternatives:
            for branch in branches:
                branch.invalid.append(ptr)
            return branches
        out: list[Branch] = []
        for index, alternative in enumerate(alternatives):
            ref = Ref(alternative, child(ptr, index))
            forked = [branch.fork() for branch in branches]
            self.budget.spend(len(forked))
            for branch in forked:
                branch.refs.append(ref)
                branch.choices.append(Choice(keyword, alternatives, index, ptr))
            out.extend(self._node(ref, forked, chain))
            if len(out) > MAX_BRANCHES:
                raise Undecided("too_large", ptr)
        return out


def _apply(branch: Branch, node: dict[str, Any], ptr: str) -> None:
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


def _limit(branch: Branch, node: dict[str, Any], ptr: str, keyword: str, current: Limit | None) -> Limit | None:
    if keyword not in node:
        return current
    value = count(node[keyword])
    if value is None:
        branch.invalid.append(child(ptr, keyword))
        return current
    lower = keyword.startswith("min")
    if current is None or (value > current.value if lower else value < current.value):
        return Limit(value, child(ptr, keyword))
    return current


def _bound(branch: Branch, node: dict[str, Any], ptr: str, lower: bool) -> None:
    keyword = "minimum" if lower else "maximum"
    exclusive = "exclusiveMinimum" if lower else "exclusiveMaximum"
    found: list[Bound] = []
    if keyword in node:
        value = number(node[keyword])
        strict = node.get(exclusive) is True
        raw = {keyword: node[keyword]} | ({exclusive: True} if strict else {})
        if value is None:
            branch.invalid.append(child(ptr, keyword))
        else:
            found.append(Bound(value, strict, child(ptr, keyword), raw))
    if exclusive in node and not isinstance(node[exclusive], bool):
        value = number(node[exclusive])
        if value is None:
            branch.invalid.append(child(ptr, exclusive))
        else:
            found.append(Bound(value, True, child(ptr, exclusive), {exclusive: node[exclusive]}))
    for bound in found:
        current = branch.lo if lower else branch.hi
        if current is None or _tighter(bound, current, lower):
            if lower:
                branch.lo = bound
            else:
                branch.hi = bound


def _tighter(bound: Bound, than: Bound, lower: bool) -> bool:
    if bound.value == than.value:
        return bound.exclusive and not than.exclusive
    return bound.value > than.value if lower else bound.value < than.value


def _numbers(branch: Branch, node: dict[str, Any], ptr: str) -> None:
    _bound(branch, node, ptr, True)
    _bound(branch, node, ptr, False)
    if "multipleOf" in node:
        step = number(node["multipleOf"])
        if step is None or step <= 0:
            branch.invalid.append(child(ptr, "multipleOf"))
        else:
            branch.multiples.append((step, child(ptr, "multipleOf"), node["multipleOf"]))
    branch.min_len = _limit(branch, node, ptr, "minLength", branch.min_len)
    branch.max_len = _limit(branch, node, ptr, "maxLength", branch.max_len)
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
    branch.min_items = _limit(branch, node, ptr, "minItems", branch.min_items)
    branch.max_items = _limit(branch, node, ptr, "maxItems", branch.max_items)
    if node.get("uniqueItems") is True:
        branch.unique = branch.unique or child(ptr, "uniqueItems")
    if "contains" in node:
        low = count(node.get("minContains", 1))
        high = count(node["maxContains"]) if "maxContains" in node else None
        if low is None or ("maxContains" in node and high is None):
            branch.invalid.append(child(ptr, "contains"))
        else:
            branch.contains.append(Contains(Ref(node["contains"], child(ptr, "contains")), low, high, ptr))
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
    branch.min_props = _limit(branch, node, ptr, "minProperties", branch.min_props)
    branch.max_props = _limit(branch, node, ptr, "maxProperties", branch.max_props)
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
