"""CommonMark text of our own documents (``openapi.yaml``'s descriptions) as HTML.

Policy: markdown-it-py's ``js-default`` preset (CommonMark with tables and strikethrough) with
raw HTML off, so an angle bracket in a description is text, and its link check on, so only
``http``, ``https``, ``mailto`` and relative links become links (never ``javascript:``).
This is for our own documents only: server text is never rendered as Markdown (it is text,
escaped by the templates).
"""

from __future__ import annotations

import functools

from markdown_it import MarkdownIt
from markupsafe import Markup


@functools.cache
def _parser() -> MarkdownIt:
    return MarkdownIt("js-default", {"html": False, "linkify": False, "typographer": False})


def markdown(text: object) -> Markup:
    """``text`` (CommonMark) as HTML; anything but a non-empty string is nothing."""
    if not isinstance(text, str) or not text.strip():
        return Markup("")
    return Markup(_parser().render(text))
