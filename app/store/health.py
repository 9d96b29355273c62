"""Whether the shared store (Redis) answers, decided with hysteresis, and how many instances share it.

Policy:

- One slow or failed operation is not an outage. A failure starts a confirmation: the store is
  pinged :data:`DOWN_AFTER` times, :data:`PROBE_INTERVAL_S` apart, and is *down* only when
  every ping fails. Under ordinary load a call that waited on a busy pool fails alone; the
  service keeps counting in Redis.
- While down, every operation that needs shared state fails at once (no call waits for a
  timeout), and a watcher pings every :data:`PROBE_INTERVAL_S`; :data:`UP_AFTER` answers in a
  row bring it *up* again, so recovery follows Redis within about a second and one lucky ping
  during a restart does not flap it. The ``on_up`` hooks then run (releases that failed during
  the outage are replayed: :class:`app.store.shared.SharedStore`).
- Each instance writes a heartbeat every :data:`HEARTBEAT_S` into one sorted set; the number of
  members seen in the last :data:`INSTANCE_TTL_S` is :attr:`Health.instances`. While Redis is
  down an instance may count only its :meth:`Health.share` of a shared limit (the limit divided
  by the instances last seen), never the whole limit from zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import uuid
from collections.abc import Awaitable, Callable

from app.background import stop_all

logger = logging.getLogger("mcp_sonde.store")

#: Pings that must all fail, :data:`PROBE_INTERVAL_S` apart, before the store is down.
DOWN_AFTER = 2
#: Pings in a row that must answer before a down store is up again.
UP_AFTER = 2
#: Seconds between confirmation and recovery pings.
PROBE_INTERVAL_S = 0.5
#: Seconds between heartbeats.
HEARTBEAT_S = 10.0
#: An instance not heard from for this long is no longer counted.
INSTANCE_TTL_S = 30.0

Ping = Callable[[], Awaitable[bool]]
Heartbeat = Callable[[str, float], Awaitable[int]]


class Health:
    """The shared store's state as this instance sees it.

    Args:
        ping: ``True`` when the store answers (never raises).
        heartbeat: records this instance (its id, the time to keep it) and returns how many
            instances were heard from recently; ``None`` for no heartbeat.
        name: what is watched, for the log.
    """

    def __init__(self, ping: Ping, heartbeat: Heartbeat | None = None, name: str = "redis") -> None:
        self._ping = ping
        self._heartbeat = heartbeat
        self.name = name
        self.instance_id = uuid.uuid4().hex
        self.up = True
        self.instances = 1
        self.down_since: float | None = None
        self.outages = 0
        self._on_up: list[Callable[[], Awaitable[None]]] = []
        self._checking: asyncio.Task[None] | None = None
        self._beating: asyncio.Task[None] | None = None

    def on_up(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run ``hook`` each time the store comes back."""
        self._on_up.append(hook)

    def share(self, limit: int) -> int:
        """This instance's part of a shared ``limit`` while the store is down (at least 1 when
        the limit is)."""
        if limit <= 0:
            return 0
        return max(1, math.floor(limit / max(1, self.instances)))

    def failed(self) -> None:
        """An operation failed: confirm whether the store is down (at most one check at a time)."""
        if self._checking is None or self._checking.done():
            with contextlib.suppress(RuntimeError):  # (no running loop: nothing to check on)
                self._checking = asyncio.get_running_loop().create_task(self._confirm())

    async def _confirm(self) -> None:
        for attempt in range(DOWN_AFTER):
            if await self._ping():
                return
            if attempt + 1 < DOWN_AFTER:
                await asyncio.sleep(PROBE_INTERVAL_S)
        self.up = False
        self.down_since = time.monotonic()
        self.outages += 1
        logger.warning("%s does not answer; state it shares is refused until it does", self.name)
        await self._watch()

    async def _watch(self) -> None:
        answered = 0
        while answered < UP_AFTER:
            await asyncio.sleep(PROBE_INTERVAL_S)
            answered = answered + 1 if await self._ping() else 0
        self.up = True
        down_for = time.monotonic() - (self.down_since or time.monotonic())
        self.down_since = None
        logger.warning("%s answers again after %.1f s", self.name, down_for)
        for hook in self._on_up:
            try:
                await hook()
            except Exception:  # a hook's fault must not stop the others or the watcher
                logger.exception("a recovery step of %s failed", self.name)
        await self.beat()

    async def beat(self) -> None:
        """Write this instance's heartbeat now and learn how many instances there are."""
        if self._heartbeat is None or not self.up:
            return
        try:
            self.instances = max(1, await self._heartbeat(self.instance_id, INSTANCE_TTL_S))
        except Exception:  # (a store fault: the count stays as last seen)
            self.failed()

    def start(self) -> None:
        """Start the heartbeat (from inside the event loop; :meth:`aclose` stops it)."""
        if self._heartbeat is not None and self._beating is None:
            self._beating = asyncio.get_running_loop().create_task(self._beat_forever())

    async def _beat_forever(self) -> None:
        while True:
            await self.beat()
            await asyncio.sleep(HEARTBEAT_S)

    async def aclose(self) -> None:
        """Stop the heartbeat and any check under way."""
        await stop_all([task for task in (self._checking, self._beating) if task is not None])
        self._checking = self._beating = None
