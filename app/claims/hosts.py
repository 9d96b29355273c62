"""Which hosts are claimed, as this process last read them: what badges show without asking the database.

Policy: a badge is the service's most frequent answer and must not wait for the database, so
the badge reads the claimed hosts (each with the date of its last successful verification) from
a copy in memory. The copy is read at start and again, in the background, when it is older than
:data:`REFRESH_S` as a badge asks; a verification made through this process is in it at once
(:meth:`ClaimedHosts.note`), one made through another instance, or a claim that lapsed, within
:data:`REFRESH_S` of the next badge. A read that fails keeps the copy it had (one log line).
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.claims.store import utc
from app.db.tables.owners import VERIFIED, claims

logger = logging.getLogger("mcp_sonde.claims")
REFRESH_S = 60.0


class ClaimedHosts:
    """The claimed hosts and their dates (see the module docs)."""

    def __init__(self, engine: AsyncEngine, refresh_s: float = REFRESH_S) -> None:
        self.engine = engine
        self.refresh_s = refresh_s
        self._hosts: dict[str, datetime] = {}
        self._read_at = -float("inf")
        self._reading: asyncio.Task[None] | None = None

    def verified_at(self, host: str) -> datetime | None:
        """When ``host``'s claim was last verified, or ``None``; never waits (an old copy starts a read)."""
        if time.monotonic() - self._read_at > self.refresh_s and self._reading is None:
            self._reading = asyncio.get_running_loop().create_task(self._read(), name="claimed-hosts")
        return self._hosts.get(host)

    def note(self, host: str, verified_at: datetime | None) -> None:
        """A verification (or a lapse: ``None``) made through this process, shown at once."""
        if verified_at is None:
            self._hosts.pop(host, None)
        else:
            self._hosts[host] = verified_at

    async def refresh(self) -> None:
        """Read the claimed hosts now (at start)."""
        await self._read()

    async def _read(self) -> None:
        query = select(claims.c.host, func.max(claims.c.verified_at)).where(claims.c.state == VERIFIED)
        try:
            async with self.engine.connect() as db:
                rows = (await db.execute(query.group_by(claims.c.host))).all()
        except Exception as exc:  # any driver or network fault: the copy it had stays
            logger.warning("the claimed hosts could not be read: %s", type(exc).__name__)
        else:
            self._hosts = {host: moment for host, at in rows if (moment := utc(at)) is not None}
        finally:
            self._read_at = time.monotonic()
            self._reading = None

    async def aclose(self) -> None:
        """Wait for a read under way."""
        if self._reading is not None:
            await asyncio.gather(self._reading, return_exceptions=True)
