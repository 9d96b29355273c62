"""Runs for the statistics' tests: a served result's JSON with the facts the figures read."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from app.history.records import Run

TOOLS: dict[str, dict[str, Any]] = {
    name: {"name": name, "inputSchema": {"type": "object"}} for name in ("add", "echo", "find", "sort")
}


def run(
    host: str,
    at: datetime,
    status: str = "ok",
    reason: str = "ok",
    *,
    era: str | None = None,
    version: str | None = None,
    tools: tuple[str, ...] | None = None,
    metadata: bool | None = None,
) -> Run:
    """A run of ``https://<host>/mcp`` at ``at``; ``tools`` names a list read in full."""
    document: dict[str, Any] = {"url": f"https://{host}/mcp", "status": status, "reason": reason,
                                "era": era, "protocol_version": version}  # fmt: skip
    if tools is not None:
        document["tools"] = {"count": len(tools), "names": list(tools)}
    if metadata is not None:
        document["auth"] = {"metadata_published": metadata, "lookups": []}
    stamp = f"{host}-{at.timestamp():.0f}"
    listed = tuple(TOOLS[name] for name in tools) if tools is not None else None
    return Run(
        run_id=stamp, url=f"https://{host}/mcp", host=host, observed_at=at, status=status, reason=reason,
        protocol_version=version, transport="streamable_http" if era else None, latency_ms=20.0, total_ms=50.0,
        addresses=("93.184.215.14",), tools=listed,
        schema_fingerprint=("s" + stamp).ljust(64, "0")[:64] if listed is not None else None,
        toolset_fingerprint=("t" + stamp).ljust(64, "0")[:64] if listed is not None else None,
        result=json.dumps(document).encode(), attestation_id=stamp.ljust(64, "0")[:64], envelope=b"{}",
    )  # fmt: skip
