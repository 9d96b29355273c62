"""The free pool shared out by network: no prefix takes more than its share, and a reserve is kept.

Each case runs on the in-process store and on Redis (a real server, a namespace of its own).
"""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import AsyncIterator

import pytest

from app.checking.clients import rate_key
from app.checking.freepool import FreePool
from app.store import MemoryStore, RedisStore, Store
from tests.servers.redis_server import shared_redis_url

pytestmark = pytest.mark.anyio
SIZE, PER_CLIENT = 1000, 20


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    backend: Store = (
        MemoryStore()
        if request.param == "memory"
        else RedisStore(shared_redis_url(), timeout_s=5.0, namespace=f"t{uuid.uuid4().hex[:8]}:")
    )
    try:
        yield backend
    finally:
        await backend.aclose()


def sixty_fours(network: str, count: int) -> list[str]:
    """``count`` distinct /64s of ``network``, as rate keys."""
    base = ipaddress.IPv6Network(network)
    return [rate_key(str(next(base.subnets(new_prefix=64)).network_address + (i << 64) + 1)) for i in range(count)]


async def drain(pool: FreePool, clients: list[str]) -> int:
    """Draw until every client is refused; how many were drawn."""
    drawn = 0
    for client in clients:
        while await pool.draw(client) is not None:
            drawn += 1
    return drawn


async def test_fifty_ipv6_64s_of_one_58_cannot_empty_the_pool(store: Store) -> None:
    """Regression: 50 /64s (one /58) behind the trusted proxy drew the whole default pool of
    1,000 at 20 each, until midnight UTC."""
    pool = FreePool(store, SIZE, PER_CLIENT)
    taken = await drain(pool, sixty_fours("2001:db8:77:40::/58", 50))
    assert taken == 50  # their /56's share: 5 % of the pool
    assert await pool.draw(rate_key("2001:db8:1234::1")) is not None  # everyone else still draws
    assert await pool.pool_left() == SIZE - 51


async def test_one_ipv6_48_takes_at_most_a_tenth_of_the_pool(store: Store) -> None:
    pool = FreePool(store, SIZE, PER_CLIENT)
    clients = [c for n in range(8) for c in sixty_fours(f"2001:db8:99:{n:x}00::/56", 10)]
    assert await drain(pool, clients) == 100  # 8 /56s of one /48: 50 + 50, then the /48's cap


async def test_one_ipv4_24_and_one_16_take_at_most_their_shares(store: Store) -> None:
    pool = FreePool(store, SIZE, PER_CLIENT)
    one_24 = [f"198.51.100.{i}" for i in range(1, 255)]
    assert await drain(pool, one_24) == 50
    one_16 = [f"198.18.{n}.{i}" for n in range(10) for i in range(1, 6)]
    assert await drain(pool, one_16) == 100


async def test_the_reserve_is_left_for_networks_that_drew_little(store: Store) -> None:
    pool = FreePool(store, SIZE, PER_CLIENT)
    # Eight /48s each take their tenth: the open 800 of the pool is gone.
    bursts = [c for site in range(8) for n in range(2) for c in sixty_fours(f"2001:db8:{site + 1:x}:{n:x}00::/56", 3)]
    assert await drain(pool, bursts) == 800
    assert await pool.draw(bursts[0]) is None  # a network that drew its share gets none of the reserve
    newcomer = rate_key("2001:db8:abcd::7")
    draws = [await pool.draw(newcomer) for _ in range(PER_CLIENT + 1)]
    assert all(draws[:PER_CLIENT]) and draws[PER_CLIENT] is None  # a whole share, from the reserve
    assert await pool.remaining(newcomer) == 0 and await pool.pool_left() == SIZE - 800 - PER_CLIENT
    assert await drain(pool, [f"203.0.113.{i}" for i in range(1, 200)]) == PER_CLIENT  # one /16 network: one share


async def test_a_draw_given_back_returns_to_every_level(store: Store) -> None:
    pool = FreePool(store, SIZE, PER_CLIENT)
    clients = sixty_fours("2001:db8:5:500::/56", 3)
    assert await drain(pool, clients[:2]) == 40
    last = [await pool.draw(clients[2]) for _ in range(11)]
    assert all(last[:10]) and last[10] is None  # the /56 is at its 50
    draw = last[0]
    assert draw is not None
    await pool.give_back(draw)
    assert await pool.draw(clients[2]) is not None  # its /56, its /48 and the pool each got it back
    assert await pool.draw(clients[2]) is None
    assert await pool.pool_left() == SIZE - 50
