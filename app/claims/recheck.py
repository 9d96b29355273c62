"""The re-check of verified claims: a claim holds only while its host keeps publishing the challenge.

Every :data:`INTERVAL_S` the job claims the verified claims whose ``next_check`` has come (one
instance each, :meth:`app.claims.store.ClaimStore.due`) and fetches each host's document again
(:func:`app.claims.proof.verify_claim`). Found: ``verified_at`` is renewed. The host answered
without it (the file or the token is gone): the claim lapses at once. The host could not be
reached, or the guard refused it: one failure more, and the claim lapses after
:data:`app.claims.store.LAPSE_AFTER` in a row. A lookup share that is busy leaves the claim for
its next turn. The job never raises: a fault is one log line.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from app.claims.proof import ClaimRefused
from app.claims.store import Claim, ClaimStore
from app.errors import TargetRefused
from app.guard import ResolverBusy

logger = logging.getLogger("mcp_sonde.claims")
INTERVAL_S = 600.0
BATCH = 20
Verify = Callable[[Claim], Awaitable[None]]


class Rechecker:
    """Re-checks due claims now and then (see the module docs)."""

    def __init__(self, store: ClaimStore, verify: Verify, interval_s: float = INTERVAL_S) -> None:
        self.store = store
        self.verify = verify
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    async def once(self, now: datetime | None = None) -> dict[str, int]:
        """Re-check the claims due at ``now``; how many ended in each state."""
        counts = {"verified": 0, "failed": 0, "lapsed": 0}
        for claim in await self.store.due(now or datetime.now(UTC), BATCH):
            try:
                await self.verify(claim)
            except ClaimRefused as exc:
                state = await self.store.failed(claim, exc.reason, exc.gone, now)
            except TargetRefused as exc:
                state = await self.store.failed(claim, exc.reason, False, now)
            except ResolverBusy:
                continue
            else:
                await self.store.verified(claim, now)
                counts["verified"] += 1
                continue
            counts["lapsed" if state == "lapsed" else "failed"] += 1
        return counts

    def start(self) -> None:
        """Start the job on the running loop (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="claim-rechecks")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.once()
            except Exception as exc:  # the database does not answer, say: the next turn tries again
                logger.warning("claim re-checks failed: %s", type(exc).__name__)

    async def aclose(self) -> None:
        """Stop the job."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
