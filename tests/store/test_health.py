"""The shared store's health: one failure is not an outage, recovery needs answers in a row."""

from __future__ import annotations

import uuid
from collections import deque

import anyio
import pytest

from app.store import RedisStore
from app.store.health import DOWN_AFTER, UP_AFTER, Health
from tests.servers.redis_server import shared_redis_url
from tests.store.waiting import until

pytestmark = pytest.mark.anyio


class Pings:
    """Answers from a script (then the last one for ever), counting the pings."""

    def __init__(self, *answers: bool) -> None:
        self.answers = deque(answers)
        self.last = answers[-1]
        self.count = 0

    async def __call__(self) -> bool:
        self.count += 1
        if self.answers:
            self.last = self.answers.popleft()
        return self.last


async def settle(health: Health, up: bool) -> None:
    await until(lambda: health.up == up)


async def test_one_failed_operation_is_not_an_outage() -> None:
    pings = Pings(True)
    health = Health(pings)
    health.failed()
    health.failed()  # (one confirmation at a time)
    await until(lambda: pings.count >= 1)
    await anyio.sleep(0.6)
    assert health.up and health.outages == 0 and pings.count == 1
    await health.aclose()


async def test_an_outage_is_every_confirmation_ping_failing() -> None:
    pings = Pings(False, True)  # the second confirmation ping answers: not down
    health = Health(pings)
    health.failed()
    await until(lambda: pings.count >= 2)
    await anyio.sleep(0.2)
    assert health.up and health.outages == 0

    pings = Pings(*[False] * DOWN_AFTER, False)
    health = Health(pings)
    health.failed()
    await settle(health, up=False)
    assert health.outages == 1 and health.down_since is not None
    await health.aclose()


async def test_a_lucky_ping_during_a_restart_does_not_bring_it_back() -> None:
    ran: list[str] = []
    # Down after DOWN_AFTER failures; then answers that alternate, then UP_AFTER in a row.
    script = [False] * DOWN_AFTER + [True, False, True, False] + [True] * UP_AFTER
    pings = Pings(*script)
    health = Health(pings)

    async def replay() -> None:
        ran.append("replay")

    async def broken() -> None:
        raise RuntimeError("a recovery step that fails")

    health.on_up(broken)
    health.on_up(replay)
    health.failed()
    await settle(health, up=False)
    await settle(health, up=True)
    assert pings.count == len(script)  # up only after UP_AFTER answers in a row
    assert ran == ["replay"]  # (a failing hook does not stop the next)
    assert health.down_since is None
    await health.aclose()


async def test_the_share_is_the_limit_divided_by_the_instances_seen() -> None:
    async def heartbeat(instance: str, keep_s: float) -> int:
        assert len(instance) == 32 and keep_s > 0
        return 3

    health = Health(Pings(True), heartbeat)
    assert health.share(1000) == 1000  # (before the first heartbeat: one instance known)
    await health.beat()
    assert health.instances == 3
    assert health.share(1000) == 333
    assert health.share(2) == 1  # at least one, for a limit that allows any
    assert health.share(0) == 0


async def test_a_heartbeat_that_fails_keeps_the_count_and_starts_a_confirmation() -> None:
    calls = 0

    async def heartbeat(instance: str, keep_s: float) -> int:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError("gone")
        return 2

    pings = Pings(False)
    health = Health(pings, heartbeat)
    await health.beat()
    await health.beat()
    assert health.instances == 2
    await settle(health, up=False)
    await health.aclose()


async def test_closing_while_a_heartbeat_is_read_from_redis_ends_the_heartbeat() -> None:
    """Regression: a cancel landing while redis-py read the heartbeat's reply was swallowed, the
    heartbeat ran on and ``aclose`` (and with it a failed start) waited for ever."""
    store = RedisStore(shared_redis_url(), namespace=f"test-{uuid.uuid4().hex[:12]}:")
    try:
        for attempt in range(40):
            health = Health(store.ping, store.heartbeat)
            health.start()
            await anyio.sleep(0.0001 * attempt)
            with anyio.fail_after(60):
                await health.aclose()
            assert health._beating is None
    finally:
        await store.aclose()
