"""The difference between two tool lists, tool by tool, with what each change does to clients.

Policy:

- Tools are matched by name (Unicode NFC; the first of two tools with one name counts). A tool
  only in the new list is ``added`` (compatible); one only in the old list is ``removed``
  (breaking: a call to it now fails).
- A removed and an added tool whose canonical ``inputSchema`` is the same, and shared by no
  other removed or added tool, are a likely rename: still reported as ``removed`` and ``added``
  (an old call by the old name fails all the same), with the hints ``renamed_to`` and
  ``renamed_from``.
- ``description`` changed is compatible; it is marked ``dynamic`` when the two texts differ only
  in digits and whitespace (a counter, a date, a version, re-wrapped text), so a monitor can
  ignore it. ``title`` and ``annotations`` changed are compatible (annotations are hints, MCP
  2025-06-18 "Tool annotations"), with one finding per annotation changed.
- ``inputSchema`` changed is judged as an input (would an old call still be accepted:
  ``admits(new, old)``); ``outputSchema`` changed as an output (may a new result fail the old
  schema a client validates with: ``admits(old, new)``). An output schema added is compatible
  (nothing was promised), one removed is breaking (structured results are no longer promised).
- The list's verdict: ``unchanged`` without changes, else ``breaking`` if any change is,
  ``unknown`` if any is (and none breaks), ``compatible`` otherwise.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.canonical import CanonicalFormError, nfc, sha256_hex
from app.drift.limits import LIST_SECONDS
from app.drift.model import Direction, Finding, Reading
from app.drift.notes import brief
from app.drift.rules import FindingVerdict, Verdict
from app.drift.schema import classify

Change = Literal[
    "added",
    "removed",
    "description_changed",
    "title_changed",
    "annotations_changed",
    "input_schema_changed",
    "output_schema_changed",
]
#: The verdict of each change that is not judged by a schema comparison.
VERDICTS: dict[str, FindingVerdict] = {
    "added": "compatible",
    "removed": "breaking",
    "description_changed": "compatible",
    "title_changed": "compatible",
    "annotations_changed": "compatible",
}
#: The texts of a tool and the change each makes.
TEXTS: tuple[tuple[str, Change], ...] = (("description", "description_changed"), ("title", "title_changed"))
#: The schemas of a tool, the change each makes and the direction it is judged in.
SCHEMAS: tuple[tuple[str, Change, Direction], ...] = (
    ("inputSchema", "input_schema_changed", "input"),
    ("outputSchema", "output_schema_changed", "output"),
)
_DYNAMIC = re.compile(r"[\d\s]+")


class ToolHint(BaseModel):
    """What else is known about a change."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    renamed_from: str | None = Field(
        default=None, description="An added tool with the input schema of this removed one."
    )
    renamed_to: str | None = Field(default=None, description="The removed tool whose input schema this added one has.")
    dynamic: bool = Field(default=False, description="The description changed only in digits and whitespace.")


class ToolChange(BaseModel):
    """One change of one tool."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    change: Change
    verdict: FindingVerdict
    findings: list[Finding] = Field(default_factory=list)
    hint: ToolHint | None = None


class ToolCounts(BaseModel):
    """How many tools each list has and what happened to them."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    before: int
    after: int
    added: int
    removed: int
    renamed: int
    changed: int
    unchanged: int


class ToolListDiff(BaseModel):
    """The difference between two tool lists."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    verdict: Verdict
    tools: list[ToolChange] = Field(default_factory=list)
    counts: ToolCounts


def _plain(tool: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    if isinstance(tool, BaseModel):
        return tool.model_dump(by_alias=True)
    return dict(tool)


def _by_name(tools: Sequence[Mapping[str, Any] | BaseModel]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for tool in tools:
        entry = _plain(tool)
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        try:
            key = nfc(name)
        except CanonicalFormError:
            key = name
        out.setdefault(key, entry)
    return out


def _digest(schema: Any) -> str | None:
    try:
        return sha256_hex({} if schema is None else schema)
    except CanonicalFormError:
        return None


def _renames(removed: dict[str, dict[str, Any]], added: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Old name -> new name for removed and added tools paired by a unique input schema."""
    gone: dict[str, list[str]] = {}
    came: dict[str, list[str]] = {}
    for names, tools in ((gone, removed), (came, added)):
        for name, tool in tools.items():
            digest = _digest(tool.get("inputSchema"))
            if digest is not None:
                names.setdefault(digest, []).append(name)
    return {old[0]: came[digest][0] for digest, old in gone.items() if len(old) == 1 and len(came.get(digest, [])) == 1}


def dynamic(old: str | None, new: str | None) -> bool:
    """Whether two descriptions differ only in digits and whitespace."""
    return old is not None and new is not None and _DYNAMIC.sub("", old) == _DYNAMIC.sub("", new)


def _texts(name: str, old: dict[str, Any], new: dict[str, Any]) -> list[ToolChange]:
    out: list[ToolChange] = []
    for field, change in TEXTS:
        before, after = old.get(field), new.get(field)
        if before != after:
            finding = Finding(
                pointer=f"/{field}", verdict="compatible", rule=change, old=brief(before), new=brief(after)
            )
            hint = ToolHint(dynamic=True) if field == "description" and dynamic(before, after) else None
            verdict = VERDICTS[change]
            out.append(ToolChange(name=name, change=change, verdict=verdict, findings=[finding], hint=hint))
    before, after = old.get("annotations") or {}, new.get("annotations") or {}
    if isinstance(before, dict) and isinstance(after, dict) and before != after:
        findings = [
            Finding(
                pointer=f"/annotations/{key}",
                verdict="compatible",
                rule="annotation_changed",
                old=brief(before.get(key)),
                new=brief(after.get(key)),
            )
            for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)
        ]
        verdict = VERDICTS["annotations_changed"]
        out.append(ToolChange(name=name, change="annotations_changed", verdict=verdict, findings=findings))
    return out


def _schemas(
    name: str, old: dict[str, Any], new: dict[str, Any], reading: Reading, late: bool = False
) -> list[ToolChange]:
    out: list[ToolChange] = []
    for field, change, direction in SCHEMAS:
        if late:  # past the list's bound: a schema that changed is left unjudged
            if _digest(old.get(field)) != _digest(new.get(field)) or _digest(old.get(field)) is None:
                reason = "list_too_large"
                finding = Finding(pointer=f"/{field}", verdict="unknown", rule=reason, reason=reason)
                out.append(ToolChange(name=name, change=change, verdict="unknown", findings=[finding]))
            continue
        diff = classify(old.get(field), new.get(field), direction=direction, reading=reading)
        if diff.verdict != "unchanged":
            out.append(ToolChange(name=name, change=change, verdict=diff.verdict, findings=diff.findings))
    return out


def diff_tools(
    old: Sequence[Mapping[str, Any] | BaseModel],
    new: Sequence[Mapping[str, Any] | BaseModel],
    *,
    reading: Reading = "declared",
    seconds: float = LIST_SECONDS,
) -> ToolListDiff:
    """The tool-by-tool difference from ``old`` to ``new`` (``tools/list`` entries or
    :class:`~app.suite.model.ToolDefinition` objects); schema comparisons stop after ``seconds``
    (those left are ``unknown``, ``list_too_large``)."""
    deadline = time.monotonic() + seconds
    before, after = _by_name(old), _by_name(new)
    removed = {name: tool for name, tool in before.items() if name not in after}
    added = {name: tool for name, tool in after.items() if name not in before}
    renames = _renames(removed, added)
    origins = {new_name: old_name for old_name, new_name in renames.items()}
    changes: list[ToolChange] = []
    changed = 0
    for name in sorted(set(before) | set(after)):
        if name in removed:
            hint = ToolHint(renamed_to=renames[name]) if name in renames else None
            changes.append(ToolChange(name=name, change="removed", verdict=VERDICTS["removed"], hint=hint))
        elif name in added:
            hint = ToolHint(renamed_from=origins[name]) if name in origins else None
            changes.append(ToolChange(name=name, change="added", verdict=VERDICTS["added"], hint=hint))
        else:
            late = time.monotonic() > deadline
            own = _texts(name, before[name], after[name]) + _schemas(name, before[name], after[name], reading, late)
            changed += bool(own)
            changes.extend(own)
    verdicts = {change.verdict for change in changes}
    verdict: Verdict = (
        "unchanged"
        if not changes
        else "breaking"
        if "breaking" in verdicts
        else "unknown"
        if "unknown" in verdicts
        else "compatible"
    )
    counts = ToolCounts(
        before=len(before),
        after=len(after),
        added=len(added),
        removed=len(removed),
        renamed=len(renames),
        changed=changed,
        unchanged=len(before) - len(removed) - changed,
    )
    return ToolListDiff(verdict=verdict, tools=changes, counts=counts)
