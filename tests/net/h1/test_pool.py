"""The pool: at most a few connections in all, idle ones reused, waits bounded."""

from __future__ import annotations

import asyncio
import socket

import httpx2
import pytest

from app.net.dial import SocketDialler, open_connection
from app.net.h1.connection import Connection
from app.net.h1.pool import ConnectionPool, Origin

pytestmark = pytest.mark.anyio


async def _pool(listener: socket.socket, opened: list[Origin]) -> ConnectionPool:
    port = listener.getsockname()[1]

    async def connect(origin: Origin) -> Connection:
        opened.append(origin)
        return await open_connection(await SocketDialler().connect_tcp("127.0.0.1", port, 10.0), None, 10.0)

    return ConnectionPool(connect, max_connections=2, keepalive_s=5.0)


async def test_no_more_than_the_limit_are_open_and_a_waiter_gets_the_one_given_back() -> None:
    a: Origin = ("http", "a", 80)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        opened: list[Origin] = []
        pool = await _pool(listener, opened)
        first, second = await pool.acquire(a, 5.0), await pool.acquire(a, 5.0)
        with pytest.raises(httpx2.PoolTimeout):
            await pool.acquire(a, 0.1)
        waiting = asyncio.ensure_future(pool.acquire(a, 5.0))
        await asyncio.sleep(0.01)
        pool.release(first, True, a)
        assert await waiting is first and len(opened) == 2 and pool.open_count == 2
        await pool.aclose()
        assert second._transport is not None and second._transport.is_closing()  # (in use, and closed with the pool)


async def test_an_idle_connection_to_another_origin_makes_room() -> None:
    a: Origin = ("http", "a", 80)
    b: Origin = ("http", "b", 80)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        opened: list[Origin] = []
        pool = await _pool(listener, opened)
        first, second = await pool.acquire(a, 5.0), await pool.acquire(a, 5.0)
        pool.release(first, True, a)
        third = await pool.acquire(b, 0.5)
        assert third is not first and opened == [a, a, b] and pool.open_count == 2
        pool.release(second, False, a)
        assert pool.open_count == 1
        await pool.aclose()
