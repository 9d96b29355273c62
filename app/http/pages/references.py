"""References in a meaning's words made links: "see the check's text" leads to that text.

Policy: a meaning is text (escaped like all text); each phrase of ``references.yaml`` found in it
is replaced by the same words with a link to where they point, built here and nowhere else.
The link's target is ours (a path of this site or a fragment of this page), never a value from
a server; the check id in it is percent-encoded.
"""

from __future__ import annotations

import functools
from importlib import resources
from urllib.parse import quote

import yaml
from markupsafe import Markup, escape


@functools.cache
def references() -> dict[str, tuple[str, str]]:
    """``{phrase: (words, href template)}``, loaded once from the package data."""
    text = resources.files("app.http.pages").joinpath("references.yaml").read_text("utf-8")
    document = yaml.safe_load(text)
    return {str(phrase): (str(entry["words"]), str(entry["href"])) for phrase, entry in document.items()}


def linked(text: str, check: str = "", fragments: bool = True) -> Markup:
    """``text`` escaped, each known reference in it a link (for the check ``check``); with
    ``fragments`` false, a reference to a part of the same page (a result's evidence) stays text,
    for a page that does not hold that part."""
    out = escape(text)
    for phrase, (words, href) in references().items():
        if phrase in text and (fragments or not href.startswith("#")):
            target = href.format(check=quote(check, safe=""))
            link = Markup('see <a class="see" href="{}">{}</a>').format(target, words)
            out = Markup(out.replace(escape(phrase), link))
    return out
