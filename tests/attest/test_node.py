"""The standalone verifier (``tools/verify-attestation.mjs``) against ``mcp-sonde verify``, and our
canonical form and signatures against Node's crypto and the ``canonicalize`` npm package.

- **One table of tampers** runs through both verifiers, which must give the same reason and the
  same exit code for each (:data:`TAMPERS`); honest inputs must verify in both with byte-identical
  reports (:data:`HONEST`), and a real answer of the service must too. Both read an endless input
  (``/dev/zero`` as the input, on standard input, as the key document) up to its bound only, and
  fail at once in little memory (:data:`ENDLESS`).
- **Cross-verification** (``tests/attest/node/cross.mjs``): an envelope the service signed is
  checked with ``crypto.verify`` and ``canonicalize`` alone; an envelope Node signs over
  ``canonicalize``'s bytes, with a key made in Node, is accepted by our Python verifier.
- **The canonical form, differentially** (``tests/attest/node/canonicalize-lines.mjs``): 5,000
  generated JSON documents in NFC give the same bytes from ``canonicalize``, from the signer's
  :func:`app.canonical.canonical_bytes` and :func:`~app.canonical.canonical_text`
  (of the value and of its text) and from the verifier's
  :func:`app.attest.verify.jcs.serialise`; so do the RFC 8785 reference vectors, except the two
  where our NFC step differs on purpose (:data:`NFC_DIFFERS`, ``docs/fingerprints.md``).

Node is needed (the tests skip without it, and fail under ``CI=true``); the ``canonicalize`` tests
also need ``npm ci --prefix tests/npm``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import subprocess
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.attest import dsse
from app.attest.keys import key_id, load_public, private_pem
from app.attest.statement import PREDICATE_TYPE
from app.attest.verify import jcs
from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import FAILURES
from app.attest.verify.verifier import verify
from app.canonical import canonical_bytes, canonical_text
from app.textruns import has_long_mark_run
from tests.attest import forge
from tests.attest.test_keys import unknown_algorithm
from tests.attest.verifiers import ID_MISMATCH, REASONS, STANDALONE, measured, node, node_cli, python_cli
from tests.conftest import Service
from tests.servers.node import MODULES, require
from tests.test_canonical import NFC_DIFFERS, VECTOR_NAMES, VECTORS

NODE_SCRIPTS = Path(__file__).resolve().parent / "node"
CANONICALIZE = MODULES / "canonicalize" / "package.json"
FREE = {"X-Free-Pool": "1"}

Case = Callable[[], tuple[bytes, bytes]]  # () -> (the verifier's input, the key document)


# --- Inputs: honest ones and tampers ---------------------------------------------------------


def _signed(statement: dict[str, Any] | bytes, key: forge.Key | None = None, *others: forge.Key) -> tuple[bytes, bytes]:
    """A bare envelope of ``statement`` (a statement is put in canonical form first) signed by
    ``key`` (a fresh one by default), and the key document listing it and ``others``."""
    key = key or forge.make_key()
    return forge.dumps(forge.envelope(statement, key)), forge.keys_document(key, *others)


def _honest() -> tuple[bytes, bytes]:
    return _signed(forge.statement())


def _predicate(change: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    """The sample statement with its predicate changed by ``change``."""
    statement = forge.statement()
    change(statement["predicate"])
    return statement


def _statement(**members: object) -> Case:
    return lambda: _signed({**forge.statement(), **members})


def _predicated(change: Callable[[dict[str, Any]], object]) -> Case:
    return lambda: _signed(_predicate(change))


def _answer_of(
    result: dict[str, Any],
    result_sha256: str | None,
    change: Callable[[dict[str, Any]], object] = lambda answer: None,
    statement: dict[str, Any] | bytes | None = None,
    key: forge.Key | None = None,
    text: Callable[[dict[str, Any]], bytes] = forge.dumps,
) -> tuple[bytes, bytes]:
    """A check answer holding ``result``, its envelope (of ``statement``, default the sample's with
    ``result_sha256``, signed by ``key``, default a fresh one) and its ``attestation_id``, then
    changed by ``change``, as ``text`` writes it."""
    if statement is None:
        statement = forge.statement()
        statement["predicate"]["result_sha256"] = result_sha256
    key = key or forge.make_key()
    envelope = forge.envelope(statement, key)
    answer = {**result, "attestation_id": forge.id_of(envelope), "attestation": envelope}
    change(answer)
    return text(answer), forge.keys_document(key)


def _answer(result: dict[str, Any], digest_of: dict[str, Any] | None = None) -> tuple[bytes, bytes]:
    """A check answer holding ``result`` and its envelope, whose ``result_sha256`` is of
    ``digest_of`` (default: ``result`` itself, in our canonical form)."""
    return _answer_of(result, hashlib.sha256(canonical_bytes(digest_of or result)).hexdigest())


def _answer_changed(change: Callable[[dict[str, Any]], object]) -> Case:
    """An honest check answer of :data:`RESULT` changed by ``change``."""
    return lambda: _answer_of(RESULT, hashlib.sha256(canonical_bytes(RESULT)).hexdigest(), change)


def _answer_text(change: Callable[[bytes], bytes]) -> Case:
    """The text of an honest check answer of :data:`RESULT` changed by ``change``."""

    def build() -> tuple[bytes, bytes]:
        raw, keys = _answer(RESULT)
        return change(raw), keys

    return build


def _answer_without_digest() -> tuple[bytes, bytes]:
    """A check answer whose statement names no ``result_sha256`` (a result with no canonical form)."""
    return _answer_of(RESULT, None)


def _unnormalised_answer(result: dict[str, Any]) -> Case:
    """A check answer of ``result`` whose ``result_sha256`` is of its plain NFC + RFC 8785 bytes: what a
    verifier without the bound on combining marks would take for its digest."""
    return lambda: _answer_of(result, hashlib.sha256(rfc8785.dumps(_nfc(result))).hexdigest())


#: A check result within the integers RFC 8785's package writes (RESULT holds 2**53).
_SMALL_RESULT: dict[str, Any] = {"url": "http://127.0.0.1:34887/stateless-json/mcp", "status": "ok", "n": 3}


def _record(change: Callable[[dict[str, Any]], object] = lambda record: None) -> Case:
    """A stored record (``GET /v1/attestations/{id}``) of an honest envelope, changed by ``change``."""

    def build() -> tuple[bytes, bytes]:
        key = forge.make_key()
        envelope = forge.envelope(forge.statement(), key)
        record = {"id": forge.id_of(envelope), "envelope": envelope}
        change(record)
        return forge.dumps(record), forge.keys_document(key)

    return build


def _record_id_twice() -> tuple[bytes, bytes]:
    """A stored record holding ``id`` twice: another first, its own last (where json.loads looks)."""
    raw, keys = _record()()
    assert raw.startswith(b'{"id": ')
    return b'{"id": "' + b"0" * 64 + b'", ' + raw[1:], keys


#: 31 combining marks in a row after a base character that composes with none of them: text in
#: NFC, but over the bound of 30 marks; and 30 of them, within it.
MARKS_31 = "x" + "\u0301" * 31
MARKS_30 = "x" + "\u0301" * 30


def _long_run_answer() -> tuple[bytes, bytes]:
    """A check answer of 8 MB, nearly all one run of 4,000,000 combining marks (in UTF-8), whose
    ``result_sha256`` is of its RFC 8785 bytes (the text is in NFC): a search for the run that
    backtracks over it overflows its stack."""
    result = {**_SMALL_RESULT, "title": "x" + "\u0301" * 4_000_000}
    digest = hashlib.sha256(rfc8785.dumps(result)).hexdigest()
    raw, keys = _answer_of(result, digest, text=lambda answer: json.dumps(answer, ensure_ascii=False).encode())
    assert len(raw) <= 8 * 1024 * 1024
    return raw, keys


def _long_run_payload() -> tuple[bytes, bytes]:
    """A payload of 6 MB, nearly all one run of 3,000,000 combining marks, otherwise canonical."""
    raw, keys = _signed(rfc8785.dumps(_predicate(lambda p: p["server"].update(name="x" + "\u0301" * 3_000_000))))
    assert len(raw) <= 8 * 1024 * 1024
    return raw, keys


#: A check result as a service answer carries it, with text that is not in NFC (the digest is of
#: its NFC form), astral characters, a control character and an integer at 2**53.
RESULT: dict[str, Any] = {
    "url": "http://127.0.0.1:34887/stateless-json/mcp",
    "status": "ok",
    "server": {"name": "cafe\u0301 \U0001f600\u0007", "version": "1.2.3"},
    "capabilities": {"tools": {"listChanged": True}, "limit": 2**53, "ratio": 0.1},
    "tools": {"count": 3, "truncated": False},
}


def _payload(old: bytes, new: bytes) -> Case:
    """The canonical payload of the sample statement with ``old`` replaced by ``new``, signed."""

    def build() -> tuple[bytes, bytes]:
        payload = canonical_bytes(forge.statement())
        assert old in payload, old
        return _signed(payload.replace(old, new, 1))

    return build


def _envelope(change: Callable[[dict[str, Any]], object]) -> Case:
    """An honest envelope changed by ``change``."""

    def build() -> tuple[bytes, bytes]:
        key = forge.make_key()
        envelope = forge.envelope(forge.statement(), key)
        change(envelope)
        return forge.dumps(envelope), forge.keys_document(key)

    return build


def _in_signature(member: bytes) -> Callable[[bytes], bytes]:
    """The envelope's text with ``member`` added to its (last) signature, an object of no fixed
    members: the envelope itself may have no other member than its three."""

    def change(raw: bytes) -> bytes:
        assert raw.endswith(b'"}]}')
        return raw[:-3] + b", " + member + b"}]}"

    return change


def _keys_text(change: Callable[[bytes], bytes]) -> Case:
    """An honest envelope with the text of its key document changed by ``change``."""

    def build() -> tuple[bytes, bytes]:
        raw, keys = _honest()
        return raw, change(keys)

    return build


def _replaced(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def change(text: bytes) -> bytes:
        assert text.count(old) == 1, old
        return text.replace(old, new)

    return change


def _keys(change: Callable[[dict[str, Any]], object]) -> Case:
    """An honest envelope with its key document changed by ``change``."""

    def build() -> tuple[bytes, bytes]:
        raw, keys = _honest()
        document = json.loads(keys)
        change(document)
        return raw, json.dumps(document).encode()

    return build


def _first_key(**members: object) -> Case:
    return _keys(lambda document: document["keys"][0].update(members))


def _input(make: Callable[[bytes], bytes], keys: bytes | None = None) -> Case:
    """The honest input made into ``make(input)``, beside its key document or ``keys``."""

    def build() -> tuple[bytes, bytes]:
        raw, listed = _honest()
        return make(raw), listed if keys is None else keys

    return build


def _payload_changed() -> tuple[bytes, bytes]:
    key = forge.make_key()
    envelope = forge.envelope(forge.statement(), key)
    payload = forge.payload_of(envelope).replace(b'"name":"stateless-json"', b'"name":"stateless-jsom"')
    envelope["payload"] = base64.b64encode(payload).decode()
    return forge.dumps(envelope), forge.keys_document(key)


def _keyid_swapped() -> tuple[bytes, bytes]:
    signer, listed = forge.make_key(), forge.make_key()
    envelope = forge.envelope(forge.statement(), signer, keyid=listed.keyid)
    return forge.dumps(envelope), forge.keys_document(signer, listed)


def _keyid_unknown() -> tuple[bytes, bytes]:
    key = forge.make_key()
    return forge.dumps(forge.envelope(forge.statement(), key, keyid="0123456789abcdef")), forge.keys_document(key)


def _payload_type(kind: str) -> tuple[bytes, bytes]:
    key = forge.make_key()
    envelope = dsse.sign(canonical_bytes(forge.statement()), [(key.keyid, key.private)], payload_type=kind)
    return forge.dumps(dict(envelope)), forge.keys_document(key)


def _second_entry_bad(document: dict[str, Any]) -> None:
    other = json.loads(forge.keys_document(forge.make_key()))["keys"][0]
    other["keyid"] = "0" * 16  # not the SHA-256 prefix of its own public key
    document["keys"].append(other)


def _unknown_algorithm(document: dict[str, Any]) -> None:
    document["keys"][0]["public_key"] = unknown_algorithm(document["keys"][0]["public_key"])


def _private_pem(document: dict[str, Any]) -> None:
    document["keys"][0]["public_key"] = private_pem(forge.make_key().private).decode()


def _result_altered() -> tuple[bytes, bytes]:
    raw, keys = _answer(RESULT)
    answer = json.loads(raw)
    answer["tools"]["count"] = 4
    return json.dumps(answer).encode(), keys


def _integer_rounded() -> tuple[bytes, bytes]:
    """2**53 changed to 2**53 + 1 in the answer: the same double, so a verifier that read numbers
    as doubles (JSON.parse does) would take it for the signed result."""
    raw, keys = _answer(RESULT)
    assert raw.count(b"9007199254740992") == 1
    return raw.replace(b"9007199254740992", b"9007199254740993"), keys


def _nested(value: object, levels: int) -> object:
    for _ in range(levels):
        value = [value]
    return value


def _wrong_id(answer: dict[str, Any]) -> None:
    answer["attestation_id"] = "0" * 64


@dataclass(frozen=True)
class Tamper:
    """An input one step of the verification must refuse, with the reason it must give."""

    name: str
    reason: str
    build: Case


_STATEMENT = forge.statement()
_DIGEST_NEWLINE = [{"name": "x", "digest": {"sha256": "a" * 64 + "\n"}}]
_BEFORE = datetime(2026, 12, 2, tzinfo=UTC)
_UNTIL = datetime(2026, 12, 1, 16, 17, 27, tzinfo=UTC)  # observed_at is 16:17:27.247
_DUPLICATE_PAYLOAD = canonical_bytes(_STATEMENT).replace(b'{"_type":', b'{"_type":"x","_type":', 1)

TAMPERS = [
    Tamper("not JSON", "envelope_unreadable", _input(lambda raw: b"{not json")),
    Tamper("a UTF-8 BOM before the JSON", "envelope_unreadable", _input(lambda raw: b"\xef\xbb\xbf" + raw)),
    Tamper("neither an envelope nor an answer", "envelope_unreadable", _input(lambda raw: b'{"id": "x"}')),
    Tamper("no signatures", "envelope_unreadable", _envelope(lambda e: e.update(signatures=[]))),
    Tamper("a payload that is not base64", "envelope_unreadable", _envelope(lambda e: e.update(payload="e30=!"))),
    Tamper("a signature that is not an object", "envelope_unreadable", _envelope(lambda e: e["signatures"].append(1))),
    Tamper("an integer of 5,000 digits", "envelope_unreadable", _input(_in_signature(b'"n": 1' + b"0" * 4999))),
    Tamper(
        "JSON nested 513 levels deep (512 is the bound)",
        "envelope_unreadable",
        _input(_in_signature(b'"n": ' + b"[" * 510 + b"]" * 510)),  # in {[{ ... }]}
    ),
    Tamper(
        "an answer holding a member twice (json.loads keeps the last)",
        "envelope_unreadable",
        _answer_text(_replaced(b'{"url": ', b'{"url": "http://127.0.0.1:1/elsewhere/mcp", "url": ')),
    ),
    Tamper(
        "an envelope holding a member twice",
        "envelope_unreadable",
        _input(_replaced(b'{"payloadType": ', b'{"payloadType": "text/plain", "payloadType": ')),
    ),
    Tamper("a stored record holding its id twice", "envelope_unreadable", _record_id_twice),
    Tamper(
        "envelope members beside answer members",
        "envelope_unreadable",
        _answer_changed(lambda answer: answer.update(answer.pop("attestation"))),
    ),
    Tamper(
        "an attestation that is not an object",
        "envelope_unreadable",
        _answer_changed(lambda answer: answer.update(attestation=json.dumps(answer["attestation"]))),
    ),
    Tamper(
        "an attestation with a member beside the envelope's three",
        "envelope_unreadable",
        _answer_changed(lambda answer: answer["attestation"].update(attestation_id=answer["attestation_id"])),
    ),
    Tamper(
        "an answer without attestation_id",
        "envelope_unreadable",
        _answer_changed(lambda answer: answer.pop("attestation_id")),
    ),
    Tamper(
        "a stored record with an extra member",
        "envelope_unreadable",
        _record(lambda record: record.update(observed_at="2026-12-01T16:17:27.247Z")),
    ),
    Tamper(
        "a stored record whose envelope has an extra member",
        "envelope_unreadable",
        _record(lambda record: record["envelope"].update(id=record["id"])),
    ),
    Tamper("an envelope with a fourth member", "envelope_unreadable", _envelope(lambda e: e.update(extra=1))),
    Tamper(
        "a key document nested 513 levels deep",
        "keys_unavailable",
        _keys(lambda document: document.update(n=_nested([], 512))),
    ),
    Tamper(
        "an unreadable envelope beside an unreadable key document",
        "envelope_unreadable",
        _input(lambda raw: b"[]", b"{"),
    ),
    Tamper("a wrong payloadType", "payload_type_unexpected", lambda: _payload_type("application/json")),
    Tamper(
        "a wrong payloadType beside an unreadable key document",
        "payload_type_unexpected",
        lambda: (_payload_type("text/plain")[0], b"{"),
    ),
    Tamper("a key document that is not JSON", "keys_unavailable", _input(lambda raw: raw, b"{")),
    Tamper("a key document without keys", "keys_unavailable", _keys(lambda document: document.clear())),
    Tamper("a key document whose second entry has a wrong keyid", "keys_unavailable", _keys(_second_entry_bad)),
    Tamper("a private key for a public_key", "keys_unavailable", _keys(_private_pem)),
    Tamper(
        "valid_from without seconds (ISO 8601, not RFC 3339)",
        "keys_unavailable",
        _first_key(valid_from="2026-01-01T00:00Z"),
    ),
    Tamper("valid_from with a space for T", "keys_unavailable", _first_key(valid_from="2026-01-01 00:00:00Z")),
    Tamper("valid_from on 30 February", "keys_unavailable", _first_key(valid_from="2026-02-30T00:00:00Z")),
    Tamper("revoked that is not a boolean", "keys_unavailable", _first_key(revoked="no")),
    Tamper("a public key of an unknown algorithm", "keys_unavailable", _keys(_unknown_algorithm)),
    Tamper(
        "a key listed twice", "keys_unavailable", _keys(lambda document: document["keys"].append(document["keys"][0]))
    ),
    Tamper(
        "a key entry holding revoked twice (json.loads keeps the last)",
        "keys_unavailable",
        _keys_text(_replaced(b'"revoked": false', b'"revoked": true, "revoked": false')),
    ),
    Tamper(
        "a key document holding keys twice",
        "keys_unavailable",
        _keys_text(_replaced(b'{"keys": ', b'{"keys": [], "keys": ')),
    ),
    Tamper("an unknown key id", "key_unknown", _keyid_unknown),
    Tamper("an empty key document", "key_unknown", _keys(lambda document: document.update(keys=[]))),
    Tamper("a changed byte in the payload", "signature_invalid", _payload_changed),
    Tamper("signed by key A, naming listed key B", "signature_invalid", _keyid_swapped),
    Tamper(
        "a signature of 10 bytes",
        "signature_invalid",
        _envelope(lambda e: e["signatures"][0].update(sig="AAAAAAAAAAAAAA==")),
    ),
    Tamper("a revoked key", "key_revoked", lambda: _signed(forge.statement(), forge.make_key(revoked=True))),
    Tamper(
        "a revoked key and a wrong attestation_id",
        "key_revoked",
        lambda: _answer_of(RESULT, None, _wrong_id, key=forge.make_key(revoked=True)),
    ),
    Tamper(
        "an answer with the attestation_id of another payload",
        "id_mismatch",
        _answer_changed(lambda answer: answer.update(attestation_id=hashlib.sha256(b"{}").hexdigest())),
    ),
    Tamper(
        "an answer with its attestation_id in upper case",
        "id_mismatch",
        _answer_changed(lambda answer: answer.update(attestation_id=answer["attestation_id"].upper())),
    ),
    Tamper(
        "an answer whose attestation_id is not a string",
        "id_mismatch",
        _answer_changed(lambda answer: answer.update(attestation_id=None)),
    ),
    Tamper("a stored record with a wrong id", "id_mismatch", _record(lambda record: record.update(id="x"))),
    Tamper("a stored record whose id is null", "id_mismatch", _record(lambda record: record.update(id=None))),
    Tamper(
        "a wrong attestation_id beside a payload holding a key twice",
        "id_mismatch",
        lambda: _answer_of(RESULT, None, _wrong_id, _DUPLICATE_PAYLOAD),
    ),
    Tamper("a key held twice at the top", "payload_duplicate_key", _payload(b'{"_type":', b'{"_type":"x","_type":')),
    Tamper(
        "a key held twice, nested",
        "payload_duplicate_key",
        _payload(b'"name":"stateless-json"', b'"name":"x","name":"stateless-json"'),
    ),
    Tamper(
        "whitespace", "payload_not_canonical", lambda: _signed(json.dumps(forge.statement(), sort_keys=True).encode())
    ),
    Tamper(
        "unsorted keys",
        "payload_not_canonical",
        lambda: _signed(json.dumps(dict(reversed(_STATEMENT.items())), separators=(",", ":")).encode()),
    ),
    Tamper(
        "a string not in NFC",
        "payload_not_canonical",
        lambda: _signed(rfc8785.dumps(_predicate(lambda p: p["server"].update(name="cafe\u0301")))),
    ),
    Tamper("an escaped letter", "payload_not_canonical", _payload(b'"stateless-json"', b'"st\\u0061teless-json"')),
    Tamper(
        "a number not in ECMAScript form",
        "payload_not_canonical",
        _payload(b'"duration_ms":11.3', b'"duration_ms":11.30'),
    ),
    Tamper(
        "an integer beyond 2**53 not its double's form",
        "payload_not_canonical",
        _payload(b'"count":3', b'"count":9007199254740993'),
    ),
    Tamper("NaN", "payload_not_canonical", _payload(b'"duration_ms":11.3', b'"duration_ms":NaN')),
    Tamper(
        "a raw control character in a string of the payload",
        "payload_not_canonical",
        _payload(b'"stateless-json"', b'"stateless\x00json"'),
    ),
    Tamper(
        "a raw control character in a string of the input",
        "envelope_unreadable",
        _input(lambda raw: raw.replace(b'"payloadType"', b'"payload\x01Type"')),
    ),
    Tamper("a lone surrogate", "payload_not_canonical", _payload(b'"stateless-json"', b'"\\ud800"')),
    Tamper(
        "a payload string with 31 combining marks in a row (otherwise canonical)",
        "payload_not_canonical",
        lambda: _signed(rfc8785.dumps(_predicate(lambda p: p["server"].update(name=MARKS_31)))),
    ),
    Tamper(
        "a payload name with 31 combining marks in a row (otherwise canonical)",
        "payload_not_canonical",
        lambda: _signed(rfc8785.dumps({**forge.statement(), MARKS_31: 1})),
    ),
    Tamper("a payload string of 3,000,000 combining marks in a row", "payload_not_canonical", _long_run_payload),
    Tamper("a wrong predicateType", "statement_invalid", _statement(predicateType=PREDICATE_TYPE + "x")),
    Tamper("a wrong _type", "statement_invalid", _statement(_type="https://in-toto.io/Statement/v0.1")),
    Tamper("a key beside the statement's four", "statement_invalid", _statement(extra=1)),
    Tamper("two subjects", "statement_invalid", _statement(subject=_STATEMENT["subject"] * 2)),
    Tamper("a subject digest with a final newline", "statement_invalid", _statement(subject=_DIGEST_NEWLINE)),
    Tamper("a predicate with an extra key", "predicate_invalid", _predicated(lambda p: p.update(extra=1))),
    Tamper("a predicate without era", "predicate_invalid", _predicated(lambda p: p.pop("era"))),
    Tamper("an extra key in the coverage", "predicate_invalid", _predicated(lambda p: p["coverage"].update(extra=1))),
    Tamper(
        "credentialed that is not a boolean", "predicate_invalid", _predicated(lambda p: p.update(credentialed="no"))
    ),
    Tamper(
        "observed_at on 30 February",
        "predicate_invalid",
        _predicated(lambda p: p.update(observed_at="2026-02-30T16:17:27.247Z")),
    ),
    Tamper(
        "observed_at at 24:00",
        "predicate_invalid",
        _predicated(lambda p: p.update(observed_at="2026-12-01T24:00:00.000Z")),
    ),
    Tamper(
        "observed_at with a final newline",
        "predicate_invalid",
        _predicated(lambda p: p.update(observed_at="2026-12-01T16:17:27.247Z\n")),
    ),
    Tamper(
        "observed_at before valid_from",
        "key_not_valid_at_observed_at",
        lambda: _signed(_STATEMENT, forge.make_key(_BEFORE)),
    ),
    Tamper(
        "observed_at after valid_until",
        "key_not_valid_at_observed_at",
        lambda: _signed(_STATEMENT, forge.make_key(valid_until=_UNTIL)),
    ),
    Tamper("an altered result", "result_mismatch", _result_altered),
    Tamper("2**53 changed to 2**53 + 1 in the result", "result_mismatch", _integer_rounded),
    Tamper(
        "a result with no canonical form",
        "result_mismatch",
        lambda: _answer({**RESULT, "bad": "\ud800"}, digest_of=RESULT),
    ),
    Tamper(
        "the digest of another result",
        "result_mismatch",
        lambda: _answer(RESULT, digest_of={**RESULT, "status": "auth"}),
    ),
    Tamper("an answer whose statement has result_sha256 null", "result_mismatch", _answer_without_digest),
    Tamper(
        "an answer string with 31 combining marks in a row",
        "result_mismatch",
        _unnormalised_answer({**_SMALL_RESULT, "server": {"name": "x", "title": MARKS_31}}),
    ),
    Tamper(
        "an answer name with 31 combining marks in a row",
        "result_mismatch",
        _unnormalised_answer({**_SMALL_RESULT, MARKS_31: True}),
    ),
    Tamper("an answer string of 4,000,000 combining marks in a row", "result_mismatch", _long_run_answer),
]


def test_the_tampers_cover_every_reason() -> None:
    assert {tamper.reason for tamper in TAMPERS} == set(REASONS)
    assert len({tamper.name for tamper in TAMPERS}) == len(TAMPERS)


def test_the_python_verifier_has_the_reasons_and_codes_of_the_standalone() -> None:
    assert FAILURES.get("id_mismatch") == ID_MISMATCH
    assert {reason: code for reason, (code, _) in FAILURES.items()} == REASONS
    assert list(FAILURES) == list(REASONS)  # in the order the checks run


@pytest.mark.parametrize("tamper", TAMPERS, ids=[tamper.name for tamper in TAMPERS])
def test_both_verifiers_refuse_each_tamper_alike(tamper: Tamper, tmp_path: Path) -> None:
    raw, keys = tamper.build()
    python, standalone = python_cli(tmp_path, raw, keys), node_cli(tmp_path, raw, keys)
    assert (python.reason, python.code) == (tamper.reason, REASONS[tamper.reason]), python.stderr
    assert (standalone.reason, standalone.code) == (python.reason, python.code), standalone.stderr


#: Inputs given by path, each read with a bound: (input, key document, standard input, reason).
ENDLESS = {
    "/dev/zero as the input": ("/dev/zero", "keys.json", None, "envelope_unreadable"),
    "/dev/zero on standard input": ("-", "keys.json", "/dev/zero", "envelope_unreadable"),
    "/dev/zero as the key document": ("input.json", "/dev/zero", None, "keys_unavailable"),
}


@pytest.mark.parametrize("which", ["python", "node"])
@pytest.mark.parametrize("name", sorted(ENDLESS))
def test_endless_inputs_fail_fast_in_little_memory(name: str, which: str, tmp_path: Path) -> None:
    """An input is read up to its bound plus one byte (8 MiB, 64 kB), never whole: ``/dev/zero``
    fails at once with its reason, in about the memory of an honest run."""
    raw, keys = _honest()
    (tmp_path / "input.json").write_bytes(raw)
    (tmp_path / "keys.json").write_bytes(keys)
    honest = measured(which, str(tmp_path / "input.json"), str(tmp_path / "keys.json"))
    assert honest.outcome.code == 0, honest.outcome.stderr
    envelope, document, stdin, reason = ENDLESS[name]

    def path(name: str) -> str:
        return name if name.startswith(("/", "-")) else str(tmp_path / name)

    ran = measured(
        which, path(envelope), path(document), stdin=stdin, timeout=20, memory=honest.peak_bytes + (256 << 20)
    )
    assert (ran.outcome.reason, ran.outcome.code) == (reason, REASONS[reason]), ran.outcome.stderr
    assert ran.seconds < 10
    assert ran.peak_bytes < honest.peak_bytes + (64 << 20), (ran.peak_bytes >> 20, honest.peak_bytes >> 20)


def _two_signatures() -> tuple[bytes, bytes]:
    unknown, key = forge.make_key(), forge.make_key()
    envelope = forge.envelope(forge.statement(), key)
    envelope["signatures"].insert(0, forge.envelope(forge.statement(), unknown)["signatures"][0])
    return forge.dumps(envelope), forge.keys_document(key)


def _revoked_and_valid() -> tuple[bytes, bytes]:
    revoked, key = forge.make_key(revoked=True), forge.make_key()
    payload = canonical_bytes(forge.statement())
    envelope = dsse.sign(payload, [(revoked.keyid, revoked.private), (key.keyid, key.private)])
    return forge.dumps(dict(envelope)), forge.keys_document(revoked, key)


def _url_safe(envelope: dict[str, Any]) -> None:
    for holder, name in [(envelope, "payload"), (envelope["signatures"][0], "sig")]:
        holder[name] = holder[name].replace("+", "-").replace("/", "_").rstrip("=")


#: valid_from 16:17:27.2465Z and valid_until 16:17:27.247Z: the bound is inclusive.
_OFFSETS = {"valid_from": "2026-12-01T17:17:27.2465+01:00", "valid_until": "2026-12-01T11:17:27.247-05:00"}


def _credentialed(predicate: dict[str, Any]) -> None:
    predicate.update(credentialed=True, credential_headers=["X-Api-Key", "X-\u202eevil\u0007"])
    predicate["url"] = "http://127.0.0.1:34887/\u200bmcp\x1b[31m"


HONEST: dict[str, Case] = {
    "a bare envelope": _honest,
    "a stored record": _record(),
    "a check answer with text not in NFC": lambda: _answer(RESULT),
    "a signature without keyid": _envelope(lambda e: e["signatures"][0].update(keyid="")),
    "URL-safe base64 without padding": _envelope(_url_safe),
    "a first signature by an unknown key": _two_signatures,
    "a signature member nested to the bound (512 levels)": _input(
        _in_signature(b'"n": ' + b"[" * 509 + b"]" * 509)  # in {[{ ... }]}
    ),
    "a revoked key beside a valid one": _revoked_and_valid,
    "key times with offsets and fractions": _first_key(**_OFFSETS),
    "an integer beyond 2**53 that is its double's form": _predicated(lambda p: p["tools"].update(count=10**20)),
    "a result with an integer beyond 2**53 that is its double's form": lambda: _answer({**RESULT, "n": 10**20}),
    "credentialed, with unprintable characters in printed text": _predicated(_credentialed),
    "server text with terminal escapes, C1 and format characters, backslashes and quotes": _predicated(
        lambda p: p["server"].update(
            name='evil\x1b[31m\u202e\\u0041"q', version="1.0\x85\x7f", title="\U000e0001\u00a0"
        )
    ),
    "a server that gave no name, version or title": _predicated(lambda p: p.update(server=dict.fromkeys(p["server"]))),
    "no server info at all": _predicated(lambda p: p.update(server=None)),
    "a server name with astral and combining characters": _predicated(
        lambda p: p["server"].update(name="\u00e9\U0001f600 \u05d3\u05bc")
    ),
    "runs of 30 combining marks in a payload string": _predicated(
        lambda p: p["server"].update(name=MARKS_30 * 2 + " " + MARKS_30)
    ),
    "runs of 30 combining marks in an answer string and name": lambda: _answer(
        {**RESULT, "server": {**RESULT["server"], "title": MARKS_30 * 2}, MARKS_30: True}
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_both_verifiers_accept_honest_inputs_and_report_alike(name: str, tmp_path: Path) -> None:
    raw, keys = HONEST[name]()
    python, standalone = python_cli(tmp_path, raw, keys), node_cli(tmp_path, raw, keys)
    assert python.code == standalone.code == 0, (python.stderr, standalone.stderr)
    assert standalone.stdout == python.stdout  # the --json report, byte for byte
    text = python_cli(tmp_path, raw, keys, as_json=False), node_cli(tmp_path, raw, keys, as_json=False)
    assert text[1].stdout == text[0].stdout
    for printed in (standalone.stdout, text[1].stdout):  # nothing unprintable reaches a terminal
        assert all(ch == "\n" or ch.isprintable() for ch in printed)


def test_the_reports_say_what_was_checked(tmp_path: Path) -> None:
    report = json.loads(node_cli(tmp_path, *_answer(RESULT)).stdout)
    assert (report["result_checked"], report["url"], report["status"]) == (True, RESULT["url"], "ok")
    assert json.loads(node_cli(tmp_path, *_record()()).stdout)["result_checked"] is False
    keys = json.loads(node_cli(tmp_path, *_first_key(**_OFFSETS)()).stdout)["keys"]
    assert [(key["valid_from"], key["valid_until"]) for key in keys] == [
        ("2026-12-01T17:17:27.246500+01:00", "2026-12-01T11:17:27.247000-05:00")
    ]
    text = node_cli(tmp_path, *_predicated(_credentialed)(), as_json=False).stdout
    assert "X-\\u202eevil\\u0007" in text and "/\\u200bmcp\\u001b[31m" in text


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    raw, _ = _honest()
    (tmp_path / "e.json").write_bytes(raw)
    for args in (
        [],
        [str(tmp_path / "e.json")],
        ["--keys", "k.json"],
        [str(tmp_path / "e.json"), "--keys"],
        ["a", "b", "--keys", "k"],
        ["--bogus"],
    ):
        done = subprocess.run([node(), str(STANDALONE), *args], capture_output=True, text=True, check=False)
        assert done.returncode == 2 and done.stderr.startswith("usage: "), args
    done = subprocess.run([node(), str(STANDALONE), "--help"], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    for reason, code in REASONS.items():
        assert f"{code} {reason}" in done.stdout


def test_the_standalone_reads_standard_input_and_names_an_unreadable_file(tmp_path: Path) -> None:
    raw, keys = _honest()
    (tmp_path / "k.json").write_bytes(keys)
    command = [node(), str(STANDALONE), "-", "--keys", str(tmp_path / "k.json")]
    piped = subprocess.run(command, input=raw, capture_output=True, check=False)
    assert piped.returncode == 0 and piped.stdout.startswith(b"VERIFIED: ")
    command[2] = str(tmp_path / "missing.json")
    missing = subprocess.run(command, capture_output=True, text=True, check=False)
    assert missing.returncode == 30
    assert missing.stderr == f"NOT VERIFIED (envelope_unreadable): cannot read {tmp_path / 'missing.json'}: ENOENT\n"
    command[2:] = ["-", "--keys", str(tmp_path / "missing.json")]
    no_keys = subprocess.run(command, input=raw.decode(), capture_output=True, text=True, check=False)
    assert (no_keys.returncode, no_keys.stderr.split(":")[0]) == (32, "NOT VERIFIED (keys_unavailable)")


#: Marks of each kind (Mn, Mc, Me; two beyond the BMP) and characters that are not marks (a letter,
#: an astral emoji, a zero-width joiner, a space), all in Unicode long before either verifier's.
_MARKS = ["\u0301", "\u0316", "\u0903", "\u20dd", "\U0001d165", "\U000e0100"]
_NOT_MARKS = ["x", "\U0001f600", "\u200d", " "]


def _mark_texts() -> list[str]:
    m, astral = "\u0301", "\U000e0100"
    texts = [m * 30, m * 31, "x" + m * 30, "x" + m * 31, m * 31 + "x", "x" + m * 30 + "y" + m * 30]
    texts += [m * 15 + "\u200d" + m * 16, "".join(_MARKS) * 5 + "\u0301", astral * 16, "\U0001f600" + astral * 31]
    chosen = random.Random(8785)
    for _ in range(2000):  # runs about the bound, of mixed marks, between characters that are not marks
        runs = [
            "".join(chosen.choice(_MARKS) for _ in range(chosen.randrange(26, 36)))
            for _ in range(chosen.randrange(1, 4))
        ]
        texts.append("".join(chosen.choice(_NOT_MARKS) * chosen.randrange(2) + run for run in runs))
    return texts


def test_the_standalones_bound_on_combining_marks_is_pythons() -> None:
    """The standalone's LONG_MARK_RUN finds what /\\p{M}{31,}/u finds (in linear time, without that
    form's backtracking) and what :func:`app.textruns.has_long_mark_run` finds: runs of code points,
    not of UTF-16 units, of every kind of mark."""
    found = re.search(r"^const LONG_MARK_RUN = (/.+/u);", STANDALONE.read_text("utf-8"), re.MULTILINE)
    assert found is not None
    texts = _mark_texts()
    script = (
        f"const ours = {found.group(1)}, plain = /\\p{{M}}{{31,}}/u;"
        "const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "process.stdout.write(JSON.stringify(texts.map((t) => [ours.test(t), plain.test(t)])));"
    )
    done = subprocess.run([node(), "-e", script], input=json.dumps(texts), capture_output=True, text=True, check=True)
    python = [has_long_mark_run(text) for text in texts]
    assert [ours for ours, _ in json.loads(done.stdout)] == python
    assert [plain for _, plain in json.loads(done.stdout)] == python
    assert 200 < sum(python) < len(texts) - 200  # both kinds, often


def test_the_standalone_uses_node_builtins_only() -> None:
    source = STANDALONE.read_text("utf-8")
    imports = [line for line in source.splitlines() if line.startswith("import ")]
    assert imports == [
        'import { createHash, createPublicKey, verify as cryptoVerify } from "node:crypto";',
        'import { closeSync, openSync, readSync } from "node:fs";',
    ]
    assert "require(" not in source and "import(" not in source
    assert "readFileSync" not in source  # every file is read with a bound, in chunks
    assert PREDICATE_TYPE in source  # the constant of app/attest/statement.py


# --- A real answer of the service ------------------------------------------------------------


def _cross(*args: str) -> Any:
    require(CANONICALIZE)
    done = subprocess.run(
        [node(), str(NODE_SCRIPTS / "cross.mjs"), *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_served_answer_verifies_in_node_and_cross_checks(service: Service, sdk_base: str, tmp_path: Path) -> None:
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
        assert answer.status_code == 200
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json").content
        stored = httpx2.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}").content
    for raw, checked in [(answer.content, True), (stored, False)]:
        python, standalone = python_cli(tmp_path, raw, keys), node_cli(tmp_path, raw, keys)
        assert python.code == standalone.code == 0, standalone.stderr
        assert standalone.stdout == python.stdout
        assert json.loads(standalone.stdout)["result_checked"] is checked
    # Node's crypto and canonicalize alone: the payload is canonicalize's own bytes, the signature holds.
    (tmp_path / "answer.json").write_bytes(answer.content)
    (tmp_path / "keys.json").write_bytes(keys)
    crossed = _cross("verify", str(tmp_path / "answer.json"), str(tmp_path / "keys.json"))
    assert crossed["canonical"] is True
    assert crossed["signatures"] == [
        {"keyid": answer.json()["attestation"]["signatures"][0]["keyid"], "keyid_matches": True, "verified": True}
    ]
    # The answer changed after signing: both verifiers see it.
    altered = answer.json()
    altered["status"] = "auth"
    raw = json.dumps(altered).encode()
    python, standalone = python_cli(tmp_path, raw, keys), node_cli(tmp_path, raw, keys)
    assert (python.reason, python.code) == (standalone.reason, standalone.code) == ("result_mismatch", 41)


def test_cross_verification_refuses_what_it_should(tmp_path: Path) -> None:
    """The cross-check can fail: a changed payload fails its signature, a non-canonical one its form."""
    for raw, keys, canonical, verified in [
        (*_payload_changed(), True, False),
        (*_signed(json.dumps(forge.statement()).encode()), False, True),
    ]:
        (tmp_path / "input.json").write_bytes(raw)
        (tmp_path / "keys.json").write_bytes(keys)
        crossed = _cross("verify", str(tmp_path / "input.json"), str(tmp_path / "keys.json"))
        assert (crossed["canonical"], crossed["signatures"][0]["verified"]) == (canonical, verified)


def _node_signed(statement: dict[str, Any], tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    (tmp_path / "statement.json").write_text(json.dumps(statement, ensure_ascii=False), "utf-8")
    made = _cross("sign", str(tmp_path / "statement.json"), "2026-01-01T00:00:00Z")
    return made["envelope"], made["key"]


def test_an_envelope_node_signs_over_canonicalize_verifies_in_python(tmp_path: Path) -> None:
    statement = _predicate(
        lambda p: p["server"].update(name="caf\u00e9 \U0001f600 \ue000 \u2028", title="\x00\x1f\x7f")
    )
    envelope, key = _node_signed(statement, tmp_path)
    assert key["keyid"] == key_id(load_public(key["public_key"], "node"))  # Node computes our key id
    assert forge.payload_of(envelope) == canonical_bytes(statement)  # canonicalize's bytes are ours
    keys = json.dumps({"keys": [key]}).encode()
    verified = verify(forge.dumps(envelope), parse_keys(keys))
    assert verified.statement == statement and [k.keyid for k in verified.keys] == [key["keyid"]]
    assert (
        python_cli(tmp_path, forge.dumps(envelope), keys).code
        == node_cli(tmp_path, forge.dumps(envelope), keys).code
        == 0
    )


def test_an_envelope_node_signs_over_text_not_in_nfc_is_refused_on_purpose(tmp_path: Path) -> None:
    """canonicalize leaves strings as they are (plain RFC 8785); our form is JCS over NFC."""
    envelope, key = _node_signed(_predicate(lambda p: p["server"].update(name="cafe\u0301")), tmp_path)
    keys = json.dumps({"keys": [key]}).encode()
    python, standalone = (
        python_cli(tmp_path, forge.dumps(envelope), keys),
        node_cli(tmp_path, forge.dumps(envelope), keys),
    )
    assert (python.reason, standalone.reason) == ("payload_not_canonical", "payload_not_canonical")


# --- The canonical form against canonicalize -------------------------------------------------


class Canonicalizer:
    """One long-running ``canonicalize-lines.mjs``: a document's text in, its canonical form out."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [node(), str(NODE_SCRIPTS / "canonicalize-lines.mjs")], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.calls = 0

    def __call__(self, text: str) -> bytes:
        """``canonicalize(JSON.parse(text))`` as UTF-8 bytes; ``AssertionError`` when it throws."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(text).encode("ascii") + b"\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line.startswith(b"ok "), line
        self.calls += 1
        return line[3:-1]

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=10) == 0
        self.process.stdout.close()


@pytest.fixture(scope="module")
def canonicalize() -> Iterator[Canonicalizer]:
    require(CANONICALIZE)
    process = Canonicalizer()
    yield process
    process.close()


def _nfc(value: Any) -> Any:
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, list):
        return [_nfc(item) for item in value]
    if isinstance(value, dict):
        return {unicodedata.normalize("NFC", key): _nfc(item) for key, item in value.items()}
    return value


#: Characters a JSON text makes hard: controls, quotes, line separators, combining marks, the
#: private-use area (sorted after astral characters in UTF-16), noncharacters, astral characters.
TRICKY = (
    '\x00\x01\x08\t\n\x0c\r\x1f\x7f\x80"\\/ \u00e9e\u0301A\u030a\u2028\u2029\u05d3\u05bc\ufb33'
    "\ue000\ufb01\uff21\ufeff\uffff\U0001f600\U0001f602\U00010000\U0010ffff"
)
_text = st.text() | st.text(alphabet=TRICKY, max_size=6)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.sampled_from([0, -1, 2**53, -(2**53), 2**53 - 1, 10**15, 10**20])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([0.0, -0.0, 5e-324, 1e-7, 1e-6, 1e21, 1e20, 0.1, 1 / 3, 1.7976931348623157e308, 2.0**53])
    | _text
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_text, children, max_size=5),
    max_leaves=25,
)


def test_canonical_form_matches_canonicalize_on_generated_documents(canonicalize: Canonicalizer) -> None:
    @settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_json, st.booleans())
    def compare(value: Any, ascii_text: bool) -> None:
        document = _nfc(value)  # NFC first: canonicalize has no NFC step (keys equal after it merge)
        text = json.dumps(document, ensure_ascii=ascii_text)
        theirs = canonicalize(text)
        assert canonical_bytes(document) == theirs  # the signer's, from the value
        assert canonical_text(text.encode()) == theirs  # the signer's, from the text (a check answer's digest)
        assert jcs.serialise(json.loads(text)) == theirs  # the verifier's, from the same text

    before = canonicalize.calls
    compare()
    assert canonicalize.calls - before >= 5000  # every example went through Node


@pytest.mark.parametrize(
    "document",
    [
        {"\U0001f600": 1, "\ue000": 2, "\ufb01": 3, "z": 4, "": 5},  # UTF-16 order: astral before U+E000
        {"10": 1, "9": 2, "__proto__": 3, "constructor": 4, "a\n": 5},  # index-like names sort as strings
        [2**53, -(2**53), 10**20, 295147905179352830000, 999999999999999900000, 1e21, 1e-7, 5e-324, -0.0, 4.5],
        ["\u2028\u2029", "\x00\x1f\x7f", "\U0001f600", "\ufeff", "</script>"],
        _nested({"k": [None, True, False, ""]}, 60),
    ],
    ids=["utf16-order", "index-like-names", "numbers", "strings", "nested"],
)
def test_canonical_form_matches_canonicalize_on_hard_cases(canonicalize: Canonicalizer, document: Any) -> None:
    for text in (json.dumps(document), json.dumps(document, ensure_ascii=False)):
        theirs = canonicalize(text)
        assert (
            canonical_bytes(json.loads(text))
            == canonical_text(text.encode())
            == jcs.serialise(json.loads(text))
            == theirs
        )


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_rfc8785_vectors_through_canonicalize_and_the_verifier(canonicalize: Canonicalizer, name: str) -> None:
    text = (VECTORS / "input" / name).read_text("utf-8")
    reference = (VECTORS / "output" / name).read_bytes()
    assert canonicalize(text) == reference  # plain RFC 8785, on every vector
    assert canonical_text(text.encode()) == NFC_DIFFERS.get(name, reference)  # the signer's, from the text
    if name not in NFC_DIFFERS:
        assert jcs.serialise(json.loads(text)) == reference
        return
    # Our form is JCS over NFC (docs/fingerprints.md, "Vectors where NFC makes us differ"): as a
    # payload the vector is not canonical; normalised, it gives our bytes, not the reference's.
    with pytest.raises(jcs.NotCanonical):
        jcs.serialise(json.loads(text))
    ours = jcs.serialise(json.loads(text), normalise=True)
    assert ours == NFC_DIFFERS[name] == canonical_bytes(json.loads(text)) != reference
    assert canonicalize(json.dumps(_nfc(json.loads(text)))) == ours  # canonicalize of the NFC form is ours


def test_the_vectors_nfc_changes_are_the_documented_two() -> None:
    assert sorted(NFC_DIFFERS) == ["unicode.json", "weird.json"]
    assert set(NFC_DIFFERS) < set(VECTOR_NAMES) and len(VECTOR_NAMES) == 6
