"""What a probe saw beyond its result: the raw material the check suite judges.

The :class:`~app.probe.result.ProbeResult` holds cleaned, capped facts for anyone to read.
:class:`Evidence` holds what a judge needs and a reader must not get: the tool objects exactly
as the server listed them (the hygiene rules look for the very characters cleaning removes,
and a fingerprint must cover the schema as sent), the shape problems of the list, and the
outcome of the refusal call. It never leaves the process as it is; :mod:`app.suite` turns it
into verdicts with cleaned evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: The made-up tool name of the refusal call; reserved, so no real server should list it.
REFUSAL_TOOL = "__mcp_sonde_probe_nonexistent_tool__"

RefusalKind = Literal[
    "jsonrpc_error",  # a JSON-RPC error response (``code`` says which)
    "tool_error",  # a CallToolResult with isError: true
    "http_error",  # a non-2xx answer without a JSON-RPC error in it
    "credential_gate",  # 401: a sign-in wall met only at the call
    "malformed",  # a 2xx answer that holds no usable response
    "timeout",  # no complete answer in time
    "transport_error",  # the connection failed
    "success",  # a result without isError: the server pretends to run a tool that does not exist
]

#: Why the refusal call was not made.
RefusalWithheld = Literal["name_listed", "list_incomplete", "credential_gate", "not_reached", "light_probe"]


@dataclass
class Refusal:
    """The refusal call (``tools/call`` of :data:`REFUSAL_TOOL`) and how the server said no.

    Attributes:
        withheld: why the call was not made (then nothing else is set).
        kind: how the server answered.
        code: the JSON-RPC error code, for ``jsonrpc_error``.
        http_status: the HTTP status of the answer.
        detail: a cleaned, capped message (JSON-RPC error message or the transport reason).
        budget_limited: a ``timeout`` where the probe's own budget, not the call's, ran out.
        elapsed_ms: time of the call.
    """

    withheld: RefusalWithheld | None = None
    kind: RefusalKind | None = None
    code: int | None = None
    http_status: int | None = None
    detail: str | None = None
    budget_limited: bool = False
    elapsed_ms: float | None = None


@dataclass
class Evidence:
    """Raw observations of one probe (see the module docs).

    Attributes:
        answered: an HTTP response came back to a handshake request (``server/discover``,
            ``initialize`` or the legacy event stream): the server was reached.
        handshake: the request that completed the handshake, if one did.
        tool_entries: the tool objects as listed, one per distinct name, in server order (at
            most ``MAX_TOOL_ENTRIES``; ``entries_capped`` says when more were listed).
        names: every distinct tool name listed (for duplicates and the refusal call).
        list_problems: stable keys of what was wrong with the shape of ``tools/list``.
        list_complete: the list was read to its end (every page, nothing cut).
        refusal: the refusal call, when the probe got that far.
        listed_bytes: decoded bytes of the ``tools/list`` replies (what judging the list costs
            grows with it).
    """

    answered: bool = False
    handshake: Literal["server/discover", "initialize"] | None = None
    tool_entries: list[dict[str, Any]] = field(default_factory=list)
    entries_capped: bool = False
    names: set[str] = field(default_factory=set)
    list_problems: list[str] = field(default_factory=list)
    list_complete: bool = False
    refusal: Refusal | None = None
    listed_bytes: int = 0

    def problem(self, key: str) -> None:
        """Record a ``tools/list`` shape problem (each key once)."""
        if key not in self.list_problems:
            self.list_problems.append(key)
