"""Hostile schemas: each is answered within the bounds (a verdict, never a hang or a RecursionError),
and the time it takes is printed. The bound asserted is loose (shared CI machines); the figures
measured on a quiet machine are in docs/drift.md."""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from app.drift import admits, classify
from app.drift.limits import MAX_DEPTH, MAX_NODES, MAX_SCHEMA_DEPTH, Budget, Exhausted, measure
from app.drift.model import SchemaDiff

#: Generous enough for a loaded CI worker; on a quiet machine each case takes 0.1 to 15 ms.
LIMIT_S = 0.25


def _nested(levels: int, leaf: dict[str, Any]) -> dict[str, Any]:
    schema = leaf
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def _reference_diamonds(levels: int, keyword: str) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {keyword: [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}", "minLength": i}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def _member_diamonds(levels: int, leaf: str) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"d{i}": {
            "type": "object",
            "properties": {"x": {"$ref": f"#/$defs/d{i + 1}"}, "y": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": leaf}
    return {"$defs": defs, "$ref": "#/$defs/d0"}


def _alternatives(count: int, keyword: str) -> dict[str, Any]:
    return {
        keyword: [
            {"type": "object", "properties": {f"k{j}": {"type": "string"} for j in range(8)}, "required": [f"k{i % 8}"]}
            for i in range(count)
        ]
    }


def _discriminated(count: int) -> list[dict[str, Any]]:
    return [
        {"type": "object", "properties": {"kind": {"const": f"k{i}"}, "v": {"type": "string"}}, "required": ["kind"]}
        for i in range(count)
    ]


#: name -> (old, new, expected verdict, expected reason or None)
CASES: dict[str, tuple[Any, Any, str, str | None]] = {
    "nested 10,000 levels": (_nested(10_000, {"type": "string"}), {"type": "object"}, "unknown", "too_deep"),
    "nested past the instance depth": (
        _nested(MAX_DEPTH + 6, {"type": "number"}),
        _nested(MAX_DEPTH + 6, {"type": "integer"}),
        "unknown",
        "too_deep",
    ),
    "nested within the instance depth": (
        _nested(MAX_DEPTH - 2, {"type": "number"}),
        _nested(MAX_DEPTH - 2, {"type": "integer"}),
        "breaking",
        None,
    ),
    "more values than the bound": (
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(MAX_NODES)}},
        {"type": "object"},
        "unknown",
        "too_large",
    ),
    "200 members narrowed": (
        {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(200)}},
        {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(200)}},
        "breaking",
        None,
    ),
    "allOf diamonds of references, 40 levels": (
        _reference_diamonds(40, "allOf"),
        {"type": "string"},
        "compatible",
        None,
    ),
    "anyOf diamonds of references, 40 levels": (
        {"type": "string", "maxLength": 3},
        _reference_diamonds(40, "anyOf"),
        "unknown",
        "too_large",
    ),
    "member diamonds of references, 40 levels": (
        _member_diamonds(40, "string"),
        _member_diamonds(40, "integer"),
        "unknown",
        "too_deep",
    ),
    "anyOf product of 4^10 alternatives": (
        {"allOf": [{"anyOf": [{"minLength": i}, {"maxLength": i + 9}, {"type": "string"}, {}]} for i in range(10)]},
        {"type": "string"},
        "unknown",
        "too_large",
    ),
    "enum of 1,900 values": (
        {"enum": [f"v{i}" for i in range(1900)]},
        {"enum": [f"v{i}" for i in range(1899)]},
        "unknown",
        "too_large",
    ),
    "enum of 250 values, one dropped": (
        {"enum": [f"v{i}" for i in range(250)]},
        {"enum": [f"v{i}" for i in range(249)]},
        "breaking",
        None,
    ),
    "catastrophic pattern": ({"type": "string"}, {"type": "string", "pattern": "^(a|aa)*$"}, "unknown", None),
    "self reference": ({"$ref": "#"}, {"type": "string"}, "unknown", "ref_cycle"),
    "30 overlapping anyOf branches, one dropped": (
        _alternatives(30, "anyOf"),
        {"anyOf": _alternatives(30, "anyOf")["anyOf"][:-1]},
        "compatible",
        None,
    ),
    "30 overlapping oneOf branches, one added": (
        _alternatives(30, "oneOf"),
        {"oneOf": [*_alternatives(30, "oneOf")["oneOf"], {"type": "object", "required": ["z"]}]},
        "unknown",
        None,
    ),
    "40 discriminated oneOf branches, one added": (
        {"oneOf": _discriminated(40)},
        {"oneOf": _discriminated(41)},
        "compatible",
        None,
    ),
}


def _timed(run: Callable[[], SchemaDiff]) -> tuple[SchemaDiff, float]:
    best, diff = float("inf"), None
    for _ in range(3):
        start = time.perf_counter()
        diff = run()
        best = min(best, time.perf_counter() - start)
    assert diff is not None
    return diff, best


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_schema_is_answered_within_the_bounds(name: str) -> None:
    old, new, verdict, reason = CASES[name]
    diff, seconds = _timed(lambda: classify(old, new))
    print(f"{name}: {diff.verdict} {diff.reasons} in {seconds * 1000:.1f} ms")
    assert diff.verdict == verdict, diff.findings[:3]
    assert reason is None or reason in diff.reasons
    assert seconds < LIMIT_S
    assert admits(new, old).answer in ("yes", "no", "unknown")


def test_measure_counts_values_and_depth_without_recursion() -> None:
    assert measure({"type": "string"}) is None
    assert measure(_nested(MAX_SCHEMA_DEPTH // 2 - 1, {})) is None
    assert measure(_nested(MAX_SCHEMA_DEPTH, {})) == "too_deep"
    assert measure([0] * MAX_NODES) == "too_large"
    assert measure(list(range(MAX_NODES - 1))) is None
    shared: dict[str, Any] = {"type": "string"}
    for _ in range(20):  # a DAG: 2**20 paths, counted until the bound
        shared = {"anyOf": [shared, shared]}
    assert measure(shared) == "too_large"


def test_shared_subtrees_are_refused_before_they_are_walked() -> None:
    shared: dict[str, Any] = {"type": "string"}
    for _ in range(40):
        shared = {"anyOf": [shared, shared]}
    diff, seconds = _timed(lambda: classify(shared, {"type": "string"}))
    assert diff.verdict == "unknown" and seconds < LIMIT_S


def test_an_exhausted_budget_keeps_the_breaks_shown_before() -> None:
    heavy = _reference_diamonds(40, "anyOf")
    old = {"type": "object", "properties": {"a": {"type": "number"}, "z": {"type": "string", "maxLength": 3}}}
    new = {
        "$defs": heavy["$defs"],
        "type": "object",
        "properties": {"a": {"type": "integer"}, "z": {"$ref": "#/$defs/d0"}},
    }
    diff = classify(old, new)
    assert diff.verdict == "breaking"
    assert any(f.rule == "type_narrowed" and f.example is not None for f in diff.findings)
    assert "too_large" in diff.reasons


def test_the_budget_is_spent_in_steps() -> None:
    budget = Budget(steps=2)
    budget.spend()
    budget.spend()
    with pytest.raises(Exhausted) as caught:
        budget.spend()
    assert caught.value.reason == "too_large"


def test_a_low_recursion_limit_gives_an_answer_not_a_crash() -> None:
    old, new = _nested(MAX_DEPTH - 2, {"type": "number"}), _nested(MAX_DEPTH - 2, {"type": "integer"})
    frames, frame = 0, sys._getframe()
    while frame.f_back is not None:
        frames, frame = frames + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(frames + 60)  # far fewer frames than 22 levels need
    try:
        starved = classify(old, new)
    finally:
        sys.setrecursionlimit(limit)
    assert (starved.verdict, starved.reasons) == ("unknown", ["too_deep"])
    assert classify(old, new).verdict == "breaking"
    assert classify(old, copy.deepcopy(old)).verdict == "unchanged"
