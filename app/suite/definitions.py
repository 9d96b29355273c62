"""Tool definitions as a reader may see them: cleaned and capped copies of what was listed.

Policy: only ``name``, ``title``, ``description``, ``inputSchema``, ``outputSchema`` and
``annotations`` are kept (an allow-list: nothing else a server adds travels on). Strings pass
:func:`app.probe.text.clean_text`; schemas keep their structure to a depth of 12 with at most
256 members per object or array and strings of at most 1,024 characters; a description is cut
at 4,096 characters. The raw definitions, uncleaned, never leave the probe's evidence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.probe.text import clean_text
from app.suite.model import ToolDefinition

SCHEMA_DEPTH = 12
SCHEMA_ITEMS = 256
SCHEMA_STRING = 1024
DESCRIPTION = 4096


def clean_schema(value: Any, depth: int = 0) -> Any:
    """A bounded, cleaned copy of a JSON Schema (or any JSON value)."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return clean_text(value, SCHEMA_STRING)
    if depth >= SCHEMA_DEPTH:
        return {} if isinstance(value, dict) else None
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in list(value.items())[:SCHEMA_ITEMS]:
            name = clean_text(key, 128)
            if name:
                out[name] = clean_schema(item, depth + 1)
        return out
    if isinstance(value, list):
        return [clean_schema(item, depth + 1) for item in value[:SCHEMA_ITEMS]]
    return None


def definitions(entries: Sequence[Mapping[str, Any]]) -> list[ToolDefinition]:
    """The cleaned definitions of raw tool objects (each has a string ``name``)."""
    out: list[ToolDefinition] = []
    for entry in entries:
        annotations = clean_schema(entry.get("annotations"), SCHEMA_DEPTH - 2)
        out.append(
            ToolDefinition(
                name=clean_text(entry.get("name"), 128) or "",
                title=clean_text(entry.get("title"), 128),
                description=clean_text(entry.get("description"), DESCRIPTION),
                inputSchema=clean_schema(entry.get("inputSchema")),
                outputSchema=clean_schema(entry.get("outputSchema")),
                annotations=annotations if isinstance(annotations, dict) else None,
            )
        )
    return out
