"""Per-client request limits with the ``limits`` library's async API.

Policy: a moving window per client key (IP, or IPv6 /64) on Redis when configured, so every
instance counts together; while Redis fails, an in-process window takes over (a circuit
breaker, as for the store), so limits still hold per instance and the service keeps answering.

Every answer states the client's window twice: as ``X-RateLimit-Limit``, ``-Remaining`` and
``-Reset`` (seconds), which clients know today, and as the IETF fields of
draft-ietf-httpapi-ratelimit-headers (section 3 ``RateLimit-Policy``: the quota ``q`` per
window ``w`` seconds; section 4 ``RateLimit``: ``r`` left, ``t`` seconds to reset), each an
RFC 9651 structured field list of one item named after the limited route.

slowapi's decorators are not used: slowapi calls the synchronous ``limits`` client from inside
async handlers, so a slow or hung Redis would block the event loop; its engine (``limits``)
is used directly here, through its asyncio storage.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from app.store.resilient import Breaker

_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError, TimeoutError)


@dataclass(frozen=True, slots=True)
class Decision:
    """Whether a request may go on, and the headers that describe the window.

    Attributes:
        allowed: the request is within its limit.
        limit: requests allowed per window.
        remaining: requests left in the window.
        reset_s: seconds until the window has room again.
        policy: the policy's name (a token: the limited route's namespace).
        window_s: the window's length, seconds.
    """

    allowed: bool
    limit: int
    remaining: int
    reset_s: int
    policy: str = "check"
    window_s: int = 60

    def headers(self) -> dict[str, str]:
        """``X-RateLimit-*``, ``RateLimit-Policy`` and ``RateLimit``, plus ``Retry-After`` when refused."""
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_s),
            "RateLimit-Policy": f'"{self.policy}";q={self.limit};w={self.window_s}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset_s}',
        }
        if not self.allowed:
            headers["Retry-After"] = str(max(1, self.reset_s))
        return headers


class RateLimiter:
    """One named limit (``limits`` syntax, for example ``60/minute``) over client keys.

    Args:
        rule: the limit.
        namespace: key prefix (one per limited route).
        redis_url: shared storage; ``None`` for in-process only.
        timeout_s: Redis socket timeouts, seconds.
        redis_namespace: prefix before every Redis key (see the ``redis_namespace`` setting).
    """

    def __init__(
        self,
        rule: str,
        namespace: str,
        redis_url: str | None = None,
        timeout_s: float = 0.25,
        redis_namespace: str = "",
    ) -> None:
        self.item: RateLimitItem = parse(rule)
        self.namespace = namespace
        self._memory = MovingWindowRateLimiter(MemoryStorage())
        self._shared: MovingWindowRateLimiter | None = None
        self._storage: Storage | None = None
        self._pool: aioredis.ConnectionPool | None = None
        if redis_url:
            # Our own pool, so the connections are closed with the app; short timeouts and no
            # client-side retries, as for the store.
            self._pool = aioredis.ConnectionPool.from_url(
                redis_url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
            )
            options: dict[str, Any] = {"connection_pool": self._pool, "retry": Retry(NoBackoff(), 0)}
            self._storage = RedisStorage(
                f"async+{redis_url}",
                implementation="redispy",
                key_prefix=f"{redis_namespace}mcp-sonde:v1:limits",
                **options,
            )
            self._shared = MovingWindowRateLimiter(self._storage)
        self.breaker = Breaker(f"rate limiter {namespace}")

    async def hit(self, client: str) -> Decision:
        """Count one request of ``client`` and say whether it may go on."""
        if self._shared is None:
            return await self._hit(self._memory, client)
        shared = self._shared
        return await self.breaker.call(
            lambda: self._hit(shared, client), lambda: self._hit(self._memory, client), _ERRORS
        )

    async def _hit(self, limiter: MovingWindowRateLimiter, client: str) -> Decision:
        allowed = await limiter.hit(self.item, self.namespace, client)
        stats = await limiter.get_window_stats(self.item, self.namespace, client)
        reset_s = max(0, math.ceil(stats.reset_time - time.time()))
        window = int(self.item.get_expiry())
        return Decision(allowed, self.item.amount, max(0, stats.remaining), reset_s, self.namespace, window)

    async def aclose(self) -> None:
        """Close the shared storage's connections."""
        if self._pool is not None:
            await self._pool.aclose()

    async def healthy(self) -> bool:
        """``True`` without shared storage, or when it answers."""
        if self._storage is None:
            return True
        try:
            return bool(await self._storage.check())
        except _ERRORS:
            return False
