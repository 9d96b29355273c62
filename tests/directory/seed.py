"""Runs and registry entries for directory tests."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from app.history.records import Run
from app.history.store import SqlHistory
from app.registry.importer import import_entries
from app.registry.page import Entry, Remote
from tests.history.test_store import run

NOW = datetime.now(UTC).replace(microsecond=0)
TRAVEL = ({"name": "search_flights"}, {"name": "book_hotel"}, {"name": "list_airports"}, {"name": "cancel_trip"})
FOOD = ({"name": "find_restaurant"}, {"name": "order_pizza"}, {"name": "get_menu"})


def tools(*names: str) -> tuple[dict[str, Any], ...]:
    return tuple({"name": name, "inputSchema": {"type": "object"}} for name in names)


def server_run(n: int, host: str, *, at: datetime | None = None, **changes: Any) -> Run:
    """Run ``n`` of the server at ``https://<host>/mcp``."""
    key = hashlib.sha256(f"{host} {n} {at}".encode()).hexdigest()
    when = at or NOW - timedelta(minutes=n)
    values: dict[str, Any] = {"url": f"https://{host}/mcp", "host": host, "observed_at": when, "run_id": key,
                              "attestation_id": key}  # fmt: skip
    values.update(changes)
    return replace(run(n), **values)


async def entry(history: SqlHistory, name: str, host: str, *, url: str | None = None, **fields: Any) -> None:
    """Import a registry entry listing ``https://<host>/mcp`` (or ``url``)."""
    values: dict[str, Any] = {"status": "active", "published_at": NOW, "updated_at": NOW, "latest": True,
                              "title": None, "description": None}  # fmt: skip
    values.update(fields)
    remote = Remote("streamable-http", url or f"https://{host}/mcp", ())
    listed = Entry(name=name, version=values.pop("version", "1.0.0"), remotes=(remote,), **values)
    await import_entries(history.engine, [listed], now=NOW, allow_private=False, interval_s=3600)
