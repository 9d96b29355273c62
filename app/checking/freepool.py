"""The daily free pool: a fixed number of free checks per UTC day, with a share per client.

Policy: a draw takes one check from the day's pool, one from the client's share and one from
each network above the client (:mod:`app.checking.prefixes`: IPv6 /56 and /48, IPv4 /24 and
/16, each capped at its share of the pool) in one atomic store operation (all or none). A
reserve (``fairness.yaml``) is kept back from the pool: once the rest is gone, only a client
whose every network took no more than one client's share today may draw on it, so a burst from
one allocation leaves checks for everyone else. A draw whose request then fails on our side, or
is refused with 4xx or 429, is given back. Counters live two days, so a day's tally survives
until the day has passed everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from app.checking.prefixes import Policy, networks, policy
from app.store import Store, key

_TTL_S = 2 * 86_400
#: The request header that asks for a free-pool check (``1``), on HTTP and on ``/mcp``.
HEADER = "X-Free-Pool"


@dataclass(frozen=True, slots=True)
class Draw:
    """One free check taken: the counter keys, and what is left for this client after it."""

    keys: tuple[str, ...]
    remaining: int


class FreePool:
    """Draws on the day's pool.

    Args:
        store: where the counters live.
        size: free checks per UTC day, all clients together.
        per_client: free checks per client per UTC day.
    """

    def __init__(self, store: Store, size: int, per_client: int, fairness: Policy | None = None) -> None:
        self.store = store
        self.size = size
        self.per_client = per_client
        self.fairness = fairness or policy("free_pool")
        self.reserve = int(self.fairness.reserve * size)
        self._level_caps = [level.cap(size, per_client) for level in self.fairness.levels]

    def _keys(self, client: str, now: datetime | None = None) -> tuple[str, ...]:
        day = (now or datetime.now(UTC)).strftime("%Y-%m-%d")
        wider = networks(client, self.fairness.levels)
        return (key("pool", day), key("pool-client", day, client), *(key("pool-net", day, n) for n in wider))

    def _caps(self, keys: tuple[str, ...], reserve: bool = False) -> list[int]:
        """The caps of ``keys``: the pool without its reserve and each network at its share, or,
        for a draw on the reserve, the whole pool and each network at one client's share."""
        wider = len(keys) - 2
        if reserve:
            return [self.size, self.per_client, *[self.per_client] * wider]
        return [self.size - self.reserve, self.per_client, *self._level_caps[:wider]]

    async def draw(self, client: str) -> Draw | None:
        """Take one free check for ``client``; ``None`` when the pool, the share or a network's
        share is used up."""
        keys = self._keys(client)
        caps = self._caps(keys)
        values = await self.store.draw(list(keys), caps, _TTL_S)
        if values is None and self.reserve:
            caps = self._caps(keys, reserve=True)
            values = await self.store.draw(list(keys), caps, _TTL_S)
        if values is None:
            return None
        return Draw(keys, self._left(keys, values))

    async def give_back(self, draw: Draw) -> None:
        """Return a draw (the check was not served)."""
        await self.store.undraw(list(draw.keys))

    async def pool_left(self) -> int:
        """Free checks left today for all clients together."""
        (used,) = await self.store.counters([self._keys("-")[0]])
        return max(0, self.size - used)

    async def remaining(self, client: str) -> int:
        """Free checks left for ``client`` today (from the pool's open part or its reserve)."""
        keys = self._keys(client)
        return self._left(keys, await self.store.counters(list(keys)))

    def _left(self, keys: tuple[str, ...], used: list[int]) -> int:
        """What ``keys``' counters at ``used`` leave: from the pool's open part or its reserve."""
        return max(
            max(0, min(cap - value for cap, value in zip(self._caps(keys, reserve), used, strict=True)))
            for reserve in (False, True)
        )


def seconds_to_utc_midnight(now: datetime | None = None) -> int:
    """Whole seconds until the next UTC day begins (at least 1)."""
    moment = now or datetime.now(UTC)
    tomorrow = (moment + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return max(1, int((tomorrow - moment).total_seconds() + 0.999))
