"""The served OpenAPI document: valid, live, and true to the service (schemathesis against the live app)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app.guard import IPAddress, ResolutionFailed
from app.http import create_app
from app.http.openapi import DEFAULT_PATH
from app.settings import Settings
from tests.servers.network import LoopbackNat
from tests.servers.uvicorn_thread import serve


class NothingResolves:
    """No name resolves: schemathesis's generated URLs never cause a lookup or a connection."""

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        raise ResolutionFailed("dns_nxdomain", "no such host")


@contextmanager
def live_service() -> Iterator[str]:
    app = create_app(
        Settings(free_pool_size=123, free_pool_per_ip=7, rate_limit="100000/minute", redis_url=None),
        resolver=NothingResolves(),
        network_backend=LoopbackNat({}),
    )
    with serve(app, proxy_headers=False) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def live_base() -> Iterator[str]:
    with live_service() as base:
        yield base


@pytest.fixture
def fresh_base() -> Iterator[str]:
    """A service of its own: the generated requests of the other tests may have drawn this
    client's free-pool share (7) on the module's service."""
    with live_service() as base:
        yield base


def test_served_document_is_valid_and_live(live_base: str) -> None:
    document: dict[str, Any] = yaml.safe_load(httpx2.get(f"{live_base}/openapi.yaml").text)
    validate(document)
    assert document == httpx2.get(f"{live_base}/openapi.json").json()
    pool = document["info"]["x-free-pool"]
    assert (pool["checks_per_day"], pool["checks_per_client_per_day"], pool["header"]) == (123, 7, "X-Free-Pool")
    assert "123 checks per UTC day" in document["components"]["parameters"]["FreePool"]["description"]
    assert document["servers"] == [{"url": "http://127.0.0.1:8000"}]


def test_served_document_is_the_file_with_live_values(live_base: str) -> None:
    served: dict[str, Any] = httpx2.get(f"{live_base}/openapi.json").json()
    written: dict[str, Any] = yaml.safe_load(DEFAULT_PATH.read_text())
    assert served["paths"].keys() == written["paths"].keys() and served["tags"] == written["tags"]
    for member in ("license", "contact", "summary"):
        assert served["info"][member] == written["info"][member], member
    for part in ("schemas", "responses", "headers", "examples"):
        assert served["components"][part] == written["components"][part], part


@pytest.fixture(scope="module")
def operations(live_base: str) -> list[Any]:
    loaded = schemathesis.openapi.from_url(f"{live_base}/openapi.json")
    found = [result.ok() for result in loaded.get_all_operations()]  # type: ignore[union-attr]
    assert "POST /v1/mcp/check" in {operation.label for operation in found}
    return found


CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


#: Every operation of the written document, as schemathesis labels them ("GET /v1/checks"), but
#: the document it was loaded from (which it leaves out of the operations it generates for).
LABELS = [
    f"{method.upper()} {path}"
    for path, item in yaml.safe_load(DEFAULT_PATH.read_text())["paths"].items()
    for method in item
    if method in ("get", "put", "post", "delete", "patch", "head", "options") and path != "/openapi.json"
]


@pytest.mark.parametrize("label", LABELS)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_api_conforms_to_its_contract(operations: list[Any], label: str, data: st.DataObject) -> None:
    """Generated requests for each operation: no 5xx, and every answer as the document says (an
    operation a test of its own: one slow operation, such as the document itself, is not sent
    again with every example of all the others)."""
    case = data.draw(by_label(operations, label).as_strategy())
    case.call_and_validate(checks=CHECKS, timeout=30)


def by_label(operations: list[Any], label: str) -> Any:
    return next(operation for operation in operations if operation.label == label)


@pytest.mark.parametrize("free", [True, False])
def test_documented_check_requests_get_documented_answers(operations: list[Any], free: bool, fresh_base: str) -> None:
    """Each request example, sent as it is: a result drawn from the free pool (the name does not
    resolve here), or the 402 document without the free-pool header; one naming a stored run as
    its baseline is 404 baseline_not_found on this fresh instance, before any payment is asked."""
    operation = by_label(operations, "POST /v1/mcp/check")
    content = operation.definition.raw["requestBody"]["content"]["application/json"]
    for name, example in content["examples"].items():
        case = operation.Case(body=example["value"], headers={"X-Free-Pool": "1"} if free else {})
        response = case.call_and_validate(base_url=fresh_base, checks=CHECKS, timeout=30)
        if "run_id" in example["value"].get("baseline", {}):
            assert (response.status_code, response.json()["reason"]) == (404, "baseline_not_found"), name
            continue
        assert response.status_code == (200 if free else 402), (name, response.text)
        if free:
            assert (response.json()["status"], response.json()["reason"]) == ("dns", "dns_nxdomain")


def test_documented_mcp_requests_get_documented_answers(operations: list[Any]) -> None:
    operation = by_label(operations, "POST /mcp")
    content = operation.definition.raw["requestBody"]["content"]["application/json"]
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    for name, example in content["examples"].items():
        headers = {"Accept": "application/json, text/event-stream", "X-Free-Pool": "1"}
        case = operation.Case(body=example["value"], headers=headers | (modern if name == "discover" else {}))
        response = case.call_and_validate(checks=CHECKS, timeout=30)
        assert response.status_code == (202 if name == "initialized" else 200), name
