"""The daily free pool: a fixed number of free checks per UTC day, with a share per client.

Policy: a draw takes one check from the day's pool and one from the client's share in one
atomic store operation (both or neither). A draw whose request then fails on our side, or is
refused with 4xx or 429, is given back. Counters live two days, so a day's tally survives
until the day has passed everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.store import Store, key

_TTL_S = 2 * 86_400
#: The request header that asks for a free-pool check (``1``), on HTTP and on ``/mcp``.
HEADER = "X-Free-Pool"


@dataclass(frozen=True, slots=True)
class Draw:
    """One free check taken: the counter keys, and what is left for this client after it."""

    keys: tuple[str, str]
    remaining: int


class FreePool:
    """Draws on the day's pool.

    Args:
        store: where the counters live.
        size: free checks per UTC day, all clients together.
        per_client: free checks per client per UTC day.
    """

    def __init__(self, store: Store, size: int, per_client: int) -> None:
        self.store = store
        self.size = size
        self.per_client = per_client

    def _keys(self, client: str, now: datetime | None = None) -> tuple[str, str]:
        day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
        return key("pool", day), key("pool-client", day, client)

    async def draw(self, client: str) -> Draw | None:
        """Take one free check for ``client``; ``None`` when the pool or the share is used up."""
        keys = self._keys(client)
        values = await self.store.draw(list(keys), [self.size, self.per_client], _TTL_S)
        if values is None:
            return None
        return Draw(keys, max(0, min(self.size - values[0], self.per_client - values[1])))

    async def give_back(self, draw: Draw) -> None:
        """Return a draw (the check was not served)."""
        await self.store.undraw(list(draw.keys))

    async def pool_left(self) -> int:
        """Free checks left today for all clients together."""
        (used,) = await self.store.counters([self._keys("-")[0]])
        return max(0, self.size - used)

    async def remaining(self, client: str) -> int:
        """Free checks left for ``client`` today."""
        used_pool, used_client = await self.store.counters(list(self._keys(client)))
        return max(0, min(self.size - used_pool, self.per_client - used_client))


def seconds_to_utc_midnight(now: datetime | None = None) -> int:
    """Whole seconds until the next UTC day begins (at least 1)."""
    moment = now or datetime.now(UTC)
    tomorrow = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - moment).total_seconds() + 0.999))
