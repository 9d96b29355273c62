"""The local registry's pages against the copy of the official OpenAPI document, and the names
the reader uses against that document."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from app.registry import page as reader
from app.registry.page import PageRefused, read_page
from tests.servers.registry import MALFORMED, RegistryState, generated

COPY = Path(__file__).resolve().parents[1] / "data" / "registry" / "openapi-v0.1-servers.yaml"
DOCUMENT: dict[str, Any] = yaml.safe_load(COPY.read_text())
SCHEMAS = DOCUMENT["components"]["schemas"]
DIALECT = {"$schema": "https://json-schema.org/draft/2020-12/schema"}  # (the document's jsonSchemaDialect)
_REFS: Registry[Any] = Registry().with_resource("urn:registry", Resource.from_contents({**DOCUMENT, **DIALECT}))


def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator({"$ref": f"urn:registry#/components/schemas/{name}"}, registry=_REFS)


def test_the_copy_says_where_it_came_from() -> None:
    head = COPY.read_text().split("openapi:", 1)[0]
    assert "modelcontextprotocol/registry" in head and "dd37eb6332be8489687ef7bba48b06cfe4182a9e" in head
    assert "/v0.1/servers" in DOCUMENT["paths"]
    names = {p["name"] for p in DOCUMENT["paths"]["/v0.1/servers"]["get"]["parameters"]}
    assert {"cursor", "limit", "updated_since"} <= names


def test_the_reader_uses_the_documents_names() -> None:
    official = SCHEMAS["ServerResponse"]["properties"]["_meta"]["properties"]
    assert list(official) == [reader.OFFICIAL]
    assert set(official[reader.OFFICIAL]["properties"]) == {"status", "publishedAt", "updatedAt", "isLatest"}
    assert set(official[reader.OFFICIAL]["properties"]["status"]["enum"]) == reader.STATUSES
    assert set(SCHEMAS["ServerList"]["properties"]["metadata"]["properties"]) == {"nextCursor", "count"}
    detail = SCHEMAS["ServerDetail"]
    assert detail["properties"]["name"]["maxLength"] == reader.MAX_NAME
    assert detail["properties"]["version"]["maxLength"] == reader.MAX_VERSION
    transports = {SCHEMAS[ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["enum"][0]
                  for ref in detail["properties"]["remotes"]["items"]["anyOf"]}  # fmt: skip
    assert transports == {"streamable-http", "sse"}
    # (the document gives a remote type, url and headers; no variables of its own)
    assert set(SCHEMAS["StreamableHttpTransport"]["properties"]) == {"type", "url", "headers"}


def test_every_page_of_the_fixture_is_a_server_list() -> None:
    state = RegistryState(entries=generated(2000))
    pages, cursor = 0, None
    check = validator("ServerList")
    while True:
        body = json.loads(state.page(cursor, 100, None))
        check.validate(body)
        pages += 1
        cursor = body["metadata"].get("nextCursor")
        if not cursor:
            break
    assert pages == 20
    for mode in ("endless",):
        state.mode = mode
        check.validate(json.loads(state.page(None, 100, None)))


@pytest.mark.parametrize(("raw", "reason"), MALFORMED, ids=[reason for _, reason in MALFORMED])
def test_the_malformed_entries_are_what_they_say(raw: str, reason: str) -> None:
    """Entries the schema refuses are refused by it; the others are valid entries whose remote the
    mirror keeps but skips; the reader skips each under its reason."""
    invalid = {"entry_name_invalid", "entry_version_invalid", "entry_shape", "entry_remotes_invalid",
               "entry_meta_invalid", "remote_transport_unknown"}  # fmt: skip
    errors = list(validator("ServerResponse").iter_errors(json.loads(raw)))
    assert bool(errors) == (reason in invalid)
    page = read_page(b'{"servers": [' + raw.encode() + b"]}")
    if reason.startswith(("entry_", "remote_")):
        assert page.skipped == {reason: 1}
    else:
        assert page.skipped == {} and len(page.entries) == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"<html>", "page_not_json"),
        (b"\xff\xfe", "page_not_json"),
        (b"[1, 2]", "page_shape"),
        (b'{"servers": {}}', "page_shape"),
        (b'{"servers": [], "servers": []}', "page_duplicate_member"),
        (b'{"servers": [], "metadata": {"nextCursor": 5}}', "page_shape"),
        (b'{"servers": [], "metadata": []}', "page_shape"),
        (b"[" * 100_000, "page_too_deep"),
    ],
)
def test_a_page_that_is_not_a_server_list_is_refused_whole(body: bytes, reason: str) -> None:
    with pytest.raises(PageRefused) as caught:
        read_page(body)
    assert caught.value.reason == reason


def test_an_empty_or_null_next_cursor_ends_the_listing() -> None:
    assert read_page(b'{"servers": [], "metadata": {"nextCursor": ""}}').next_cursor is None
    assert read_page(b'{"servers": [], "metadata": {"nextCursor": null}}').next_cursor is None
    assert read_page(b'{"servers": []}').next_cursor is None
    assert read_page(b'{"servers": [], "metadata": {"nextCursor": "abc"}}').next_cursor == "abc"
