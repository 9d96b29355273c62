"""The claimed hosts as a process keeps them, on both database backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.claims.hosts import ClaimedHosts
from app.claims.store import ClaimStore
from app.db.engine import open_engine

pytestmark = pytest.mark.anyio


async def test_a_verified_claim_is_read_a_lapsed_one_is_gone_and_a_failed_read_keeps_the_copy(
    engine: AsyncEngine,
) -> None:
    store = ClaimStore(engine)
    day = datetime(2026, 12, 1, 10, tzinfo=UTC)
    claimed, pending = await store.open("mcp.example.com"), await store.open("other.example.com")
    await store.verified(claimed, day)
    await store.verified(claimed, day + timedelta(days=1))  # (renewed: the newest date is shown)
    hosts = ClaimedHosts(engine, refresh_s=3600)
    await hosts.refresh()
    assert hosts.verified_at("mcp.example.com") == day + timedelta(days=1)
    assert hosts.verified_at(pending.host) is None
    again = await store.get(claimed.id)
    assert again is not None
    await store.failed(again, "claim_proof_invalid", gone=True)
    assert hosts.verified_at("mcp.example.com") is not None  # (the copy, until it is read again)
    await hosts.refresh()
    assert hosts.verified_at("mcp.example.com") is None
    hosts.note("mcp.example.com", day)  # (a verification through this process: at once)
    assert hosts.verified_at("mcp.example.com") == day


async def test_a_read_that_fails_keeps_the_copy_it_had(tmp_path: Path) -> None:
    unreachable = open_engine(f"sqlite+aiosqlite:///{tmp_path / 'no' / 'such' / 'history.sqlite3'}")
    hosts = ClaimedHosts(unreachable, refresh_s=3600)
    hosts.note("mcp.example.com", datetime(2026, 12, 1, tzinfo=UTC))
    try:
        await hosts.refresh()
    finally:
        await unreachable.dispose()
    assert hosts.verified_at("mcp.example.com") == datetime(2026, 12, 1, tzinfo=UTC)


async def test_an_old_copy_is_read_again_in_the_background_when_a_badge_asks(engine: AsyncEngine) -> None:
    store = ClaimStore(engine)
    hosts = ClaimedHosts(engine, refresh_s=0.0)
    assert hosts.verified_at("mcp.example.com") is None  # (never read: a read starts, nothing waits)
    await hosts.aclose()
    claim = await store.open("mcp.example.com")
    await store.verified(claim)
    hosts.verified_at("mcp.example.com")
    await hosts.aclose()
    assert hosts.verified_at("mcp.example.com") is not None
    await hosts.aclose()
