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

from app.drift.branches import Branch, Choice, Undecided
from app.drift.document import Conj, Document, Ref, child
from app.drift.keywords import apply
from app.drift.limits import MAX_BRANCHES, Budget


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
                apply(branch, node, ptr)
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
