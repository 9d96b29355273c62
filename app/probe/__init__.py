"""The live MCP probe.

:func:`probe` checks one endpoint and returns a :class:`ProbeResult`; the status classes and
reason keys are in :mod:`app.probe.reasons`.
"""

from __future__ import annotations

from app.probe.reasons import REASONS, STATUSES, Status
from app.probe.result import ProbeResult, ServerInfo, SessionInfo, Timings, ToolsInfo
from app.probe.runner import ProbeFailed, client_info, probe, unresolved_result, user_agent

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
    "user_agent",
]
