"""What openapi.yaml shows of signed results is true: its example envelopes verify with its example
key document and sign the example results beside them, and the predicate schema follows the code."""

from __future__ import annotations

import base64
import hashlib
import json
import typing
from importlib import resources
from typing import Any

import pytest

from app.attest.statement import PREDICATE_TYPE
from app.attest.verify.keydoc import parse_keys
from app.attest.verify.verifier import verify
from app.probe.reasons import Status
from app.suite.catalogue import State, catalogue
from tests.http.test_openapi import DOCUMENT

EXAMPLES = {name: example["value"] for name, example in DOCUMENT["components"]["examples"].items()}
RESULTS = sorted(name for name in EXAMPLES if name.startswith("CheckResult"))


def _key_document() -> bytes:
    operation = DOCUMENT["paths"]["/.well-known/mcp-sonde-keys.json"]["get"]
    return json.dumps(operation["responses"]["200"]["content"]["application/json"]["example"]).encode()


def _schema(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(resources.files("app.attest").joinpath("schemas", name).read_text())
    return schema


@pytest.mark.parametrize("name", RESULTS)
def test_every_example_result_carries_an_envelope_that_signs_it(name: str) -> None:
    answer = EXAMPLES[name]
    verified = verify(json.dumps(answer).encode(), parse_keys(_key_document()))
    assert verified.result_checked  # the example result is the one the statement signs
    payload = base64.b64decode(answer["attestation"]["payload"])
    assert answer["attestation_id"] == hashlib.sha256(payload).hexdigest()
    assert verified.predicate["status"] == answer["status"] and verified.predicate["reason"] == answer["reason"]


def test_the_stored_attestation_example_is_the_ok_example_s_envelope() -> None:
    operation = DOCUMENT["paths"]["/v1/attestations/{id}"]["get"]
    stored = operation["responses"]["200"]["content"]["application/json"]["example"]
    assert stored == {
        "id": EXAMPLES["CheckResultOk"]["attestation_id"],
        "envelope": EXAMPLES["CheckResultOk"]["attestation"],
    }
    assert (
        verify(json.dumps(stored).encode(), parse_keys(_key_document())).predicate["url"]
        == "https://mcp.example.com/mcp"
    )


def test_predicate_schema_enums_follow_the_code() -> None:
    schema = _schema("check-result-v1.schema.json")
    properties = schema["properties"]
    assert properties["status"]["enum"] == list(typing.get_args(Status))
    check = properties["checks"]["items"]["properties"]
    assert check["id"]["enum"] == list(catalogue().checks)
    assert check["state"]["enum"] == list(typing.get_args(State))
    assert schema["$id"] == PREDICATE_TYPE
    assert _schema("statement-v1.schema.json")["properties"]["predicateType"] == {"const": PREDICATE_TYPE}


def test_every_object_of_the_schemas_is_closed() -> None:
    def objects(node: Any) -> typing.Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node:
                yield node
            for value in node.values():
                yield from objects(value)
        elif isinstance(node, list):
            for value in node:
                yield from objects(value)

    for name in ("check-result-v1.schema.json", "statement-v1.schema.json"):
        found = list(objects(_schema(name)))
        assert found and all(
            o.get("additionalProperties") is False and set(o["required"]) == set(o["properties"]) for o in found
        )
