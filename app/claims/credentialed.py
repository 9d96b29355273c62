"""What checks made with a caller's credentials found, kept for the owner of the server's host.

Policy:

- A credentialed check's answer and signed envelope are its caller's alone: the envelope is not
  kept for reading by id and the history keeps no run (:func:`app.checking.flow.kept`). The
  owner of the host may still see that such checks happen and how they go, so each leaves a
  summary in ``credentialed_checks``: when, the status and reason keys, the step that decided
  it, era, transport, handshake latency and HTTP status, how many tools were listed, each
  check's id, state and reason key (the catalogue's words), and the names of the credential
  headers. Nothing the server wrote (its name, version, detail, tool names or schemas), no URL
  and no header value is kept: a credential echoed back has nowhere to go.
- Only the owner of the host reads them (``GET /v1/owner/servers/{server_id}/credentialed-checks``),
  newest first; each server keeps its newest :data:`KEEP`.
- Keeping a summary never fails the check it sums up: a database fault is one log line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.claims.store import utc
from app.db.tables.owners import credentialed_checks
from app.history.records import server_id_of
from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.claims")
KEEP = 100


def summary_of(result: CheckResult) -> dict[str, Any]:
    """The summary kept of a credentialed check: keys, counts and catalogue words only."""
    tools = result.tools.count if result.tools is not None else None
    return {
        "status": result.status, "reason": result.reason, "failed_step": result.failed_step,
        "era": result.era, "transport": result.transport, "latency_ms": result.latency_ms,
        "http_status": result.http_status, "tools": tools,
        "checks": [{"id": v.id, "state": v.state, "reason": v.reason} for v in result.checks],
        "credential_headers": sorted(result.credential_headers),
    }  # fmt: skip


@dataclass(frozen=True, slots=True)
class CredentialedCheck:
    """One kept summary."""

    checked_at: datetime
    summary: dict[str, Any]


class CredentialedChecks:
    """The summaries of credentialed checks (see the module docs)."""

    def __init__(self, engine: AsyncEngine, keep: int = KEEP) -> None:
        self.engine = engine
        self.keep = keep

    async def add(self, result: CheckResult, host: str) -> None:
        """Keep the summary of ``result`` (a credentialed check of a server on ``host``); a fault is logged."""
        server_id = server_id_of(result.url)
        try:
            async with self.engine.begin() as db:
                await db.execute(
                    insert(credentialed_checks).values(
                        server_id=server_id, host=host, checked_at=result.checked_at, summary=summary_of(result)
                    )
                )
                kept = (
                    select(credentialed_checks.c.id)
                    .where(credentialed_checks.c.server_id == server_id)
                    .order_by(credentialed_checks.c.id.desc())
                    .limit(self.keep)
                )
                oldest_kept = await db.scalar(select(kept.subquery().c.id).order_by("id").limit(1))
                if oldest_kept is not None:
                    await db.execute(
                        delete(credentialed_checks).where(
                            credentialed_checks.c.server_id == server_id, credentialed_checks.c.id < oldest_kept
                        )
                    )
        except Exception as exc:  # any driver or network fault: the check was served all the same
            logger.warning("a credentialed check's summary was not kept: %s", type(exc).__name__)

    async def newest(self, server_id: str, host: str, limit: int = KEEP) -> list[CredentialedCheck]:
        """The newest ``limit`` summaries of ``server_id`` on ``host``, newest first."""
        query = (
            select(credentialed_checks.c.checked_at, credentialed_checks.c.summary)
            .where(credentialed_checks.c.server_id == server_id, credentialed_checks.c.host == host)
            .order_by(credentialed_checks.c.id.desc())
            .limit(limit)
        )
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).all()
        return [CredentialedCheck(utc(row.checked_at) or datetime.now(UTC), row.summary) for row in rows]
