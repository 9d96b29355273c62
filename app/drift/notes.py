"""Findings as the comparison collects them, and where in an instance a comparison stands."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from app.drift.branches import Branch
from app.drift.rules import FindingVerdict


@dataclass(slots=True)
class Note:
    """One finding, before it becomes an API model."""

    pointer: str
    verdict: FindingVerdict
    rule: str
    old: Any = None
    new: Any = None
    example: tuple[Any] | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Place:
    """Where a comparison is: its depth, how to embed a local value in a whole example, and
    the first reason (if any) why an unchecked failure here may not be a break."""

    depth: int
    embed: Callable[[Any], Any] | None
    caution: str | None = None


def answer(notes: Iterable[Note]) -> Literal["yes", "no", "unknown"]:
    """``no`` if a note is breaking, ``unknown`` if one is unknown, else ``yes``."""
    verdicts = {note.verdict for note in notes}
    return "no" if "breaking" in verdicts else "unknown" if "unknown" in verdicts else "yes"


def brief(value: Any) -> Any:
    """A value short enough for a finding (long strings cut, large containers summarised)."""
    if isinstance(value, str):
        return value if len(value) <= 200 else value[:200] + "\u2026"
    if isinstance(value, dict | list):
        text = repr(value)
        if len(text) > 300:
            return f"<{'object' if isinstance(value, dict) else 'array'} of {len(value)}>"
    return value


def caution(place: Place, branch: Branch) -> str | None:
    """Why an unchecked failure below ``branch`` may not be a break, if anything says so."""
    if place.caution:
        return place.caution
    if branch.opaque:
        return branch.opaque[0].reason
    return "one_of_exclusive" if branch.exclusive() else None


def unique(notes: list[Note]) -> list[Note]:
    """One note per pointer, rule and verdict (the first, or the first with an example)."""
    kept: dict[tuple[str, str, str], Note] = {}
    for note in notes:
        key = (note.pointer, note.rule, note.verdict)
        if key not in kept or (kept[key].example is None and note.example is not None):
            kept[key] = note
    return list(kept.values())
