"""The security checks (:mod:`app.suite.sec`) against real servers: ``auth_metadata``."""

from __future__ import annotations

import ipaddress

import anyio
import pytest

from app.checking.metrics import Metrics
from app.checking.runner import CheckMode, CheckRunner
from app.guard import ResolvedTarget, check_url
from app.probe import ProbeResult
from app.settings import Settings
from app.store import MemoryStore
from app.suite.full import full_check
from tests.servers.raw import RawServer, challenging, send_json

pytestmark = pytest.mark.anyio


async def test_metadata_our_own_pace_refused_does_not_fail_the_servers_auth_check() -> None:
    """Two servers naming each other's host for their protected resource metadata,
    host_concurrency=1: each probe holds its own host's only slot while waiting for the other's,
    both lookups are refused by our own pacing (target_busy), and both results *fail*
    auth_metadata (metadata_missing): a verdict on the server that the prober caused."""
    settings = Settings(
        allow_private=True, host_concurrency=1, host_client_concurrency=1, host_start_interval_s=0.5,
        queue_budget_s=10.0, connect_timeout_s=1.0, redis_url=None,
    )  # fmt: skip
    a, b = RawServer(), RawServer()
    a.start()
    b.start()
    try:
        # a at 127.0.0.1, b at localhost (two hosts for the pacing, one loopback server each)
        a_url, b_url = a.url("/mcp"), b.url("/mcp", host="localhost")
        a.routes["/mcp"] = challenging(b.url("/meta", host="localhost"))
        b.routes["/mcp"] = challenging(a.url("/meta"))
        b.routes["/meta"] = lambda _r, c: send_json(
            c, 200, {"resource": a_url, "authorization_servers": ["https://as.example.com"]}
        )
        a.routes["/meta"] = lambda _r, c: send_json(
            c, 200, {"resource": b_url, "authorization_servers": ["https://as.example.com"]}
        )

        async def probe(target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
            return await full_check(target.url.url, settings=settings, resolved=target, pace=mode.pace)

        runner = CheckRunner(MemoryStore(), settings, probe, Metrics())
        verdicts: dict[str, tuple[str, str | None, list[str | None]]] = {}

        async def check(name: str, url: str) -> None:
            result = await runner.check(
                ResolvedTarget(check_url(url, allow_private=True), (ipaddress.ip_address("127.0.0.1"),)),
                CheckMode(), client=name,
            )  # fmt: skip
            verdict = next(v for v in result.checks if v.id == "auth_metadata")  # type: ignore[attr-defined]
            assert result.auth is not None
            verdicts[name] = (verdict.state, verdict.reason, [lookup.refused for lookup in result.auth.lookups])

        async with anyio.create_task_group() as group:
            group.start_soon(check, "a", a_url)
            group.start_soon(check, "b", b_url)
        for name, (state, reason, refused) in verdicts.items():
            if "target_busy" in refused:
                assert state != "failed", f"{name}: auth_metadata {state}/{reason} though we never fetched the metadata"
    finally:
        a.stop()
        b.stop()
