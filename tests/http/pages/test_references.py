"""References in meanings ("see the check's text") become links to what they name, and only there."""

from __future__ import annotations

import re

from app.checking.errors import API_REASONS
from app.guard.url import REFUSAL_REASONS
from app.http.pages.explain import explanations
from app.http.pages.references import linked, references
from app.suite.catalogue import catalogue


def shown_texts() -> list[str]:
    texts = [*catalogue().document["unverified_reasons"].values(), *REFUSAL_REASONS.values()]
    texts += [meaning for _status, meaning in API_REASONS.values()]
    for section in explanations().values():
        texts += section.values()
    return texts


def test_every_reference_a_page_can_show_leads_somewhere() -> None:
    said = {m for text in shown_texts() for m in re.findall(r"\bsee [^.;,)]+", text)}
    assert said and said <= set(references()), said - set(references())


def test_a_reference_is_a_link_to_the_checks_text_and_the_rest_stays_escaped_text() -> None:
    html = linked("<b>no</b> The check does not apply to this server (see the check's text).", "tls")
    assert html == (
        "&lt;b&gt;no&lt;/b&gt; The check does not apply to this server "
        '(see <a class="see" href="/checks#check-tls">the check&#39;s text</a>).'
    )


def test_a_check_id_in_a_link_is_percent_encoded() -> None:
    assert 'href="/checks#check-%22%3E%3Cscript%3E"' in linked("(see the check's text)", '"><script>')


def test_a_reference_to_a_part_of_the_page_stays_text_where_the_page_lacks_it() -> None:
    text = "The probe chose not to make the call this check needs (see evidence)."
    assert 'href="#evidence-x"' in linked(text, "x")
    assert linked(text, "x", fragments=False) == text
