"""openapi.yaml says what the code sends: reasons per response, headers, models, enums, and examples
that are valid (the live conformance run is in test_contract.py)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from pydantic import BaseModel
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012
from x402.schemas import PaymentRequired, PaymentRequirements, ResourceInfo, SettleResponse

from app.baselines.proof import proof_document
from app.baselines.request import BaselineRequest
from app.checking.errors import API_REASONS
from app.checking.flow import Served
from app.checking.links import CheckAnswer, answer_links
from app.checking.ratelimit import Decision
from app.drift import Example, Finding, ToolChange, ToolCounts, ToolHint, ToolListDiff
from app.guard.url import REFUSAL_REASONS
from app.http.badges import cache as badge_cache
from app.http.badges.drawing import CSP, ERROR_STATES, answer, json_of, svg_of
from app.http.bodies.baseline import PROOF_HEADER, ApprovalRequest, resource
from app.http.bodies.check import CheckRequest
from app.http.middleware.cors import EXPOSED_HEADERS
from app.http.problems import title_of
from app.payment import payment_required
from app.probe import REASONS, STATUSES
from app.probe.auth import AuthInfo, MetadataLookup, ProtectedResource
from app.probe.challenge import AuthChallenge
from app.probe.challenge_grammar import ChallengeItem
from app.probe.result import ProbeResult, ServerInfo, SessionInfo, Timings, ToolsInfo
from app.probe.tls import TlsInfo
from app.settings import Settings
from app.suite.catalogue import catalogue
from app.suite.model import BaselineComparison, CategoryInfo, CheckResult, CheckVerdict, SuiteInfo, ToolDefinition

DOCUMENT_PATH = Path(__file__).resolve().parents[2] / "app" / "http" / "openapi.yaml"
DOCUMENT: dict[str, Any] = yaml.safe_load(DOCUMENT_PATH.read_text())
SCHEMAS: dict[str, Any] = DOCUMENT["components"]["schemas"]
CHECK = "POST /v1/mcp/check"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

#: Reasons the document lists before the code answers with them: reason -> (status, operation).
#: Once one is in API_REASONS its status there must agree; then drop it from here.
PENDING: dict[str, tuple[int, str]] = {}
#: Reasons other operations answer with, never the check route.
ELSEWHERE: dict[str, set[str]] = {
    "GET /badge/mcp.png": {"png_unavailable"},
    "GET /metrics": {"metrics_unauthorized", "not_found"},
    "GET /v1/attestations/{id}": {"attestation_not_found"},
    "GET /schemas/{name}": {"not_found"},
    "GET /v1/stats": {"history_unavailable"},
    "GET /v1/servers": {
        "invalid_query",
        "invalid_search",
        "invalid_filter",
        "invalid_sort",
        "invalid_cursor",
        "history_unavailable",
    },
    "GET /v1/servers/{server_id}": {"server_not_found", "history_unavailable"},
    "GET /v1/servers/{server_id}/history": {"server_not_found", "history_unavailable", "invalid_query"},
    "GET /v1/servers/{server_id}/changes": {"server_not_found", "history_unavailable", "invalid_query"},
    "POST /v1/mcp/diff": {"invalid_tools", "too_many_tools", "diff_busy"},
    "GET /v1/admin/optout": {"admin_disabled", "admin_unauthorized", "admin_forbidden"},
    "POST /v1/admin/optout": {"admin_disabled", "admin_unauthorized", "admin_forbidden", "optout_invalid"},
    "DELETE /v1/admin/optout": {
        *("admin_disabled", "admin_unauthorized", "admin_forbidden"),
        *("optout_invalid", "optout_not_found", "invalid_query"),
    },
    "GET /v1/servers/{server_id}/baseline": {"server_not_found", "baseline_not_found", "history_unavailable"},
    "POST /v1/claims": {"claim_host_refused", "claim_method_refused", "history_unavailable"},
    "POST /v1/claims/{claim_id}/verify": {
        *("claim_not_found", "claim_proof_not_found", "claim_proof_invalid"),
        *("claim_proof_redirect_refused", "claim_proof_timeout", "claim_dns_unanswered"),
    },
    "GET /v1/owner": {"owner_unauthorized", "owner_forbidden"},
    "GET /v1/owner/servers/{server_id}/credentialed-checks": {
        *("owner_unauthorized", "owner_forbidden", "server_not_found"),
    },
    "PUT /v1/owner/sweeps": {"owner_unauthorized", "owner_forbidden"},
    "PUT /v1/owner/servers/{server_id}/profile": {"owner_unauthorized", "owner_forbidden", "server_not_found"},
    "PUT /v1/owner/servers/{server_id}/baseline": {
        *("owner_unauthorized", "owner_forbidden", "server_not_found", "run_not_found", "invalid_baseline_request"),
    },
    "DELETE /v1/owner/servers/{server_id}/baseline": {
        *("owner_unauthorized", "owner_forbidden", "server_not_found", "baseline_not_found"),
    },
    "POST /v1/monitors": {
        "query_not_allowed",
        "webhook_unresolved",
        "opted_out",
        "history_unavailable",
        "payments_not_configured",
    },
    "GET /v1/monitors/{monitor_id}": {"monitor_not_found", "history_unavailable"},
    "DELETE /v1/monitors/{monitor_id}": {"monitor_not_found", "history_unavailable"},
    "GET /v1/monitors/{monitor_id}/deliveries": {"monitor_not_found", "history_unavailable", "invalid_query"},
    "PUT /v1/servers/{server_id}/baseline": {
        "server_not_found",
        "run_not_found",
        "history_unavailable",
        "invalid_baseline_request",
        "invalid_proof_header",
        "proof_not_found",
        "proof_invalid",
        "proof_redirect_refused",
        "proof_timeout",
        "baseline_held",
    },
}
#: Reasons other operations answer besides the check route (shared with it, so not in ELSEWHERE).
ALSO: dict[str, set[str]] = {
    "PUT /v1/servers/{server_id}/baseline": {
        *("invalid_json", "body_incomplete", "body_too_large", "body_timeout", "unsupported_media_type"),
        *("payment_required", "payment_mismatch", "payment_invalid", "payment_already_used", "settlement_failed"),
        *("invalid_payment", "invalid_payment_identifier", "payment_identifier_conflict", "payment_in_use"),
        *("facilitator_unavailable", "facilitator_unsupported", "settlement_unknown", "signing_key_unavailable"),
        *("rate_limited", "client_lookups_busy", "resolver_busy", "shared_state_unavailable", *REFUSAL_REASONS),
        "starting",  # (every route answers it while the service is built: app.http.starting)
    },
    "POST /v1/admin/optout": {
        "invalid_json", "invalid_body", "body_too_large", "body_timeout", "body_incomplete", "unsupported_media_type",
    },
    "POST /v1/monitors": {
        *("invalid_json", "invalid_body", "body_incomplete", "body_too_large", "body_timeout"),
        "unsupported_media_type",
        *("payment_required", "payment_mismatch", "payment_invalid", "payment_already_used", "settlement_failed"),
        *("invalid_payment", "invalid_payment_identifier", "payment_identifier_conflict", "payment_in_use"),
        *("facilitator_unavailable", "facilitator_unsupported", "settlement_unknown", "signing_key_unavailable"),
        *("rate_limited", "client_lookups_busy", "resolver_busy", "shared_state_unavailable", *REFUSAL_REASONS),
    },
    "POST /v1/claims": {
        *("invalid_json", "invalid_body", "body_incomplete", "body_too_large", "body_timeout"),
        *("unsupported_media_type", "rate_limited", *REFUSAL_REASONS),
    },
    "POST /v1/claims/{claim_id}/verify": {"rate_limited", "client_lookups_busy", "resolver_busy", *REFUSAL_REASONS},
    "GET /v1/owner": {"rate_limited"},
    "GET /v1/owner/servers/{server_id}/credentialed-checks": {"rate_limited"},
    "PUT /v1/owner/sweeps": {
        *("invalid_json", "invalid_body", "body_incomplete", "body_too_large", "body_timeout"),
        *("unsupported_media_type", "rate_limited"),
    },
    "PUT /v1/owner/servers/{server_id}/profile": {
        *("invalid_json", "invalid_body", "body_incomplete", "body_too_large", "body_timeout"),
        *("unsupported_media_type", "rate_limited"),
    },
    "PUT /v1/owner/servers/{server_id}/baseline": {
        *("invalid_json", "body_incomplete", "body_too_large", "body_timeout", "unsupported_media_type"),
        "rate_limited",
    },
    "DELETE /v1/owner/servers/{server_id}/baseline": {"rate_limited"},
    "GET /v1/servers": {"rate_limited"},
    "GET /v1/monitors/{monitor_id}": {"rate_limited"},
    "DELETE /v1/monitors/{monitor_id}": {"rate_limited"},
    "GET /v1/monitors/{monitor_id}/deliveries": {"rate_limited"},
    "POST /v1/mcp/diff": {
        "rate_limited", "invalid_json", "invalid_body", "body_too_large", "body_timeout", "body_incomplete",
        "unsupported_media_type",
    },
}  # fmt: skip
#: Reasons the check route gives as well as the operations of ELSEWHERE.
SHARED_WITH_CHECK = frozenset({"history_unavailable", "baseline_not_found"})
#: Reasons only the router gives (an unknown path, a wrong method): no documented operation answers them.
ROUTER_ONLY = frozenset({"not_found", "method_not_allowed", "http_error"})
#: What only an MCP tool result carries (a call's arguments against the tool's input schema).
TOOL_ONLY = frozenset({"invalid_arguments"})
#: What BoundedBody answers on /mcp before the MCP transport sees the request.
MCP_BODY = frozenset({"body_too_large", "body_timeout", "body_incomplete", "unsupported_media_type"})


def resolve(node: Any) -> Any:
    """``node`` with its ``$ref`` (a local JSON pointer) followed, repeatedly."""
    while isinstance(node, dict) and "$ref" in node:
        target: Any = DOCUMENT
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


def operations() -> Iterator[tuple[str, dict[str, Any]]]:
    for path, item in DOCUMENT["paths"].items():
        for method in METHODS:
            if method in item:
                yield f"{method.upper()} {path}", item[method]


def responses() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for label, operation in operations():
        for status, response in operation["responses"].items():
            yield label, status, resolve(response)


def reason_statuses() -> dict[str, int]:
    """Every reason an error answer may carry and its status, from the code (and the pending ones)."""
    statuses = {reason: status for reason, (status, _meaning) in API_REASONS.items()}
    statuses |= dict.fromkeys(REFUSAL_REASONS, 422)
    for reason, (status, _operation) in PENDING.items():
        assert statuses.setdefault(reason, status) == status, f"{reason}: the code answers it with another status"
    return statuses


def expected_reasons() -> set[tuple[str, int, str]]:
    """(operation, status, reason) for every reason an operation may answer with, derived from the code."""
    statuses = reason_statuses()
    on: dict[str, set[str]] = {label: {"internal_error"} for label, _operation in operations()}
    elsewhere = {reason for reasons in ELSEWHERE.values() for reason in reasons}
    pending_elsewhere = {r for r, (_s, op) in PENDING.items() if op != CHECK}
    on[CHECK] = set(statuses) - ROUTER_ONLY - TOOL_ONLY - elsewhere - pending_elsewhere
    on[CHECK] |= SHARED_WITH_CHECK
    for label, reasons in ELSEWHERE.items():
        on[label] |= reasons
    for label, reasons in ALSO.items():
        assert reasons <= on[CHECK], f"{label}: ALSO lists reasons the check route does not give"
        on[label] |= reasons
    on["POST /mcp"] |= MCP_BODY
    on["GET /problems/{reason}"] |= {"not_found"}
    for reason, (_status, label) in PENDING.items():
        on[label].add(reason)
    return {(label, statuses[reason], reason) for label, reasons in on.items() for reason in reasons}


def documented_reasons(schema: Any) -> list[str] | None:
    """The reason enum of an error body's schema: a problem's ``reason`` or a 402 document's ``error``."""
    schema = resolve(schema)
    properties = schema.get("properties", {})
    for member in ("reason", "error"):
        enum = resolve(properties.get(member, {})).get("enum")
        if enum is not None:
            return list(enum)
    return None


def test_document_is_valid_openapi_3_1() -> None:
    assert DOCUMENT["openapi"].startswith("3.1")
    validate(DOCUMENT)


def test_no_flow_mapping_split_a_text_into_members() -> None:
    """An unquoted comma in a flow mapping (``{description: a, b}``) makes ``b`` a member of its own."""

    def members(node: Any, pointer: str) -> Iterator[tuple[str, str, Any]]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key not in ("example", "examples") and pointer != "/components":
                    yield pointer, key, value
                    yield from members(value, f"{pointer}/{key}")
                elif pointer == "/components" and key != "examples":
                    yield from members(value, f"{pointer}/{key}")
        elif isinstance(node, list):
            for value in node:
                yield from members(value, pointer)

    assert [(pointer, key) for pointer, key, value in members(DOCUMENT, "") if " " in key or value is None] == []


def test_every_error_response_lists_exactly_the_reasons_the_code_gives_it() -> None:
    documented: set[tuple[str, int, str]] = set()
    for label, status, response in responses():
        for media_type, content in response.get("content", {}).items():
            reasons = documented_reasons(content["schema"])
            if reasons is None or int(status) < 400:
                continue
            assert len(reasons) == len(set(reasons)), (label, status)
            assert media_type == ("application/json" if status == "402" else "application/problem+json")
            documented |= {(label, int(status), reason) for reason in reasons}
    assert documented - expected_reasons() == set(), "documented, but the code never answers so"
    assert expected_reasons() - documented == set(), "answered by the code, but not documented"


def test_every_error_body_pins_its_status() -> None:
    for label, status, response in responses():
        for media_type, content in response.get("content", {}).items():
            if media_type == "application/problem+json":
                assert resolve(resolve(content["schema"])["properties"]["status"]) == {"const": int(status)}, label


def test_the_reason_enums_cover_every_reason() -> None:
    assert set(SCHEMAS["ApiReason"]["enum"]) == set(reason_statuses())
    assert len(SCHEMAS["ApiReason"]["enum"]) == len(reason_statuses())
    assert SCHEMAS["Problem"]["properties"]["reason"] == {"$ref": "#/components/schemas/ApiReason"}
    refusal = SCHEMAS["Refusal"]["properties"]["reason"]["enum"]
    check = {reason for label, status, reason in expected_reasons() if label == CHECK and status == 422}
    assert set(refusal) == check
    unprocessable = {r for r, status in reason_statuses().items() if status == 422}
    assert unprocessable <= check | TOOL_ONLY | set().union(*ELSEWHERE.values())
    payment = SCHEMAS["PaymentRequired"]["properties"]["error"]["enum"]
    assert set(payment) == {r for r, status in reason_statuses().items() if status == 402}


def test_probe_status_and_reason_enums_and_which_reason_belongs_to_which_status() -> None:
    assert tuple(SCHEMAS["Status"]["enum"]) == STATUSES
    assert SCHEMAS["Reason"]["enum"] == list(REASONS)
    pairs: dict[str, list[str]] = {}
    for rule in SCHEMAS["ProbeResult"]["allOf"]:
        pairs[rule["if"]["properties"]["status"]["const"]] = rule["then"]["properties"]["reason"]["enum"]
    assert pairs == {s: [r for r, (status, _meaning) in REASONS.items() if status == s] for s in STATUSES}


def test_verdict_enums_follow_the_catalogue() -> None:
    document = catalogue().document
    assert SCHEMAS["CheckId"]["enum"] == [check["id"] for check in document["checks"]]
    assert SCHEMAS["VerdictState"]["enum"] == list(document["states"])
    assert SCHEMAS["UnverifiedReason"]["enum"] == list(document["unverified_reasons"])
    assert set(SCHEMAS["Catalogue"]["properties"]["states"]["properties"]) == set(document["states"])
    entry = SCHEMAS["CatalogueCheck"]
    assert set(entry["properties"]) == {key for check in document["checks"] for key in check}
    assert set(entry["properties"]["group"]["enum"]) == {check["group"] for check in document["checks"]}
    served = {"id": catalogue().suite_id, "catalogue_sha256": catalogue().sha256, "catalogue": document}
    validator(DOCUMENT_POINTER + "/components/schemas/CheckCatalogue").validate(served)


#: component schema -> the model whose JSON it describes
MODELS: dict[str, type[BaseModel]] = {
    "ProbeResult": ProbeResult,
    "ServerInfo": ServerInfo,
    "Timings": Timings,
    "ToolsInfo": ToolsInfo,
    "SessionInfo": SessionInfo,
    "AuthInfo": AuthInfo,
    "AuthChallenge": AuthChallenge,
    "ChallengeItem": ChallengeItem,
    "ProtectedResource": ProtectedResource,
    "MetadataLookup": MetadataLookup,
    "TlsInfo": TlsInfo,
    "CheckVerdict": CheckVerdict,
    "SuiteInfo": SuiteInfo,
    "CategoryInfo": CategoryInfo,
    "ToolDefinition": ToolDefinition,
    "CheckRequest": CheckRequest,
    "BaselineRequest": BaselineRequest,
    "BaselineComparison": BaselineComparison,
    "ToolListDiff": ToolListDiff,
    "ToolChange": ToolChange,
    "ToolHint": ToolHint,
    "ToolCounts": ToolCounts,
    "Finding": Finding,
    "Example": Example,
    "PaymentRequirements": PaymentRequirements,
    "X402ResourceInfo": ResourceInfo,
}
#: Results are serialised whole (no member left out), so their schemas require every member.
SERIALISED_WHOLE = set(MODELS) - {"CheckRequest", "BaselineRequest", "PaymentRequirements", "X402ResourceInfo"}


def properties_of(model: type[BaseModel]) -> set[str]:
    return set(model.model_json_schema(by_alias=True)["properties"])


@pytest.mark.parametrize("name", sorted(MODELS))
def test_component_schema_has_the_model_fields(name: str) -> None:
    schema = SCHEMAS[name]
    assert set(schema["properties"]) == properties_of(MODELS[name])
    assert set(schema.get("required", [])) <= set(schema["properties"])
    if name in SERIALISED_WHOLE:
        assert set(schema["required"]) == set(schema["properties"])
        assert name == "ProbeResult" or schema["additionalProperties"] is False  # every model forbids extras


def test_check_result_and_payment_required_have_the_model_fields() -> None:
    base, added = SCHEMAS["CheckResult"]["allOf"]
    assert base == {"$ref": "#/components/schemas/ProbeResult"}
    assert set(added["properties"]) | set(SCHEMAS["ProbeResult"]["properties"]) == properties_of(CheckAnswer)
    assert set(added["required"]) == set(added["properties"]) - {"tool_definitions"}  # only when asked for
    assert set(SCHEMAS["PaymentRequired"]["properties"]) == properties_of(PaymentRequired) | {"message"}


def test_every_nested_result_model_has_a_named_component() -> None:
    nested = set(CheckResult.model_json_schema(by_alias=True)["$defs"])
    assert nested <= set(MODELS), "name each nested model of the result in components/schemas"


def test_badge_states_and_headers_follow_the_code() -> None:
    results = [
        ProbeResult(url="https://x.example/", checked_at=datetime.now(UTC), status=s, reason=r)
        for r, (s, _m) in REASONS.items()
    ]
    states = {badge_cache.state_of(result).state for result in results}
    states |= {badge_cache.REFUSED.state, badge_cache.LIMITED.state, badge_cache.BUSY.state, badge_cache.aged(0).state}
    assert set(SCHEMAS["BadgeState"]["enum"]) == states
    assert states >= ERROR_STATES
    headers = DOCUMENT["components"]["headers"]
    assert headers["BadgeCsp"]["schema"]["const"] == CSP
    for state in (badge_cache.REFUSED, badge_cache.aged(0)):
        for not_modified in (False, True):
            status, raw, _body = answer(
                b"<svg/>", '"' + "0" * 32 + '"', "image/svg+xml", state, "Mon, 30 Nov 2026 08:52:33 GMT", not_modified
            )
            sent = {name.decode().lower() for name, _value in raw} - {"content-length", "content-type"}
            for label in ("GET /badge/mcp", "GET /badge/mcp.png", "GET /badge/mcp.json"):
                declared = resolve(dict(operations())[label]["responses"][str(status)])["headers"]
                assert sent | {"x-request-id"} == {name.lower() for name in declared}, (label, status)
                cache = dict(raw)[b"cache-control"].decode()
                assert cache in resolve(declared["Cache-Control"])["schema"]["enum"]


def declared_headers(response: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {name.lower(): resolve(header) for name, header in response.get("headers", {}).items()}


def test_every_answer_declares_the_request_id() -> None:
    for label, status, response in responses():
        assert response["headers"]["X-Request-Id"] == {"$ref": "#/components/headers/RequestId"}, (label, status)
    request_id = DOCUMENT["components"]["headers"]["RequestId"]
    assert request_id["required"] is False
    assert request_id["schema"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 128,
        "pattern": "^[A-Za-z0-9._:-]{1,128}$",
    }


def test_check_route_answers_declare_the_headers_the_code_sends() -> None:
    decision = Decision(allowed=True, limit=60, remaining=59, reset_s=42)
    always = {name.lower() for name in decision.headers()} | {"cache-control"}
    for label, status, response in responses():
        if label != CHECK:
            continue
        declared = declared_headers(response)
        assert always <= {name for name, header in declared.items() if header.get("required")}, status
    check = {status: declared_headers(response) for label, status, response in responses() if label == CHECK}
    refused = Decision(allowed=False, limit=60, remaining=0, reset_s=42).headers()
    assert {name.lower() for name in refused} <= {n for n, h in check["429"].items() if h.get("required")}
    assert {"payment-required"} <= {n for n, h in check["402"].items() if h.get("required")}
    # free_pool_exhausted: Retry-After and X-Free-Pool-Remaining; settlement_failed: PAYMENT-RESPONSE
    assert {"retry-after", "x-free-pool-remaining", "payment-response"} <= set(check["402"])
    assert "payment-required" in check["400"]  # invalid_payment
    assert "retry-after" in check["503"]  # resolver_busy, settlement_unknown
    served = Served(b"{}", pool_remaining=3).headers() | Served(b"{}").headers()
    assert {name.lower() for name in served} | {"payment-response"} <= set(check["200"])


def test_every_exposed_header_is_declared_somewhere() -> None:
    declared = {name for _label, _status, response in responses() for name in declared_headers(response)}
    assert {name.lower() for name in EXPOSED_HEADERS} <= declared


def test_tags_servers_license_and_contact() -> None:
    tags = {tag["name"]: tag["description"] for tag in DOCUMENT["tags"]}
    assert set(tags) == {
        *("checks", "badges", "mcp", "operations", "payments", "attestations", "history", "contract", "monitors"),
        "owners",
    }
    assert all(tags.values())
    for label, operation in operations():
        assert operation["tags"] and set(operation["tags"]) <= set(tags), label
    assert {tag for _label, operation in operations() for tag in operation["tags"]} == set(tags)
    assert DOCUMENT["info"]["license"] == {"name": "MIT", "identifier": "MIT"}
    assert DOCUMENT["info"]["contact"] == {"name": "mcp-sonde", "url": Settings.model_fields["info_url"].default}
    fields = Settings.model_fields
    assert [server["url"] for server in DOCUMENT["servers"]] == [
        f"http://{fields['host'].default}:{fields['port'].default}"  # what the service fills in when unset
    ]


# --- examples ----------------------------------------------------------------------------------

DOCUMENT_POINTER = "urn:mcp-sonde:openapi#"
REGISTRY: Registry[Any] = Registry().with_resource(
    DOCUMENT_POINTER.rstrip("#"), Resource.from_contents(DOCUMENT, default_specification=DRAFT202012)
)


def validator(pointer: str) -> Draft202012Validator:
    """A validator of the schema at ``pointer`` (its ``$ref`` resolve within the document)."""
    return Draft202012Validator(
        {"$ref": pointer}, registry=REGISTRY, format_checker=Draft202012Validator.FORMAT_CHECKER
    )


def escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def example_values(node: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """The ``example`` and every ``examples`` value of a media type, parameter or header object."""
    if "example" in node:
        yield "example", node["example"]
    for name, example in node.get("examples", {}).items():
        example = resolve(example)
        if "externalValue" not in example:
            yield name, example["value"]


def example_holders(node: Any, pointer: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every media type, parameter and header object of the document (the objects with a schema
    that carry examples), by JSON pointer; schemas and examples themselves are not searched."""
    if isinstance(node, dict):
        if "schema" in node:
            yield pointer, node
        for key, value in node.items():
            skipped = key in ("schema", "example", "examples") or (pointer == "/components" and key == "schemas")
            if not skipped:
                yield from example_holders(value, f"{pointer}/{escape(key)}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from example_holders(value, f"{pointer}/{index}")


HOLDERS = list(example_holders(DOCUMENT, ""))


def test_examples_are_found() -> None:
    pointers = [pointer for pointer, _holder in HOLDERS]
    assert "/paths/~1v1~1mcp~1check/post/requestBody/content/application~1json" in pointers
    assert "/components/headers/RequestId" in pointers
    assert "/components/responses/CheckRefused/content/application~1problem+json" in pointers
    assert len(pointers) > 60


@pytest.mark.parametrize(("pointer", "holder"), HOLDERS, ids=[pointer for pointer, _holder in HOLDERS])
def test_every_example_is_valid_against_its_schema(pointer: str, holder: dict[str, Any]) -> None:
    examples = list(example_values(holder))
    assert examples or holder.get("examples"), f"{pointer} has no example"
    check = validator(f"{DOCUMENT_POINTER}{pointer}/schema")
    for name, value in examples:
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in check.iter_errors(value)]
        assert errors == [], f"{pointer} {name}"


def test_every_response_with_a_body_and_every_request_body_has_examples() -> None:
    for label, status, response in responses():
        for media_type, content in response.get("content", {}).items():
            assert "example" in content or content.get("examples"), (label, status, media_type)
    for label, operation in operations():
        for media_type, content in operation.get("requestBody", {}).get("content", {}).items():
            assert content.get("examples"), (label, media_type)


def all_examples() -> Iterator[tuple[str, Any]]:
    for pointer, holder in HOLDERS:
        for _name, value in example_values(holder):
            yield pointer, value


def test_result_examples_are_what_the_models_serialise() -> None:
    results = [
        value
        for pointer, value in all_examples()
        if pointer.endswith("check/post/responses/200/content/application~1json")
    ]
    assert len(results) == 4
    for value in results:
        model = CheckAnswer.model_validate(value)  # the catalogue allows every verdict in it
        exclude = None if "tool_definitions" in value else {"tool_definitions"}
        assert model.model_dump(mode="json", exclude=exclude) == value
        assert value["links"] == answer_links("https://sonde.example.org", value["url"])


def test_problem_examples_say_what_the_code_says() -> None:
    statuses = reason_statuses()
    found = 0
    for _pointer, value in all_examples():
        if isinstance(value, dict) and {"type", "title", "status", "detail", "reason"} == set(value):
            found += 1
            reason = value["reason"]
            assert value["type"] == f"https://sonde.example/problems/{reason}"
            assert value["status"] == statuses[reason]
            if reason not in PENDING or reason in API_REASONS:
                assert value["title"] == title_of(reason)
    assert found >= 20


#: The deployment the payment examples describe.
PAID = Settings(pay_to="0x4E5b2e1dbc6F5F5D1e9C4a0F3C2E8aB7d6F1c0A9", public_url="https://sonde.example", redis_url=None)


def test_payment_examples_are_the_documents_the_code_builds() -> None:
    examples = DOCUMENT["components"]["examples"]
    for name, reason, settings in (
        ("PaymentRequired", "payment_required", PAID),
        ("FreePoolExhausted", "free_pool_exhausted", PAID.model_copy(update={"pay_to": None})),
    ):
        built = payment_required(settings, reason).model_dump(mode="json", by_alias=True, exclude_none=True)
        assert {k: v for k, v in examples[name]["value"].items() if k != "message"} == built, name
    for name, reason in (("PaymentRequiredHeader", "payment_required"), ("InvalidPaymentHeader", "invalid_payment")):
        built = payment_required(PAID, reason).model_dump(mode="json", by_alias=True, exclude_none=True)
        assert json.loads(base64.b64decode(examples[name]["value"], validate=True)) == built, name
    resource = payment_required(PAID, "-").model_dump(mode="json", by_alias=True, exclude_none=True)
    del resource["error"]
    assert examples["X402Discovery"]["value"] == {"x402Version": 2, "resources": [resource | {"method": "POST"}]}
    header = DOCUMENT["components"]["headers"]["PaymentResponse"]["example"]
    SettleResponse.model_validate(json.loads(base64.b64decode(header, validate=True)))


def test_the_baseline_402_example_is_the_document_the_code_builds() -> None:
    example = DOCUMENT["components"]["examples"]["BaselinePaymentRequired"]["value"]
    server_id = example["resource"]["url"].split("/")[-2]
    built = payment_required(PAID, "payment_required", resource(PAID, server_id))
    kept = {k: v for k, v in example.items() if k not in ("message", "host_proof")}
    assert kept == built.model_dump(mode="json", by_alias=True, exclude_none=True)
    proof = example["host_proof"]
    assert proof["document"] == proof_document(proof["token"]) and proof["header"]["name"] == PROOF_HEADER
    ApprovalRequest.model_validate(DOCUMENT["paths"]["/v1/servers/{server_id}/baseline"]["put"]["requestBody"]
                                   ["content"]["application/json"]["examples"]["run"]["value"])  # fmt: skip


def test_badge_examples_are_what_the_code_draws() -> None:
    live = badge_cache.BadgeState("ok", "live · checked 2026-11-30", "brightgreen")
    assert DOCUMENT["components"]["examples"]["BadgeSvg"]["value"] == svg_of(live, "flat")[0].decode()
    shields = DOCUMENT["paths"]["/badge/mcp.json"]["get"]["responses"]["200"]["content"]["application/json"]
    down = badge_cache.BadgeState("unreachable", "unreachable", "lightgrey")
    for name, state in (("ok", live), ("unreachable", down)):
        assert shields["examples"][name]["value"] == json.loads(json_of(state)[0]), name
