"""Drift between two versions of a tool list: what a change does to the clients of a tool.

:func:`classify` judges a change of one JSON Schema (a tool's ``inputSchema`` or
``outputSchema``), :func:`admits` is the subsumption check beneath it, and :func:`diff_tools`
compares two tool lists tool by tool (:mod:`app.drift.tools`). The rules, verdicts and reason
keys are data (:mod:`app.drift.rules`) and documented in ``docs/drift.md``. Pure functions of
their arguments: nothing here opens a socket or reads a file, and nothing imports the service.
"""

from __future__ import annotations

from app.drift.model import Admission, Example, Finding, SchemaDiff
from app.drift.schema import admits, classify
from app.drift.tools import ToolChange, ToolCounts, ToolHint, ToolListDiff, diff_tools

__all__ = [
    "Admission",
    "Example",
    "Finding",
    "SchemaDiff",
    "ToolChange",
    "ToolCounts",
    "ToolHint",
    "ToolListDiff",
    "admits",
    "classify",
    "diff_tools",
]
