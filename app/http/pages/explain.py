"""Reason keys in plain words, for the web pages.

Policy: a reason key is explained by the first of: the check's own reasons (``checks`` of
``explanations.yaml``, when the key is a check's), the probe's reasons (``probe``), the check
catalogue's reasons for an ``unverified`` state, the target guard's refusals
(:data:`app.guard.url.REFUSAL_REASONS`) and the API's error reasons
(:data:`app.checking.errors.API_REASONS`), whose texts are already written for people. An error
answer of ours (:func:`explain_refusal`) looks at the last two first. A key none of them knows
is shown as it is, with no invented meaning.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Final

import yaml

from app.checking.errors import API_REASONS
from app.guard.url import REFUSAL_REASONS
from app.suite.catalogue import catalogue

SECTIONS: Final = ("probe", "checks")


@functools.cache
def explanations() -> dict[str, dict[str, str]]:
    """``{"probe": {reason: text}, "checks": {reason: text}}``, loaded once from the package data."""
    text = resources.files("app.http.pages").joinpath("explanations.yaml").read_text("utf-8")
    document = yaml.safe_load(text)
    return {section: {str(key): str(value) for key, value in document[section].items()} for section in SECTIONS}


def explain(reason: str | None, check: str | None = None) -> str:
    """``reason`` in plain words (of the check ``check``, when given); empty for ``None``."""
    if reason is None:
        return ""
    texts = explanations()
    if check is not None and reason in texts["checks"]:
        return texts["checks"][reason]
    if reason in texts["probe"]:
        return texts["probe"][reason]
    unverified: dict[str, str] = catalogue().document["unverified_reasons"]
    if reason in unverified:
        return unverified[reason]
    if reason in texts["checks"]:
        return texts["checks"][reason]
    if reason in REFUSAL_REASONS:
        return REFUSAL_REASONS[reason]
    if reason in API_REASONS:
        return API_REASONS[reason][1]
    return reason


def explain_refusal(reason: str) -> str:
    """An error answer of ours in plain words: the target guard's refusals, then the API's
    reasons (``rate_limited`` of ours is not the probe's ``rate_limited`` of the server)."""
    if reason in REFUSAL_REASONS:
        return REFUSAL_REASONS[reason]
    if reason in API_REASONS:
        return API_REASONS[reason][1]
    return explain(reason)


def check_title(check_id: str) -> str:
    """A check's title from the catalogue (its id when the catalogue has no such check)."""
    spec = catalogue().checks.get(check_id)
    return spec.title if spec is not None else check_id
