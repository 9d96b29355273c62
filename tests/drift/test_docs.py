"""docs/drift.md says what the code does: its rule, reason and change tables and its bounds."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from app.drift import limits
from app.drift.rules import FAMILIES, OTHER_RULES, REASONS
from app.drift.tools import Change

DOC = (Path(__file__).resolve().parent.parent.parent / "docs" / "drift.md").read_text()


def _table(name: str) -> list[list[str]]:
    block = DOC.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
    rows = [line.strip().strip("|").split(" | ") for line in block.strip().splitlines()[2:]]
    return [[cell.strip() for cell in row] for row in rows]


def test_the_rules_table_is_the_catalogue() -> None:
    rows = _table("rules")
    assert [(tight, loose, covers) for tight, loose, covers in rows] == [
        (f"`{tight}`", f"`{loose}`", covers) for tight, loose, covers in FAMILIES.values()
    ]


def test_the_other_rules_and_the_reasons_are_the_catalogue() -> None:
    assert dict(_table("other")) == {f"`{key}`": meaning for key, meaning in OTHER_RULES.items()}
    assert dict(_table("reasons")) == {f"`{key}`": meaning for key, meaning in REASONS.items()}


def test_every_change_of_a_tool_is_described() -> None:
    for change in typing.get_args(Change):
        assert f"`{change}`" in DOC, change


def test_the_bounds_are_the_code_s() -> None:
    bounds = DOC.split("## Bounds", 1)[1]
    for value in (limits.MAX_NODES, limits.MAX_STEPS, limits.MAX_VALUES, limits.MAX_EXAMPLES):
        assert f"| {value:,} |" in bounds, value
    for value, unit in ((limits.MAX_SCHEMA_DEPTH, "levels"), (limits.MAX_BRANCHES, "")):
        assert re.search(rf"\| {value}( {unit})? \|", bounds), value
    assert f"| {limits.MAX_DEPTH} |" in bounds
