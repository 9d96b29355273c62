"""Under the production rules (no development switch) the registry URL and every remote pass the
target guard: a registry on a private address is never fetched, a private endpoint never stored as
sweepable."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.db.tables.registry import registry_endpoints
from app.registry.client import PageClient, PageFailed
from app.registry.importer import import_entries, refresh_swept
from app.registry.page import read_page
from app.registry.sync import SyncLimits, run_sync
from tests.servers.network import FixedResolver, LoopbackNat
from tests.servers.registry import MALFORMED, RegistryState, generated

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("url", "answers", "reason"),
    [
        ("http://127.0.0.1:9/", {}, "page_refused"),  # (http, an IP literal, a port)
        ("https://registry.example.org", {"registry.example.org": ["10.0.0.1"]}, "page_refused"),
        ("https://registry.example.org", {"registry.example.org": ["93.184.215.14"]}, "page_unreachable"),
    ],
)
async def test_a_registry_url_the_guard_refuses_is_never_dialled(
    url: str, answers: dict[str, list[str]], reason: str
) -> None:
    resolver = FixedResolver({host: [ipaddress.ip_address(a) for a in addrs] for host, addrs in answers.items()})
    nat = LoopbackNat({})  # (refuses every dial, sends nothing)
    client = PageClient(url, resolver, allow_private=False, max_bytes=1024, page_limit=10, network_backend=nat)
    with pytest.raises(PageFailed) as caught:
        await client.fetch(None, None, 5.0)
    assert caught.value.reason == reason
    assert nat.dialled == ([("93.184.215.14", 443)] if reason == "page_unreachable" else [])


async def test_a_sync_stopped_by_a_refused_registry_says_so(engine: AsyncEngine) -> None:
    client = PageClient("http://127.0.0.1:9", FixedResolver({}), allow_private=False, max_bytes=1024, page_limit=10)
    report = await run_sync(engine, client, SyncLimits(10, 5.0, 5.0), sweep_interval_s=86_400)
    assert report.stopped == "page_refused" and report.pages == 0 and report.skipped == {"page_refused": 1}


async def test_remotes_are_checked_as_targets(engine: AsyncEngine) -> None:
    state = RegistryState(entries=generated(10), malformed=[raw for raw, _ in MALFORMED])
    page = read_page(state.page(None, 100, None))
    await import_entries(engine, page.entries, now=datetime.now(UTC), allow_private=False, interval_s=86_400)
    assert await refresh_swept(engine) == 10
    async with engine.connect() as db:
        rows = (await db.execute(select(registry_endpoints.c.url, registry_endpoints.c.skip_reason))).all()
    skipped = {url: reason for url, reason in rows if reason is not None}
    assert skipped == {
        "https://{tenant}.fixture.example.com/mcp": "url_template",
        "https://keyed.fixture.example.com/mcp": "needs_headers",
        "ftp://files.fixture.example.com/sse": "refused:scheme_not_https",
        "https://10.0.0.5/mcp": "refused:host_ip_literal",
    }
