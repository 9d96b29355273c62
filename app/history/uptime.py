"""What one run says of a server's uptime, and a day's state from its runs.

A run is ``up`` when it reached the server and got an answer about MCP (``ok``, and every
answer that is not a network failure: ``not_found``, ``client_error``, ``not_mcp``,
``redirect``); ``gated`` when the server asked for credentials (``auth``: counted as up, and
said so); ``down`` when the server was not there to answer: ``dns`` (the name does not
resolve), ``unreachable``, ``timeout``, ``tls``, or a 5xx at the handshake (``server_error``);
``left_out`` when only our own limits or a 429 stopped the run (our resolver gave no definitive
answer: ``dns_timeout``, ``dns_failure``; the server answered 429: ``rate_limited``).

A UTC day is ``down`` if any run of it found the server down, else ``up`` if any run reached
it, else ``left_out`` (only left-out runs, or none).
"""

from __future__ import annotations

from typing import Final, Literal

Uptime = Literal["up", "gated", "down", "left_out"]
#: Stored as a small integer (``runs.uptime``).
CODES: Final[dict[Uptime, int]] = {"left_out": 0, "up": 1, "gated": 2, "down": 3}
_DOWN: Final = frozenset({"dns", "unreachable", "timeout", "tls", "server_error"})
_OURS: Final = frozenset({"dns_timeout", "dns_failure", "rate_limited"})


def uptime_of(status: str, reason: str) -> Uptime:
    """What a run with this status class and reason key says (see the module docs)."""
    if reason in _OURS:
        return "left_out"
    if status == "auth":
        return "gated"
    if status in _DOWN:
        return "down"
    return "up"


def day_state(up: int, gated: int, down: int) -> Literal["up", "down", "left_out"]:
    """A day's state from its counts of runs (see the module docs)."""
    if down:
        return "down"
    return "up" if up or gated else "left_out"
