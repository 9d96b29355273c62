"""Verify an envelope: signature, key, canonical bytes, schemas, validity, in that order.

1. The input is exactly a DSSE envelope (``payloadType``, ``payload``, ``signatures``), a stored
   record (``id``, ``envelope``) or a check answer holding one under ``attestation`` (then step
   8 runs too), with no object holding a member twice (:func:`read_input`).
2. ``payloadType`` is ``application/vnd.in-toto+json``.
3. At least one signature names a key the key document lists (``keyid``; a signature without
   one is tried with every listed key), and verifies over PAE (:mod:`.pae`) with it. The key
   document is read only now (``keys`` may be a function that reads it): an input that is not
   an envelope of our payload type fails as such, whatever the key document.
4. Not every such key is revoked (a revoked key verifies nothing, :mod:`app.attest.document`),
   and the id given beside the envelope (a record's ``id``, an answer's ``attestation_id``) is
   the SHA-256 of its payload (``id_mismatch``).
5. The payload has no object with a key twice, and its bytes are exactly their own canonical
   form (:mod:`.jcs`).
6. The payload is an in-toto Statement v1 of our predicate type, and the predicate matches
   its JSON Schema (both in ``app/attest/schemas``, draft 2020-12), with ``pattern`` read as
   the ECMA-262 expression JSON Schema says it is (:func:`_ecma_pattern`), and its
   ``observed_at`` is a real time (the pattern alone lets ``2026-02-30`` through).
7. A key whose signature verified was valid at the predicate's ``observed_at``.
8. For a check answer: the answer without ``attestation`` and ``attestation_id`` has the
   canonical SHA-256 the predicate names (``result_sha256``); a statement that names none
   cannot vouch for an answer (``result_mismatch``). Strings of more than 30 combining marks in
   a row have no canonical form anywhere (:mod:`app.textruns`).

The first step that fails decides the reason (:data:`app.attest.verify.reasons.FAILURES`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Any

from cryptography.exceptions import InvalidSignature
from jsonschema import Draft202012Validator, ValidationError, validators
from jsonschema.protocols import Validator

from app import jsonsafe
from app.attest.verify import jcs, pae
from app.attest.verify.keydoc import ListedKey
from app.attest.verify.reasons import VerificationFailed

IN_TOTO = "application/vnd.in-toto+json"
MAX_INPUT_BYTES = 8 * 1024 * 1024

#: The key document, or a function that reads it (called once the envelope's form is checked).
Keys = Mapping[str, ListedKey] | Callable[[], Mapping[str, ListedKey]]


@dataclass(frozen=True)
class Verified:
    """A statement whose envelope verified.

    Attributes:
        keys: the keys whose signatures verified and that were valid at ``observed_at``.
        statement: the statement (parsed payload).
        result_checked: a check answer came with the envelope and matched ``result_sha256``.
    """

    keys: tuple[ListedKey, ...]
    statement: dict[str, Any]
    result_checked: bool

    @property
    def predicate(self) -> dict[str, Any]:
        predicate: dict[str, Any] = self.statement["predicate"]
        return predicate


def _fail(reason: str, message: str) -> VerificationFailed:
    return VerificationFailed(reason, message)


def _unbase64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise _fail("envelope_unreadable", f"{what} is not a base64 string")
    try:  # DSSE: standard or URL-safe base64 (protocol.md); padding optional
        text = value.replace("-", "+").replace("_", "/")
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _fail("envelope_unreadable", f"{what} is not base64") from None


#: The members of a DSSE envelope, exactly (DSSE v1.0 envelope.md).
ENVELOPE = frozenset({"payloadType", "payload", "signatures"})


def _envelope(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) != ENVELOPE:
        raise _fail("envelope_unreadable", f"{where} is not a DSSE envelope (exactly payloadType, payload, signatures)")
    return value


#: What :func:`read_input` gives when no id came beside the envelope (a bare envelope).
NO_ID = object()


def read_input(raw: bytes) -> tuple[dict[str, Any], dict[str, Any] | None, object]:
    """The envelope, the check answer it came in (if it came in one), and the id given beside it
    (:data:`NO_ID` for a bare envelope).

    The input is exactly one of: a DSSE envelope; a stored record ``{"id", "envelope"}``; a check
    answer holding the envelope under ``attestation`` and its id under ``attestation_id``.
    Anything else, and any object holding a member twice, is refused: an answer beside an
    envelope it does not hold would pass unchecked.

    Raises:
        VerificationFailed: ``envelope_unreadable``.
    """
    if len(raw) > MAX_INPUT_BYTES:
        raise _fail("envelope_unreadable", f"the input is larger than {MAX_INPUT_BYTES} bytes")
    if jsonsafe.too_deep(raw, jcs.MAX_NESTING):
        raise _fail("envelope_unreadable", f"the input is nested deeper than {jcs.MAX_NESTING} levels")
    try:
        document = jcs.parse(raw)
    except jcs.DuplicateKey:
        raise _fail("envelope_unreadable", "the input holds an object with a member twice") from None
    except jcs.NotCanonical:
        raise _fail("envelope_unreadable", "the input is not UTF-8 JSON") from None
    if not isinstance(document, dict):
        raise _fail("envelope_unreadable", "the input is not a JSON object")
    if set(document) == ENVELOPE:
        return document, None, NO_ID
    if set(document) == {"id", "envelope"}:  # GET /v1/attestations/{id}
        return _envelope(document["envelope"], "the record's envelope"), None, document["id"]
    if "attestation" in document:
        if "attestation_id" not in document:
            raise _fail("envelope_unreadable", "the check answer has no attestation_id beside its attestation")
        return _envelope(document["attestation"], "the answer's attestation"), document, document["attestation_id"]
    raise _fail("envelope_unreadable", "the input is neither a DSSE envelope, a stored record nor a check answer")


def _signed_by(envelope: Mapping[str, Any], listed: Keys) -> tuple[bytes, list[ListedKey]]:
    payload_type = envelope.get("payloadType")
    signatures = envelope.get("signatures")
    if not isinstance(payload_type, str) or not isinstance(signatures, list) or not signatures:
        raise _fail("envelope_unreadable", "the envelope needs payloadType, payload and a non-empty signatures array")
    payload = _unbase64(envelope.get("payload"), "payload")
    if payload_type != IN_TOTO:
        raise _fail("payload_type_unexpected", f"payloadType is {payload_type[:80]!r}, not {IN_TOTO}")
    keys = listed() if callable(listed) else listed
    message = pae.encode(payload_type, payload)
    named = verified = 0
    signers: list[ListedKey] = []
    for signature in signatures[:16]:
        if not isinstance(signature, dict):
            raise _fail("envelope_unreadable", "a signature is not an object")
        sig = _unbase64(signature.get("sig"), "a signature")
        keyid = signature.get("keyid")
        candidates = [keys[keyid]] if isinstance(keyid, str) and keyid in keys else []
        if not keyid:
            candidates = list(keys.values())
        named += bool(candidates)
        for key in candidates:
            try:
                key.public.verify(sig, message)
            except InvalidSignature:
                continue
            verified += 1
            if key not in signers:
                signers.append(key)
    if not named:
        raise _fail("key_unknown", "no signature names a key of the key document")
    if not verified:
        raise _fail("signature_invalid", "no signature verifies with the key it names")
    return payload, signers


def _ecma(pattern: str) -> str:
    # Our patterns anchor with a final ``$`` only (tested); ECMA-262's ``$`` is Python's ``\Z``.
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern


def _ecma_pattern(
    validator: Validator, pattern: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    """``pattern`` with ECMA-262's ``$``: at the very end, where Python's ``$`` also matches before a
    final newline (``re.search`` would let a digest ``"<64 hex>\\n"`` through)."""
    if validator.is_type(instance, "string") and not re.search(_ecma(pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})  # type: ignore[no-untyped-call]


@functools.cache
def _validator(name: str) -> Validator:
    schema = json.loads(resources.files("app.attest").joinpath("schemas", name).read_text("utf-8"))
    validator: Validator = _Validator(schema)
    return validator


def _schema_errors(name: str, value: Any) -> str | None:
    error = next(iter(_validator(name).iter_errors(value)), None)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(root)"
    return f"at {where}: {error.message[:200]}"


def verify(raw: bytes, keys: Keys) -> Verified:
    """Verify the envelope in ``raw`` against ``keys`` (see the module docs).

    Raises:
        VerificationFailed: with the reason of the first step that failed.
    """
    envelope, answer, claimed = read_input(raw)
    payload, signers = _signed_by(envelope, keys)
    unrevoked = [key for key in signers if not key.revoked]
    if not unrevoked:
        raise _fail("key_revoked", f"the signing key {signers[0].keyid} is revoked")
    if claimed is not NO_ID and claimed != hashlib.sha256(payload).hexdigest():
        raise _fail("id_mismatch", "the attestation id beside the envelope is not the SHA-256 of its payload")
    try:
        statement = jcs.parse(payload)
        canonical = jcs.serialise(statement)
    except jcs.DuplicateKey as exc:
        raise _fail(
            "payload_duplicate_key", f"an object of the payload holds the key {str(exc)[:80]!r} twice"
        ) from None
    except jcs.NotCanonical as exc:
        raise _fail("payload_not_canonical", f"the payload has no canonical form: {exc}") from None
    if canonical != payload:
        raise _fail("payload_not_canonical", "the payload bytes are not their own canonical form")
    problem = _schema_errors("statement-v1.schema.json", statement)
    if problem is not None:
        raise _fail("statement_invalid", f"the statement does not match its schema {problem}")
    problem = _schema_errors("check-result-v1.schema.json", statement["predicate"])
    if problem is not None:
        raise _fail("predicate_invalid", f"the predicate does not match its schema {problem}")
    try:
        observed = datetime.fromisoformat(statement["predicate"]["observed_at"])
    except ValueError:
        raise _fail("predicate_invalid", "the predicate's observed_at is not a real time") from None
    valid = tuple(key for key in unrevoked if key.valid_at(observed))
    if not valid:
        raise _fail("key_not_valid_at_observed_at", f"key {unrevoked[0].keyid} was not valid at {observed.isoformat()}")
    checked = answer is not None and _match_answer(answer, statement["predicate"])
    return Verified(valid, statement, checked)


def _match_answer(answer: dict[str, Any], predicate: Mapping[str, Any]) -> bool:
    """``True``, or ``result_mismatch`` when the answer is not the one signed (or the statement
    signs no digest of an answer, so none can be matched)."""
    if predicate.get("result_sha256") is None:
        raise _fail("result_mismatch", "the statement signs no digest of a result, so the answer cannot be matched")
    result = {name: value for name, value in answer.items() if name not in ("attestation", "attestation_id")}
    try:
        digest: str | None = hashlib.sha256(jcs.serialise(result, normalise=True)).hexdigest()
    except jcs.NotCanonical:
        digest = None
    if digest != predicate["result_sha256"]:
        raise _fail("result_mismatch", "the check answer beside the envelope is not the result the statement signs")
    return True
