"""The live MCP probe.

:func:`probe` checks one endpoint and returns a :class:`ProbeResult`; the status classes and
reason keys are in :mod:`app.probe.reasons`. Names are loaded on first use (PEP 562), so a
caller that needs one submodule does not import the result models with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.probe.reasons import REASONS, STATUSES, Status
    from app.probe.result import ProbeResult, ServerInfo, SessionInfo, Timings, ToolsInfo
    from app.probe.runner import ProbeFailed, client_info, probe, unresolved_result

_WHERE = {
    "REASONS": "reasons",
    "STATUSES": "reasons",
    "Status": "reasons",
    "ProbeResult": "result",
    "ServerInfo": "result",
    "SessionInfo": "result",
    "Timings": "result",
    "ToolsInfo": "result",
    "ProbeFailed": "runner",
    "client_info": "runner",
    "probe": "runner",
    "unresolved_result": "runner",
}

__all__ = [
    "REASONS",
    "STATUSES",
    "ProbeFailed",
    "ProbeResult",
    "ServerInfo",
    "SessionInfo",
    "Status",
    "Timings",
    "ToolsInfo",
    "client_info",
    "probe",
    "unresolved_result",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'app.probe' has no attribute {name!r}")
    return getattr(importlib.import_module(f"app.probe.{module}"), name)
