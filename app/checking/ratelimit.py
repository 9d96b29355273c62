"""Per-client request limits with the ``limits`` library's async API.

Policy: a moving window per client key (IP, or IPv6 /64) on Redis when configured, so every
instance counts together. While Redis is down (:class:`app.store.health.Health`, with its
hysteresis) or a hit fails, an in-process window counts the request against this instance's
share of the limit (the limit divided by the instances last seen, :meth:`Health.share`), so the
instances together never allow more than the limit per window on their own counts, and the
service keeps answering. Redis is the truth again as soon as it answers.

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

from app.settings import Settings
from app.store.health import Health

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
        health: the shared store's health (whether Redis is down, how many instances share it).
        amount: requests per window other than the rule's (a share of it), with its window.
    """

    def __init__(
        self,
        rule: str,
        namespace: str,
        redis_url: str | None = None,
        timeout_s: float = 2.0,
        redis_namespace: str = "",
        health: Health | None = None,
        amount: int | None = None,
    ) -> None:
        item = parse(rule)
        if amount is not None:
            item = type(item)(amount, item.multiples, item.namespace)
        self.item: RateLimitItem = item
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
        self.health = health

    @classmethod
    def configured(
        cls, settings: Settings, rule: str, namespace: str, health: Health | None, amount: int | None = None
    ) -> RateLimiter:
        """``rule`` (or ``amount`` per its window) under ``namespace`` on the Redis of
        ``settings`` (if any), watched by ``health``."""
        return cls(
            rule, namespace, settings.redis_url, settings.redis_timeout_s, settings.redis_namespace, health, amount
        )

    async def hit(self, client: str) -> Decision:
        """Count one request of ``client`` and say whether it may go on."""
        if self._shared is None:
            return await self._hit(self._memory, self.item, client)
        if self.health is not None and not self.health.up:
            return await self._hit(self._memory, self._share(), client)
        try:
            return await self._hit(self._shared, self.item, client)
        except _ERRORS:
            if self.health is not None:
                self.health.failed()
            return await self._hit(self._memory, self._share(), client)

    def _share(self) -> RateLimitItem:
        """The limit as this instance counts it alone (see the module docs)."""
        amount = self.health.share(self.item.amount) if self.health is not None else self.item.amount
        return type(self.item)(amount, self.item.multiples, self.item.namespace)

    async def _hit(self, limiter: MovingWindowRateLimiter, item: RateLimitItem, client: str) -> Decision:
        allowed = await limiter.hit(item, self.namespace, client)
        stats = await limiter.get_window_stats(item, self.namespace, client)
        reset_s = max(0, math.ceil(stats.reset_time - time.time()))
        window = int(item.get_expiry())
        return Decision(allowed, item.amount, max(0, stats.remaining), reset_s, self.namespace, window)

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
