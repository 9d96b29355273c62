"""The one place where badge markup is written: an element builder that escapes everything.

Every attribute value and every text node passes through :func:`escape`; nothing else in the
package builds markup, and no untrusted text is ever concatenated into SVG. Numbers are written
as JavaScript writes them, and the output is compacted as shields' ``badge-maker`` 6.0.0 does
(``lib/xml.js``: children joined by a space, then whitespace after ``>`` and before ``<``
removed), so the SVG can equal its output byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union

_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})
_AFTER_TAG = re.compile(r">\s+")
_BEFORE_TAG = re.compile(r"<\s+")

Value = str | int | float


#: Characters XML 1.0 does not allow in a document (section 2.2), lone surrogates included.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def escape(text: str) -> str:
    """XML-escape ``&``, ``<``, ``>``, ``"`` and ``'``; characters XML forbids become U+FFFD."""
    return _NOT_XML.sub("\ufffd", text).translate(_ESCAPES)


def js_number(value: int | float) -> str:
    """A number as JavaScript's ``String(n)`` writes it (``140``, ``7.5``, ``0.5``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _attribute(value: Value) -> str:
    return js_number(value) if isinstance(value, int | float) else escape(value)


def compact(markup: str) -> str:
    """Remove whitespace after ``>`` and before ``<`` (badge-maker's ``stripXmlWhitespace``)."""
    return _BEFORE_TAG.sub("<", _AFTER_TAG.sub(">", markup)).strip()


Node = Union["Element", "Fragment", str]


@dataclass
class Element:
    """An XML element; ``children`` are elements, fragments or text (escaped when rendered)."""

    name: str
    attrs: dict[str, Value] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)

    def render(self) -> str:
        """The element as compact markup."""
        attributes = "".join(f' {key}="{_attribute(value)}"' for key, value in self.attrs.items())
        if self.children:
            inner = " ".join(_render(child) for child in self.children)
            return compact(f"<{self.name}{attributes}>{inner}</{self.name}>")
        return compact(f"<{self.name}{attributes}/>")


@dataclass
class Fragment:
    """Several nodes rendered one after another, without a wrapper."""

    children: list[Node] = field(default_factory=list)

    def render(self) -> str:
        """The nodes as compact markup."""
        return compact(" ".join(_render(child) for child in self.children))


def _render(node: Node) -> str:
    return escape(node) if isinstance(node, str) else node.render()
