"""Every reason key a page may show has a plain-language explanation."""

from __future__ import annotations

from app.checking.errors import API_REASONS
from app.guard.url import REFUSAL_REASONS
from app.http.pages.explain import explain, explain_refusal, explanations
from app.probe.reasons import REASONS
from app.suite.catalogue import PROBE_REASONS, catalogue


def check_reasons() -> set[str]:
    keys: set[str] = set()
    for spec in catalogue().checks.values():
        keys |= spec.failure_reasons | spec.risk_reasons
    return keys - {PROBE_REASONS}


def test_every_probe_reason_has_an_explanation_and_no_other_key_is_explained() -> None:
    assert set(explanations()["probe"]) == set(REASONS)


def test_every_check_reason_has_an_explanation_and_no_other_key_is_explained() -> None:
    assert set(explanations()["checks"]) == check_reasons() - set(REASONS)


def test_explanations_are_sentences_not_the_keys_again() -> None:
    for section in explanations().values():
        for key, text in section.items():
            assert text != key and text[0].isupper() and text.endswith("."), key


def test_every_unverified_guard_and_api_reason_is_explained() -> None:
    unverified = catalogue().document["unverified_reasons"]
    for key in unverified:
        assert explain(key) == unverified[key]
    for key in REFUSAL_REASONS:
        assert explain_refusal(key) == REFUSAL_REASONS[key]
    for key, (_status, meaning) in API_REASONS.items():
        assert explain_refusal(key) == meaning


def test_a_check_reason_is_read_in_its_check_and_a_shared_key_keeps_each_meaning() -> None:
    assert explain("timeout", "error_taxonomy") == explanations()["checks"]["timeout"]
    # rate_limited is the server's 429 in a result, ours as an error answer
    assert explain("rate_limited") == explanations()["probe"]["rate_limited"]
    assert explain_refusal("rate_limited") == API_REASONS["rate_limited"][1]
    assert explain("no_such_key_anywhere") == "no_such_key_anywhere"
    assert explain(None) == ""
