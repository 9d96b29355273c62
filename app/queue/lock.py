"""The scheduler's lock: one active scheduler at a time, a standby takes over when it dies.

A lease in Redis (the Redlock page's single-instance lock, redis.io "Distributed Locks with
Redis"): ``SET key token NX PX ttl`` takes it, with a random token of the holder's own; the
holder extends it every third of the lifetime with a compare-and-extend script (``PEXPIRE``
only while the key still holds its token) and releases it with a compare-and-delete. A holder
whose extension fails (the key expired or is another's, or Redis did not answer before the
lease could run out) has lost it and stops at once; a standby tries to take it every third of
the lifetime, so it takes over at most about ``ttl + ttl/3`` after the holder died.
"""

from __future__ import annotations

import secrets
import time

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from app.store import key

_EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class Lease:
    """The lock named ``name`` on the Redis at ``url`` (see the module docs).

    Args:
        url: the Redis URL.
        name: which lock (the scheduler's, per jobs queue).
        ttl_s: the lease's lifetime.
        namespace: the deployment's key prefix (``redis_namespace``).
    """

    def __init__(self, url: str, name: str, ttl_s: float, namespace: str = "") -> None:
        timeout = max(0.5, ttl_s / 6)
        self.client: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self.key = namespace + key("scheduler-lock", name)
        self.ttl_ms = int(ttl_s * 1000)
        self.token = secrets.token_hex(16)
        self.held_until = 0.0
        self._extend = self.client.register_script(_EXTEND)
        self._release = self.client.register_script(_RELEASE)

    @property
    def held(self) -> bool:
        """This process holds the lease now (by its own clock, with the last extension's margin)."""
        return time.monotonic() < self.held_until

    async def acquire(self) -> bool:
        """Take the lease if it is free, or extend it if it is ours; ``True`` when held afterwards."""
        asked = time.monotonic()
        try:
            if self.held_until > 0:
                ok = bool(await self._extend(keys=[self.key], args=[self.token, self.ttl_ms]))
            else:
                ok = bool(await self.client.set(self.key, self.token, nx=True, px=self.ttl_ms))
        except (RedisError, OSError):
            ok = False
        if not ok:
            self.held_until = 0.0
            return False
        # Counted from before the call: the lease surely lasts that long (less a small margin).
        self.held_until = asked + self.ttl_ms / 1000 * 0.9
        return True

    async def release(self) -> None:
        """Give the lease back if it is ours (best effort: it expires anyway)."""
        self.held_until = 0.0
        try:
            await self._release(keys=[self.key], args=[self.token])
        except (RedisError, OSError):
            return

    async def aclose(self) -> None:
        """Release the connection."""
        await self.client.aclose()
