"""One schema document: its references, its draft, and the text of its subschemas.

Policy on references (JSON Schema 2020-12 core, section 8.2.3.1 ``$ref``; draft-07 core,
section 8.3):

- A ``$ref`` resolves inside the document only: ``#`` (the root), ``#/...`` (a JSON pointer,
  RFC 6901, percent-decoded as a URI fragment: ``#/$defs/x``, ``#/definitions/x``,
  ``#/properties/a/items``), optionally prefixed by the root's own ``$id``. Anything else (another
  document, an ``$anchor``, a pointer to nothing) is unresolved, and the comparison says
  ``ref_unresolved``. A ``$id`` below the root is not followed: references resolve against the root.
- ``$ref`` beside other keywords is one more constraint, as in 2020-12 (section 8.2.3.1); in a
  document whose ``$schema`` names draft-07 or an older draft, the other keywords are ignored, as
  those drafts say.
- Two subschemas of two documents are the *same* when their JSON texts are equal (members
  sorted, numbers as written, ``true`` never ``1``) and so is every reference reachable from
  them (:meth:`Document.refs`); that is how unchanged parts, and keywords this checker does not
  reason about (``not``, ``if``...), are recognised on both sides.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from app.drift.limits import Budget

_LEGACY = re.compile(r"draft-0[0-7]\b|draft-0[0-7]/")
_REF_TEXT = re.compile(r'"\$ref":"((?:[^"\\]|\\.)*)"')
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class Ref:
    """A subschema and its location in its document (an RFC 6901 pointer)."""

    node: Any
    pointer: str


#: A conjunction: every subschema applies to the same instance. Empty accepts everything.
Conj = tuple[Ref, ...]


def escape(token: str) -> str:
    """One RFC 6901 reference token."""
    if "~" not in token and "/" not in token:
        return token
    return token.replace("~", "~0").replace("/", "~1")


def child(pointer: str, *tokens: str | int) -> str:
    """``pointer`` extended by ``tokens``."""
    return pointer + "".join("/" + escape(str(token)) for token in tokens)


class Document:
    """A schema document (a tool's ``inputSchema`` or ``outputSchema``)."""

    __slots__ = ("_base", "_refs", "_text", "legacy", "root")

    def __init__(self, root: Any) -> None:
        self.root = root
        declared = root.get("$schema") if isinstance(root, dict) else None
        self.legacy = isinstance(declared, str) and bool(_LEGACY.search(declared))
        base = root.get("$id") if isinstance(root, dict) else None
        self._base = base.split("#", 1)[0] if isinstance(base, str) else ""
        self._refs: dict[str, Ref | None] = {}
        self._text: dict[int, tuple[Any, str | None]] = {}

    def resolve(self, ref: str) -> Ref | None:
        """The subschema ``ref`` points to, or ``None`` when it does not resolve here."""
        if ref in self._refs:
            return self._refs[ref]
        self._refs[ref] = found = self._resolve(ref)
        return found

    def _resolve(self, ref: str) -> Ref | None:
        if self._base and ref.startswith(self._base):
            ref = ref[len(self._base) :]
        if not ref.startswith("#"):
            return None
        fragment = unquote(ref[1:])
        if fragment == "":
            return Ref(self.root, "")
        if not fragment.startswith("/"):
            return None
        node = self.root
        for raw in fragment[1:].split("/"):
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and (token == "0" or token[0] != "0"):
                index = int(token)
                if index >= len(node):
                    return None
                node = node[index]
            else:
                return None
        return Ref(node, fragment)

    def at(self, pointer: str) -> Any:
        """The value at an RFC 6901 ``pointer`` of this document, ``None`` when there is none."""
        node = self.root
        for raw in pointer.split("/")[1:]:
            token = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and token in node:
                node = node[token]
            elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def text(self, node: Any) -> str | None:
        """The JSON text of a subschema (members sorted), ``None`` when it has none."""
        held = self._text.get(id(node))
        if held is not None and held[0] is node:
            return held[1]
        try:
            text: str | None = _ENCODER.encode(node)
        except (TypeError, ValueError, RecursionError):
            text = None
        self._text[id(node)] = (node, text)
        return text


def refs(text: str) -> list[str]:
    """The ``$ref`` strings in the JSON text of a subschema."""
    out: list[str] = []
    for match in _REF_TEXT.finditer(text):
        value = json.loads('"' + match.group(1) + '"')
        if isinstance(value, str):
            out.append(value)
    return out


class Sameness:
    """Whether subschemas of two documents are the same (see the module docs), remembered.
    Each reference visited to decide it is a step of ``budget``."""

    __slots__ = ("_found", "_memo", "_refs", "budget", "first", "second")

    def __init__(self, first: Document, second: Document, budget: Budget) -> None:
        self.first = first
        self.second = second
        self.budget = budget
        self._memo: dict[tuple[int, int], bool] = {}
        self._refs: dict[str, bool] = {}
        self._found: dict[str, list[str]] = {}

    def _refs_in(self, text: str) -> list[str]:
        found = self._found.get(text)
        if found is None:
            found = self._found[text] = refs(text)
        return found

    def __call__(self, a: Any, b: Any) -> bool:
        key = (id(a), id(b))
        if key in self._memo:
            return self._memo[key]
        try:
            if a != b:  # unequal values have unequal texts (equal ones may still differ: true and 1)
                self._memo[key] = False
                return False
        except RecursionError:
            return False
        text = self.first.text(a)
        result = text is not None and text == self.second.text(b)
        if result and text is not None:
            if "$dynamicRef" in text or "$recursiveRef" in text:
                result = False
            elif '"$ref"' in text and self.first.legacy != self.second.legacy:
                result = False  # the siblings of $ref count in one draft and not in the other
            elif '"$ref"' in text:
                result = all(self._ref(ref) for ref in self._refs_in(text))
        self._memo[key] = result
        return result

    def _ref(self, ref: str) -> bool:
        """Whether ``ref`` and every reference reachable from it have the same text in both."""
        if ref in self._refs:
            return self._refs[ref]
        seen, queue, result = {ref}, [ref], True
        while queue and result:
            self.budget.spend()
            current = queue.pop()
            a, b = self.first.resolve(current), self.second.resolve(current)
            text = None if a is None else self.first.text(a.node)
            if b is None or text is None or text != self.second.text(b.node) or "$dynamicRef" in text:
                result = False
                break
            for found in self._refs_in(text):
                if found not in seen:
                    seen.add(found)
                    queue.append(found)
        self._refs[ref] = result
        return result
