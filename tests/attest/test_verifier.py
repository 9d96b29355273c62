"""The Python verifier's regressions: each test is named after the input that once went wrong.

- integers beyond 2**53 that the signer's canonical form writes (``docs/fingerprints.md``,
  "Integers") were refused by the verifier's own form: such a statement failed
  ``payload_not_canonical`` and such a check answer ``result_mismatch``;
- an ``observed_at`` that matches the schema's pattern but is no real time, and an integer too
  long for Python's ``int``, raised ``ValueError`` (a traceback) instead of a reason;
- the schema's patterns were read with Python's ``$``, which also matches before a final
  newline: a digest or a time ending in ``"\\n"`` passed;
- ``mcp-sonde verify`` read the key document before the input, so an unreadable input beside an
  unreadable key document was ``keys_unavailable``, against the order of
  :data:`app.attest.verify.reasons.FAILURES`;
- key document times were read by :meth:`datetime.fromisoformat`, which takes ISO 8601 forms
  that are not RFC 3339;
- how deep a JSON text could nest was the interpreter's recursion limit, which a library may
  raise: the bound is the verifier's own now (512 levels, as the standalone verifier's).
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from app.attest.verify import jcs
from app.attest.verify.keydoc import ListedKey, parse_keys
from app.attest.verify.reasons import VerificationFailed
from app.attest.verify.verifier import read_input, verify
from app.canonical import canonical_bytes
from tests.attest import forge
from tests.attest.verifiers import python_cli


def _reason(raw: bytes, keys: bytes) -> str | None:
    try:
        verify(raw, parse_keys(keys))
    except VerificationFailed as exc:
        return exc.reason
    return None


def _signed(statement: dict[str, Any]) -> tuple[bytes, bytes]:
    key = forge.make_key()
    return forge.dumps(forge.envelope(statement, key)), forge.keys_document(key)


def _with_predicate(**members: object) -> dict[str, Any]:
    statement = forge.statement()
    statement["predicate"].update(members)
    return statement


# --- Integers beyond 2**53 -------------------------------------------------------------------


@pytest.mark.parametrize(
    "number", [2**53, -(2**53), 10**20, -(10**20), 295147905179352830000, 999999999999999900000, 1152921504606847000]
)
def test_an_integer_the_signer_writes_is_canonical_to_the_verifier(number: int) -> None:
    written = canonical_bytes([number])
    assert jcs.serialise(json.loads(written)) == written


@pytest.mark.parametrize("number", [2**53 + 1, 2**60, 2**64 - 1, 2**68, 10**21, 10**400])
def test_an_integer_the_signer_refuses_has_no_canonical_form_to_the_verifier(number: int) -> None:
    with pytest.raises(jcs.NotCanonical):
        jcs.serialise(number)


def test_a_statement_holding_10_to_the_20_verifies() -> None:
    statement = forge.statement()
    statement["predicate"]["tools"]["count"] = 10**20
    assert _reason(*_signed(statement)) is None


def test_a_check_answer_holding_10_to_the_20_matches_its_result_sha256() -> None:
    result = {"status": "ok", "capabilities": {"experimental": {"limit": 10**20}}}
    statement = _with_predicate(result_sha256=hashlib.sha256(canonical_bytes(result)).hexdigest())
    key = forge.make_key()
    envelope = forge.envelope(statement, key)
    answer = forge.dumps({**result, "attestation": envelope, "attestation_id": forge.id_of(envelope)})
    verified = verify(answer, parse_keys(forge.keys_document(key)))
    assert verified.result_checked


# --- Inputs that raised instead of failing with a reason -------------------------------------


@pytest.mark.parametrize(
    "observed_at", ["2026-02-30T16:17:27.247Z", "2026-12-01T24:00:00.000Z", "2026-12-01T16:17:60.000Z"]
)
def test_an_observed_at_that_is_no_real_time_is_predicate_invalid(observed_at: str) -> None:
    assert _reason(*_signed(_with_predicate(observed_at=observed_at))) == "predicate_invalid"


def test_an_integer_of_5000_digits_is_a_reason_not_a_traceback() -> None:
    raw, keys = _signed(forge.statement())
    huge = b"1" + b"0" * 4999
    assert _reason(raw[:-1] + b', "n": ' + huge + b"}", keys) == "envelope_unreadable"
    assert _reason(raw, keys[:-1] + b', "n": ' + huge + b"}") == "keys_unavailable"
    payload = canonical_bytes(forge.statement()).replace(b'"count":3', b'"count":' + huge)
    assert _reason(*_signed_bytes(payload)) == "payload_not_canonical"
    with pytest.raises(jcs.NotCanonical):
        jcs.parse(b"[" + huge + b"]")


def _signed_bytes(payload: bytes) -> tuple[bytes, bytes]:
    key = forge.make_key()
    return forge.dumps(forge.envelope(payload, key)), forge.keys_document(key)


def test_a_duplicate_key_is_still_a_duplicate_key_to_the_parser() -> None:
    with pytest.raises(jcs.DuplicateKey):
        jcs.parse(b'{"a":1,"a":2}')


# --- Patterns and the final newline ----------------------------------------------------------


def test_a_subject_digest_with_a_final_newline_is_statement_invalid() -> None:
    statement = forge.statement()
    statement["subject"][0]["digest"]["sha256"] += "\n"
    assert _reason(*_signed(statement)) == "statement_invalid"


@pytest.mark.parametrize("name", ["observed_at", "result_sha256", "url_query_sha256", "reason"])
def test_a_predicate_field_with_a_final_newline_is_predicate_invalid(name: str) -> None:
    statement = forge.statement()
    statement["predicate"][name] += "\n"
    assert _reason(*_signed(statement)) == "predicate_invalid"


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return found + [pattern for value in node.values() for pattern in _patterns(value)]
    if isinstance(node, list):
        return [pattern for value in node for pattern in _patterns(value)]
    return []


def test_every_schema_pattern_anchors_with_a_final_dollar_only() -> None:
    """What the ECMA-262 reading of ``$`` (verifier._ecma) relies on."""
    patterns = []
    for name in ("statement-v1.schema.json", "check-result-v1.schema.json"):
        schema = json.loads(resources.files("app.attest").joinpath("schemas", name).read_text("utf-8"))
        patterns += _patterns(schema)
    assert len(patterns) > 10
    for pattern in patterns:
        assert "$" not in pattern[:-1], pattern
        re.compile(pattern)


# --- The order: the input before the key document --------------------------------------------


def test_an_unreadable_input_beside_an_unreadable_key_document_is_envelope_unreadable(tmp_path: Path) -> None:
    outcome = python_cli(tmp_path, b"{not json", b"{not json either")
    assert (outcome.reason, outcome.code) == ("envelope_unreadable", 30)


def test_a_wrong_payload_type_beside_an_unreadable_key_document_is_payload_type_unexpected(tmp_path: Path) -> None:
    envelope = json.loads(_signed(forge.statement())[0])
    envelope["payloadType"] = "application/json"
    outcome = python_cli(tmp_path, json.dumps(envelope).encode(), b"")
    assert (outcome.reason, outcome.code) == ("payload_type_unexpected", 31)


def test_the_key_document_is_read_once_and_only_for_an_envelope_of_ours() -> None:
    raw, keys = _signed(forge.statement())
    reads: list[int] = []

    def load() -> dict[str, ListedKey]:
        reads.append(1)
        return parse_keys(keys)

    for bad in (b"[]", b'{"payloadType": "text/plain", "payload": "", "signatures": [{}]}'):
        with pytest.raises(VerificationFailed):
            verify(bad, load)
    assert reads == []
    assert verify(raw, load).keys and reads == [1]


# --- Key document times ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-01T00:00Z",  # no seconds
        "20260101T000000Z",  # ISO 8601 basic format
        "2026-W01-1T00:00:00Z",  # a week date
        "2026-01-01 00:00:00Z",  # a space for T
        "2026-01-01T00:00:00,5Z",  # a decimal comma
        "2026-01-01T00:00:00+0100",  # an offset without its colon
        "2026-01-01T00:00:00+01:00:30",  # an offset with seconds
        "2026-01-01T00:00:00+24:00",  # an offset of a day
        "2026-01-01t00:00:00z",  # lower case
        "2026-01-01T00:00:00",  # no offset
        "2026-01-01",  # no time
        "2026-02-29T00:00:00Z",  # not a leap year
        "2026-01-01T00:00:60Z",  # a leap second
        "\uff12026-01-01T00:00:00Z",  # a full-width digit
    ],
)
def test_a_key_time_that_is_not_rfc_3339_is_keys_unavailable(text: str) -> None:
    key = forge.make_key()
    document = json.loads(forge.keys_document(key))
    document["keys"][0]["valid_from"] = text
    with pytest.raises(VerificationFailed) as caught:
        parse_keys(json.dumps(document).encode())
    assert caught.value.reason == "keys_unavailable"


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-01-01T00:00:00Z", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01T01:00:00+01:00", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2025-12-31T19:00:00.5-05:00", datetime(2026, 1, 1, 0, 0, 0, 500000, tzinfo=UTC)),
        ("2026-01-01T00:00:00.1234567Z", datetime(2026, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)),
        ("2024-02-29T00:00:00-00:00", datetime(2024, 2, 29, tzinfo=UTC)),
    ],
)
def test_a_key_time_in_rfc_3339_is_read(text: str, moment: datetime) -> None:
    key = forge.make_key()
    document = json.loads(forge.keys_document(key))
    document["keys"][0]["valid_from"] = text
    assert parse_keys(json.dumps(document).encode())[key.keyid].valid_from == moment


# --- Nesting: one bound, whatever the recursion limit ----------------------------------------


def test_json_nested_deeper_than_512_levels_is_refused_whatever_the_recursion_limit() -> None:
    """``json.loads`` stops at the interpreter's recursion limit, which a library may raise (the
    verifier then read 5,000 levels, or crashed deeper); the bound is the verifier's own."""
    raw, keys = _signed(forge.statement())
    deep = b"[" * 5000 + b"]" * 5000
    at_the_bound = b"[" * 511 + b"]" * 511  # inside the envelope's object: 512 levels
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        assert _reason(raw[:-1] + b', "n": ' + deep + b"}", keys) == "envelope_unreadable"
        assert _reason(raw, keys[:-1] + b', "n": ' + deep + b"}") == "keys_unavailable"
        with pytest.raises(jcs.NotCanonical):
            jcs.parse(deep)
        # (an envelope has no other members: at the bound it is refused for that, past it for depth)
        with pytest.raises(VerificationFailed, match="neither a DSSE envelope"):
            read_input(raw[:-1] + b', "n": ' + at_the_bound + b"}")
        with pytest.raises(VerificationFailed, match="nested deeper"):
            read_input(raw[:-1] + b', "n": [' + at_the_bound + b"]}")
    finally:
        sys.setrecursionlimit(limit)


# --- Answers that passed unchecked -------------------------------------------------------------


def _answer(result: Mapping[str, object], statement: dict[str, Any], key: forge.Key) -> dict[str, object]:
    envelope = forge.envelope(statement, key)
    return {**result, "attestation": envelope, "attestation_id": forge.id_of(envelope)}


def test_regression_an_answer_beside_a_top_level_envelope_is_refused() -> None:
    """A tampered answer with the envelope spread beside it read as a bare envelope: exit 0."""
    key = forge.make_key()
    envelope = forge.envelope(forge.statement(), key)
    reshaped = {"status": "forged", **envelope}
    assert _reason(forge.dumps(reshaped), forge.keys_document(key)) == "envelope_unreadable"
    record = {"id": forge.id_of(envelope), "envelope": envelope, "status": "forged"}
    assert _reason(forge.dumps(record), forge.keys_document(key)) == "envelope_unreadable"


def test_regression_a_member_given_twice_in_the_answer_is_refused() -> None:
    key = forge.make_key()
    result = {"url": "https://a.example/mcp", "status": "ok"}
    statement = _with_predicate(result_sha256=hashlib.sha256(canonical_bytes(result)).hexdigest())
    honest = forge.dumps(_answer(result, statement, key))
    assert _reason(honest, forge.keys_document(key)) is None
    doubled = b'{"url": "https://b.example/mcp", ' + honest[1:]
    assert _reason(doubled, forge.keys_document(key)) == "envelope_unreadable"


def test_regression_a_statement_without_a_result_digest_vouches_for_no_answer() -> None:
    key = forge.make_key()
    answer = _answer({"url": "https://a.example/mcp"}, _with_predicate(result_sha256=None), key)
    assert _reason(forge.dumps(answer), forge.keys_document(key)) == "result_mismatch"
    answer["attestation_id"] = "0" * 64
    assert _reason(forge.dumps(answer), forge.keys_document(key)) == "id_mismatch"


def test_regression_long_runs_of_combining_marks_have_no_canonical_form_and_cost_little() -> None:
    """240 kB of alternating marks took 16 s to normalise; refused before normalising now."""
    import time

    bomb = "a" + "\u0301\u0316" * 60000
    started = time.monotonic()
    with pytest.raises(jcs.NotCanonical, match="combining marks"):
        jcs.serialise({"s": bomb}, normalise=True)
    with pytest.raises(jcs.NotCanonical, match="combining marks"):
        jcs.serialise({bomb: 1})
    assert time.monotonic() - started < 5.0  # (was 16 s a string: the bound only tells linear from quadratic)
    assert jcs.serialise(["a" + "\u0316" * 30]) == '["a{}"]'.format("\u0316" * 30).encode()
