"""A directory for the web tests: a few servers stored in a site's history, one of them listed
in the registry with hostile words."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable

from app.checking.services import open_history
from app.db import migrate
from app.history.records import Run
from tests.directory.seed import FOOD, TRAVEL, entry, server_run, tools
from tests.http.pages import hostile

HOSTILE_DESCRIPTION = f"Flights {hostile.SCRIPT} {hostile.IMAGE}"


def seed_directory(database: str, extra: int = 0, more: Iterable[Run] = ()) -> None:
    """Store the servers, and the runs ``more`` (on a thread of its own: a browser test's event
    loop runs on this one)."""

    async def write() -> None:
        await migrate.upgrade(database)
        store = open_history(database)
        try:
            await store.record(server_run(1, "fly.example.com", tools=TRAVEL, protocol_version="2025-11-25"))
            await entry(store, "io.example/fly", "fly.example.com", title="Fly Finder", description=HOSTILE_DESCRIPTION)
            await store.record(server_run(2, "eat.example.com", tools=FOOD))
            await store.record(server_run(3, "locked.example.com", tools=None, status="auth", reason="auth_required"))
            for n in range(extra):
                await store.record(server_run(10 + n, f"m{n:02d}.example.com", tools=tools("echo")))
            for item in more:
                await store.record(item)
        finally:
            await store.aclose()

    worker = threading.Thread(target=lambda: asyncio.run(write()))
    worker.start()
    worker.join(timeout=60)
