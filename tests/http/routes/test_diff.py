"""``POST /v1/mcp/diff`` through the running app: the drift table's pairs answer what
:func:`app.drift.diff_tools` says, the caps (body, tools per list, time, slots) and the rate
limit hold with stable reasons, and every answer carries the client's budget and ``no-store``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import yaml

from app.drift import diff_tools
from app.http import create_app
from app.settings import Settings
from app.suite.fingerprint import fingerprints
from tests.conftest import Service, reason_of
from tests.servers.uvicorn_thread import serve

PAIRS = Path(__file__).resolve().parents[2] / "data" / "drift" / "schema_pairs.yaml"


def _json(case: dict[str, Any]) -> bool:
    try:
        json.dumps([case["old"], case["new"]], allow_nan=False)
    except ValueError:
        return False
    return True


#: The pairs JSON can carry (a few hold infinities, which a JSON body cannot).
CASES: list[dict[str, Any]] = [case for case in yaml.safe_load(PAIRS.read_text()) if _json(case)]
RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-policy", "ratelimit")


def post(base: str, body: Any, **options: Any) -> httpx2.Response:
    if isinstance(body, bytes | str):
        headers = {"Content-Type": "application/json"} | options.pop("headers", {})
        return httpx2.post(f"{base}/v1/mcp/diff", content=body, headers=headers, timeout=30, **options)
    return httpx2.post(f"{base}/v1/mcp/diff", json=body, timeout=30, **options)


def assert_budget_and_no_store(response: httpx2.Response) -> None:
    assert response.headers["cache-control"] == "no-store", response.status_code
    for name in RATE_HEADERS:
        assert name in response.headers, (name, response.status_code)
    assert response.headers["ratelimit-policy"].startswith('"diff";')


def table_lists() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One tool per pair of the drift table, its old and new schema as the input (or output) schema."""
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    for case in CASES:
        member = "outputSchema" if case.get("direction") == "output" else "inputSchema"
        old, new = {"name": case["id"]}, {"name": case["id"]}
        if case["old"] is not None:
            old[member] = case["old"]
        if case["new"] is not None:
            new[member] = case["new"]
        before.append(old)
        after.append(new)
    return before, after


def test_the_drift_table_through_the_route_is_diff_tools(service: Service) -> None:
    before, after = table_lists()
    assert all(isinstance(t.get("inputSchema", t.get("outputSchema", {})), dict | bool) for t in before + after)
    with service() as base:
        answer = post(base, {"before": before, "after": after})
    assert answer.status_code == 200, answer.text
    assert_budget_and_no_store(answer)
    body = answer.json()
    printed = body.pop("fingerprints")
    assert body == diff_tools(before, after).model_dump(mode="json")
    assert body["counts"]["before"] == len(CASES) and body["verdict"] == "breaking"
    by_name = {change["name"]: change["verdict"] for change in body["tools"]}
    for case in CASES:
        if case["verdict"] != "unchanged" and case.get("reading") != "strict":
            assert by_name[case["id"]] == case["verdict"], case["id"]
    for side, tools in (("before", before), ("after", after)):
        found = fingerprints(tools)
        assert printed[side] == {"schema_fingerprint": found.schema, "toolset_fingerprint": found.toolset}


def test_the_documented_example_and_the_same_list_twice(service: Service) -> None:
    document = yaml.safe_load((Path(__file__).resolve().parents[3] / "app" / "http" / "openapi.yaml").read_text())
    operation = document["paths"]["/v1/mcp/diff"]["post"]
    request = operation["requestBody"]["content"]["application/json"]["examples"]["three_tools"]["value"]
    shown = operation["responses"]["200"]["content"]["application/json"]["examples"]["breaking"]["value"]
    with service() as base:
        answer = post(base, request)
        same = post(base, {"before": request["before"], "after": request["before"]})
    assert answer.json() == shown
    assert same.json()["verdict"] == "unchanged" and same.json()["tools"] == []
    assert same.json()["fingerprints"]["before"] == same.json()["fingerprints"]["after"]


def test_a_body_over_the_cap_is_413(service: Service) -> None:
    tools = [{"name": f"t{i}", "description": "x" * 200} for i in range(20)]
    with service(diff_max_body_bytes=2048) as base:
        declared = post(base, {"before": tools, "after": []})
        streamed = httpx2.post(  # no Content-Length: counted as it arrives
            f"{base}/v1/mcp/diff",
            content=iter([json.dumps({"before": tools, "after": []}).encode()]),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        within = post(base, {"before": tools[:2], "after": tools[:1]})
    for response in (declared, streamed):
        assert (response.status_code, reason_of(response)) == (413, "body_too_large")
        assert_budget_and_no_store(response)
    assert within.status_code == 200 and within.json()["counts"]["removed"] == 1


def test_2000_tools_a_list_are_taken_and_2001_refused(service: Service) -> None:
    tools = [{"name": f"tool_{i}", "inputSchema": {"type": "object"}} for i in range(2001)]
    with service() as base:
        full = post(base, {"before": tools[:2000], "after": tools[:2000]})
        over = post(base, {"before": tools[:1], "after": tools})
    assert full.status_code == 200 and full.json()["counts"]["unchanged"] == 2000
    assert (over.status_code, reason_of(over)) == (422, "too_many_tools")
    assert "after has 2,001 tools" in over.json()["detail"]
    assert_budget_and_no_store(over)


ODD: dict[str, tuple[Any, str, str]] = {
    "a tool that is not an object": ({"before": [{"name": "a"}, "b"], "after": []}, "invalid_tools", "/before/1:"),
    "a tool without a name": ({"before": [], "after": [{"description": "x"}]}, "invalid_tools", "/after/0/name:"),
    "an empty name": ({"before": [{"name": ""}], "after": []}, "invalid_tools", "/before/0/name:"),
    "a name that is a number": ({"before": [{"name": 7}], "after": []}, "invalid_tools", "/before/0/name:"),
    "a name twice after NFC": (
        {"before": [], "after": [{"name": "caf\u00e9"}, {"name": "cafe\u0301"}]},
        "invalid_tools",
        "/after/1/name: the name of /after/0 again",
    ),
    "a name with a lone surrogate": (
        '{"before": [{"name": "a\\ud800"}], "after": []}',
        "invalid_tools",
        "lone_surrogate",
    ),
    "a schema that is a string": (
        {"before": [{"name": "a", "inputSchema": "object"}], "after": []},
        "invalid_tools",
        "/before/0/inputSchema:",
    ),
    "annotations that are a list": (
        {"before": [], "after": [{"name": "a", "annotations": []}]},
        "invalid_tools",
        "/after/0/annotations:",
    ),
    "a description that is an object": (
        {"before": [{"name": "a", "description": {}}], "after": []},
        "invalid_tools",
        "/before/0/description:",
    ),
    "a list that is an object": ({"before": {}, "after": []}, "invalid_body", "before is not an array"),
    "a member missing": ({"before": []}, "invalid_body", '{"before"'),
    "a member more": ({"before": [], "after": [], "url": "x"}, "invalid_body", '{"before"'),
    "an array body": ([], "invalid_body", '{"before"'),
    "a key twice": ('{"before": [], "after": [], "after": []}', "invalid_body", "twice"),
    "a key twice in a tool": ('{"before": [{"name": "a", "name": "b"}], "after": []}', "invalid_body", "twice"),
}


@pytest.mark.parametrize("case", list(ODD))
def test_odd_input_is_422_with_a_stable_reason_and_a_pointer(service: Service, case: str) -> None:
    body, reason, said = ODD[case]
    with service() as base:
        response = post(base, body)
    assert (response.status_code, reason_of(response)) == (422, reason), response.text
    assert said in response.json()["detail"]
    assert_budget_and_no_store(response)


def test_extra_members_of_a_tool_take_no_part(service: Service) -> None:
    with service() as base:
        answer = post(base, {"before": [{"name": "a", "_meta": {"x": 1}}], "after": [{"name": "a", "icons": []}]})
    assert answer.status_code == 200 and answer.json()["verdict"] == "unchanged"


def test_not_json_and_not_application_json(service: Service) -> None:
    with service() as base:
        broken = post(base, b'{"before": [')
        typed = post(base, b"{}", headers={"Content-Type": "text/plain"})
    assert (broken.status_code, reason_of(broken)) == (400, "invalid_json")
    assert (typed.status_code, reason_of(typed)) == (415, "unsupported_media_type")
    for response in (broken, typed):
        assert_budget_and_no_store(response)


def test_its_own_rate_limit_gives_429_with_retry_after(service: Service) -> None:
    body: dict[str, Any] = {"before": [], "after": []}
    with service(diff_rate_limit="2/minute", rate_limit="5/minute") as base:
        answers = [post(base, body) for _ in range(3)]
        check = httpx2.post(f"{base}/v1/mcp/check", json={"url": "https://mcp.example.com/{x}"}, timeout=10)
    assert [a.status_code for a in answers] == [200, 200, 429]
    limited = answers[-1]
    assert reason_of(limited) == "rate_limited"
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert limited.headers["ratelimit-policy"] == '"diff";q=2;w=60'
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == ["1", "0", "0"]
    assert_budget_and_no_store(limited)
    assert check.status_code == 422  # the check route's budget is its own
    assert check.headers["x-ratelimit-remaining"] == "4" and check.headers["ratelimit-policy"] == '"check";q=5;w=60'


def costly_body(tools: int = 400) -> dict[str, Any]:
    """Tools whose schemas each spend their whole step budget (the costliest per byte found)."""
    heavy = {"allOf": [{"anyOf": [{"minLength": 1}, {}]} for _ in range(12)]}
    light = {"type": "string"}
    before = [{"name": f"t{i}", "inputSchema": heavy, "outputSchema": light} for i in range(tools)]
    after = [{"name": f"t{i}", "inputSchema": light, "outputSchema": heavy} for i in range(tools)]
    return {"before": before, "after": after}


def past_the_limit(answer: dict[str, Any]) -> list[str]:
    """The tools whose schema comparison the time limit left undone."""
    return [
        change["name"]
        for change in answer["tools"]
        if change["verdict"] == "unknown" and [f["reason"] for f in change["findings"]] == ["list_too_large"]
    ]


def test_comparisons_past_the_time_limit_are_unknown_and_the_answer_comes(service: Service) -> None:
    body = costly_body()
    # (the whole list takes about 5 s here; a budget of 0.3 s left none judged on a slow moment)
    with service(diff_timeout_s=1.0) as base:
        response = post(base, body)
        after = post(base, {"before": [], "after": []})  # the slot was given back
    assert response.status_code == 200, response.text
    assert_budget_and_no_store(response)
    answer = response.json()
    left = past_the_limit(answer)
    assert 0 < len(left) < 2 * len(body["before"])  # some were judged, the rest left unjudged
    assert answer["verdict"] == "unknown" and answer["counts"]["changed"] == len(body["before"])
    assert after.status_code == 200


class Taken:
    """A slot limiter whose slots are all taken."""

    async def acquire(self) -> None:
        await anyio.sleep_forever()

    def release(self) -> None:
        raise AssertionError("never acquired")


@contextmanager
def app_with(**overrides: Any) -> Iterator[tuple[str, Any]]:
    app = create_app(Settings(allow_private=True, redis_url=None, **overrides))
    with serve(app, proxy_headers=False) as port:
        yield f"http://127.0.0.1:{port}", app


def test_no_free_slot_within_the_time_limit_is_503_diff_busy() -> None:
    with app_with(diff_timeout_s=0.2) as (base, app):
        app.state.services.diff_slots = Taken()
        response = post(base, {"before": [], "after": []})
    assert (response.status_code, reason_of(response)) == (503, "diff_busy")
    assert response.headers["retry-after"] == "1"
    assert_budget_and_no_store(response)


def test_the_costliest_body_within_the_caps_is_bounded_by_the_time_limit(service: Service) -> None:
    """1 MiB of the costliest tools found: about 27 s of comparison unbounded; answered at the limit."""
    body = costly_body(1100)
    raw = json.dumps(body, separators=(",", ":")).encode()
    assert len(raw) <= 1_048_576
    with service(diff_timeout_s=0.5) as base:
        response = post(base, raw)
        quick = post(base, {"before": [], "after": []})
    # bounded by the time limit: the tools past it are left unjudged (what it costs is a bench's
    # question, not a test's: timing assertions fail on a loaded machine)
    assert response.status_code == 200 and past_the_limit(response.json())
    assert quick.status_code == 200
