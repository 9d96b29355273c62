"""Bring the check result examples of openapi.yaml up to the current catalogue and sign them again.

Each ``CheckResult*`` example gets a verdict for every check of the catalogue it lacks (the
judge's rule where no baseline was named: the state of ``schema_fingerprint`` decides, as
:mod:`app.suite.drift` does), ``baseline: null`` where it has none, the current catalogue
digest, and a fresh envelope: its statement is built by the service's own code
(:func:`app.attest.statement.statement`, at the example's original ``finished_at``) and signed
with a throwaway Ed25519 key, whose key document replaces the example key document (and its key
id the one the ``/readyz`` examples and ``docs/attestations.md`` name). The private key is
never written anywhere. ``tests/attest/test_documented.py`` verifies the outcome.

Usage: ``python scripts/sign_examples.py`` (rewrites the files in place).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from app.attest import dsse
from app.attest.keys import key_id, public_pem
from app.attest.statement import statement
from app.canonical import canonical_bytes
from app.checking.links import CheckAnswer
from app.suite.catalogue import catalogue

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "app" / "http" / "openapi.yaml"
GUIDE = ROOT / "docs" / "attestations.md"
AFTER = "schema_fingerprint"


def _missing_checks(value: dict[str, Any]) -> list[str]:
    """YAML lines (flow style) for the catalogue's checks the example lacks, judged as the suite does."""
    have = {check["id"] for check in value["checks"]}
    anchor = next(check for check in value["checks"] if check["id"] == AFTER)
    reason = "no_baseline" if anchor["state"] == "verified" else anchor["reason"]
    return [
        f"          - {{id: {check_id}, state: unverified, reason: {reason}, evidence: {{}}}}"
        for check_id in catalogue().checks
        if check_id not in have
    ]


def _section(lines: list[str], name: str) -> tuple[int, int]:
    start = lines.index(f"    {name}:")
    end = next(i for i in range(start + 1, len(lines)) if re.match(r"^    \S", lines[i]))
    return start, end


def _update(lines: list[str], name: str, value: dict[str, Any]) -> None:
    start, end = _section(lines, name)
    block = lines[start:end]
    at = next(i for i, line in enumerate(block) if line.startswith(f"          - {{id: {AFTER},"))
    block[at + 1 : at + 1] = _missing_checks(value)
    if "baseline" not in value:
        at = next(i for i, line in enumerate(block) if line.startswith("        credential_headers:"))
        block.insert(at + 1, "        baseline: null")
    digest = catalogue().sha256
    block = [re.sub(r"catalogue_sha256: [0-9a-f]{64}", f"catalogue_sha256: {digest}", line) for line in block]
    lines[start:end] = block


def _sign(value: dict[str, Any], key: Ed25519PrivateKey) -> tuple[str, dict[str, Any]]:
    old = json.loads(base64.b64decode(value["attestation"]["payload"]))
    finished = datetime.fromisoformat(old["predicate"]["run"]["finished_at"].replace("Z", "+00:00"))
    answer = {k: v for k, v in value.items() if k not in ("attestation", "attestation_id")}
    result = CheckAnswer.model_validate(answer)
    exclude = {"attestation", "attestation_id"} | (set() if "tool_definitions" in value else {"tool_definitions"})
    served = result.model_dump_json(exclude=exclude).encode()
    payload = canonical_bytes(statement(result, served, finished))
    envelope = dsse.sign(payload, [(key_id(key.public_key()), key)])
    return hashlib.sha256(payload).hexdigest(), dict(envelope)


def main() -> None:
    key = Ed25519PrivateKey.generate()
    keyid = key_id(key.public_key())
    text = DOCUMENT.read_text()
    old_keyid = re.search(r'keys: \[\{keyid: "([0-9a-f]{16})"', text)
    assert old_keyid is not None
    lines = text.split("\n")
    parsed = yaml.safe_load(text)["components"]["examples"]
    names = sorted(name for name in parsed if name.startswith("CheckResult"))
    for name in names:
        _update(lines, name, parsed[name]["value"])
    text = "\n".join(lines)
    updated = yaml.safe_load(text)["components"]["examples"]
    for name in names:
        value = updated[name]["value"]
        old_id = value["attestation_id"]
        new_id, envelope = _sign(value, key)
        signature = envelope["signatures"][0]["sig"]
        envelope_text = (
            f"{{payloadType: {envelope['payloadType']}, payload: {envelope['payload']}, "
            f'signatures: [{{keyid: "{keyid}", sig: "{signature}"}}]}}'
        )
        escaped = envelope_text.replace("\\", "\\\\")
        start, end = _section(text.split("\n"), name)
        block = text.split("\n")[start:end]
        block = [re.sub(r"^        attestation: \{.*\}$", "        attestation: " + escaped, line) for line in block]
        block = [line.replace(old_id, new_id) for line in block]
        lines = text.split("\n")
        lines[start:end] = block
        text = "\n".join(lines)
        if name == "CheckResultOk":  # the stored attestation example is this one's envelope
            text, replaced = re.subn(
                r"example: \{id: [0-9a-f]{64}, envelope: \{payloadType: .*\}\]\}\}$",
                f"example: {{id: {new_id}, envelope: {escaped}}}",
                text,
                count=1,
                flags=re.MULTILINE,
            )
            assert replaced == 1, "the stored attestation example was not found"
    pem = public_pem(key.public_key()).replace("\n", "\\n")
    text = re.sub(r'keys: \[\{keyid: "[0-9a-f]{16}", algorithm: ed25519, public_key: "[^"]*"',
                  f'keys: [{{keyid: "{keyid}", algorithm: ed25519, public_key: "{pem}"', text)  # fmt: skip
    text = text.replace(old_keyid.group(1), keyid)
    DOCUMENT.write_text(text)
    GUIDE.write_text(GUIDE.read_text().replace(old_keyid.group(1), keyid))
    print(f"signed {len(names)} examples with the throwaway key {keyid}")


if __name__ == "__main__":
    main()
