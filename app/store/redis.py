"""The Redis store (redis-py asyncio), shared by every instance of the service.

Policy: one bounded, blocking connection pool (:data:`POOL_SIZE` connections; a call waits for
a free one at most ``timeout_s``), socket timeouts of ``timeout_s`` (2 s by default: long enough
that a busy Redis or a busy event loop under ordinary load is not taken for an outage, short
enough that a dead one costs one bounded wait before :class:`app.store.health.Health` declares
it down) and no client-side retries (:class:`app.store.shared.SharedStore` decides what to
retry). Multi-key operations run as Lua scripts, so they are atomic across instances.
"""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from app.store.base import Store, StoreError

_DELETE_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
# ARGV: value, ttl_ms
_RENEW_IF_EQUAL = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
# ARGV: ttl_ms, cap_1 .. cap_n
_DRAW = """
for i, k in ipairs(KEYS) do
  local v = tonumber(redis.call('GET', k) or '0')
  if v >= tonumber(ARGV[i + 1]) then return false end
end
local out = {}
for i, k in ipairs(KEYS) do
  out[i] = redis.call('INCR', k)
  if redis.call('PTTL', k) < 0 then redis.call('PEXPIRE', k, ARGV[1]) end
end
return out
"""
_UNDRAW = """
for _, k in ipairs(KEYS) do
  local v = tonumber(redis.call('GET', k) or '0')
  if v > 0 then redis.call('DECR', k) end
end
return 1
"""
# ARGV: now_ms, ttl_ms, limit, token
_ACQUIRE_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then  -- (the set outlives its longest slot)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
"""
# ARGV: now_ms, keep_ms, instance id. The instances heard from within keep_ms.
_HEARTBEAT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])
"""
#: Connections per store at most (a call beyond them waits for one, within the timeout).
POOL_SIZE = 64
_INSTANCES = "mcp-sonde:v1:instances"


class RedisStore(Store):
    """:class:`app.store.base.Store` on a Redis server.

    Args:
        url: a ``redis://`` or ``rediss://`` URL.
        timeout_s: socket connect and read timeout, seconds.
        namespace: prefix put before every key (deployments or test runs sharing one Redis).

    Every method raises :class:`app.store.base.StoreError` when Redis fails.
    """

    name = "redis"

    def __init__(self, url: str, timeout_s: float = 2.0, namespace: str = "") -> None:
        self._ns = namespace
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=POOL_SIZE,
            timeout=timeout_s,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=Retry(NoBackoff(), 0),
            health_check_interval=30,
        )
        self.client: aioredis.Redis = aioredis.Redis.from_pool(pool)  # (the client owns the pool and closes it)
        # Pings go on a connection of their own: a pool busy with ordinary load is not an outage.
        self._pinger: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        self._delete_if_equal = self.client.register_script(_DELETE_IF_EQUAL)
        self._renew_if_equal = self.client.register_script(_RENEW_IF_EQUAL)
        self._draw = self.client.register_script(_DRAW)
        self._undraw = self.client.register_script(_UNDRAW)
        self._acquire_slot = self.client.register_script(_ACQUIRE_SLOT)
        self._heartbeat = self.client.register_script(_HEARTBEAT)

    async def get(self, key: str) -> bytes | None:
        try:
            value = await self.client.get(self._ns + key)
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc
        return value if isinstance(value, bytes) else None

    async def set(self, key: str, value: bytes, ttl_s: float) -> None:
        try:
            await self.client.set(self._ns + key, value, px=max(1, int(ttl_s * 1000)))
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def set_nx(self, key: str, value: bytes, ttl_s: float) -> bool:
        try:
            return bool(await self.client.set(self._ns + key, value, px=max(1, int(ttl_s * 1000)), nx=True))
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def delete_if_equal(self, key: str, value: bytes) -> bool:
        try:
            return bool(await self._delete_if_equal(keys=[self._ns + key], args=[value]))
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def renew_if_equal(self, key: str, value: bytes, ttl_s: float) -> bool:
        try:
            return bool(await self._renew_if_equal(keys=[self._ns + key], args=[value, max(1, int(ttl_s * 1000))]))
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def draw(self, keys: list[str], caps: list[int], ttl_s: float) -> list[int] | None:
        try:
            values = await self._draw(keys=[self._ns + k for k in keys], args=[max(1, int(ttl_s * 1000)), *caps])
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc
        return [int(v) for v in values] if values else None

    async def undraw(self, keys: list[str]) -> None:
        try:
            await self._undraw(keys=[self._ns + k for k in keys])
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def counters(self, keys: list[str]) -> list[int]:
        try:
            values = await self.client.mget([self._ns + k for k in keys])
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc
        return [int(v) if v is not None else 0 for v in values]

    async def acquire_slot(self, key: str, token: str, limit: int, ttl_s: float) -> bool:
        try:
            now_ms = int(await self._now_ms())
            result = await self._acquire_slot(
                keys=[self._ns + key], args=[now_ms, max(1, int(ttl_s * 1000)), limit, token]
            )
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc
        return bool(result)

    async def _now_ms(self) -> float:
        seconds, micros = await self.client.time()
        return seconds * 1000 + micros / 1000

    async def release_slot(self, key: str, token: str) -> None:
        try:
            await self.client.zrem(self._ns + key, token)
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc

    async def heartbeat(self, instance: str, keep_s: float) -> int:
        """Record ``instance`` as alive for ``keep_s`` seconds; the instances alive now."""
        try:
            now_ms = int(await self._now_ms())
            count = await self._heartbeat(keys=[self._ns + _INSTANCES], args=[now_ms, int(keep_s * 1000), instance])
        except (RedisError, OSError) as exc:
            raise StoreError(f"redis: {type(exc).__name__}") from exc
        return int(count)

    async def ping(self) -> bool:
        try:
            return bool(await self._pinger.ping())
        except (RedisError, OSError):
            return False

    async def aclose(self) -> None:
        await self.client.aclose()
        await self._pinger.aclose()
