"""A registry of our own on loopback: ``GET /v0.1/servers`` in the official format, with hostile modes.

It serves generated entries (``ServerResponse`` documents, :func:`generated`) sorted by name and
version, ``limit`` at a time, with an opaque cursor (the base64 of the next offset), and honours
``updated_since`` (entries updated at or after it). :meth:`RegistryState.touch` changes an entry's
status (``deprecated``, ``deleted``) and moves its ``updatedAt`` on, as the registry does, so a later
incremental sync sees it. ``malformed`` entries (raw JSON text, since some give a member twice)
are served on the first page of a full listing.

Hostile modes (:attr:`RegistryState.mode`): ``loop`` (the second page's cursor is the first's),
``garbage`` (a body that is not JSON), ``huge`` (a body of ``huge_bytes``), ``drip`` (one byte of
a valid page every ``drip_s``), ``endless`` (1,000,000 entries listed, generated as paged, a
next cursor on every page). Every request is counted (:attr:`RegistryState.requests`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from tests.servers.uvicorn_thread import serve

OFFICIAL = "io.modelcontextprotocol.registry/official"
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
ENDLESS = 1_000_000


def stamp(moment: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def response(
    name: str,
    version: str,
    remotes: list[dict[str, Any]],
    *,
    status: str = "active",
    updated: datetime = EPOCH,
    latest: bool = True,
) -> dict[str, Any]:
    """One ``ServerResponse``."""
    return {
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": name,
            "description": f"Fixture server {name}",
            "version": version,
            "remotes": remotes,
        },
        "_meta": {
            OFFICIAL: {
                "status": status,
                "publishedAt": stamp(EPOCH),
                "updatedAt": stamp(updated),
                "isLatest": latest,
            }
        },
    }


def generated(count: int, hosts: int = 50) -> list[dict[str, Any]]:
    """``count`` valid entries, their remotes spread over ``hosts`` host names (every tenth an ``sse`` one)."""
    made = []
    for i in range(count):
        kind = "sse" if i % 10 == 0 else "streamable-http"
        path = "sse" if kind == "sse" else "mcp"
        remote = {"type": kind, "url": f"https://h{i % hosts}.fixture.example.com/{path}/{i}"}
        made.append(
            response(f"io.example.fixture/server-{i:05d}", "1.0.0", [remote], updated=EPOCH + timedelta(seconds=i))
        )
    return made


#: Entries that break the format or that the mirror keeps but never probes: ``(raw JSON, what it is)``.
MALFORMED: list[tuple[str, str]] = [
    ('{"server": {"description": "no name", "version": "1.0.0"}}', "entry_name_invalid"),
    ('{"server": {"name": "io.example/bad-version", "description": "x", "version": 7}}', "entry_version_invalid"),
    ('"not an object"', "entry_shape"),
    (
        '{"server": {"name": "io.example/bad-remotes", "description": "x", "version": "1", "remotes": {"a": 1}}}',
        "entry_remotes_invalid",
    ),
    (
        '{"server": {"name": "io.example/twice", "name": "io.example/twice2", "description": "x", "version": "1"}}',
        "entry_duplicate_member",
    ),
    (
        '{"server": {"name": "io.example/bad-status", "description": "x", "version": "1"}, '
        f'"_meta": {{"{OFFICIAL}": {{"status": "gone"}}}}}}',
        "entry_meta_invalid",
    ),
    (
        '{"server": {"name": "io.example/bad-time", "description": "x", "version": "1"}, '
        f'"_meta": {{"{OFFICIAL}": {{"updatedAt": "yesterday"}}}}}}',
        "entry_time_invalid",
    ),
    (
        '{"server": {"name": "io.example/stdio-remote", "description": "x", "version": "1", '
        '"remotes": [{"type": "stdio", "url": "https://stdio.fixture.example.com/"}]}}',
        "remote_transport_unknown",
    ),
    (
        json.dumps(
            response(
                "io.example/template",
                "1",
                [{"type": "streamable-http", "url": "https://{tenant}.fixture.example.com/mcp"}],
            )
        ),
        "url_template",
    ),
    (
        json.dumps(
            response(
                "io.example/headers",
                "1",
                [
                    {
                        "type": "streamable-http",
                        "url": "https://keyed.fixture.example.com/mcp",
                        "headers": [{"name": "X-API-Key", "isRequired": True, "isSecret": True}],
                    }
                ],
            )
        ),
        "needs_headers",
    ),
    (
        json.dumps(response("io.example/ftp", "1", [{"type": "sse", "url": "ftp://files.fixture.example.com/sse"}])),
        "refused:scheme_not_https",
    ),
    (
        json.dumps(response("io.example/private", "1", [{"type": "streamable-http", "url": "https://10.0.0.5/mcp"}])),
        "refused:host_ip_literal",
    ),
]


def _remote(i: int) -> dict[str, str]:
    return {"type": "streamable-http", "url": f"https://e{i % 50}.fixture.example.com/mcp/{i}"}


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    return int(base64.urlsafe_b64decode(cursor.encode()).decode().split(":", 1)[1])


@dataclass
class RegistryState:
    """What the fixture serves (changed by tests between syncs)."""

    entries: list[dict[str, Any]]
    malformed: list[str] = field(default_factory=list)
    mode: str = "normal"
    huge_bytes: int = 8 * 1024 * 1024
    drip_s: float = 0.2
    requests: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def touch(self, index: int, status: str, when: datetime) -> None:
        """Set entry ``index``'s status and move its ``updatedAt`` to ``when``."""
        with self.lock:
            meta = self.entries[index]["_meta"][OFFICIAL]
            meta["status"] = status
            meta["updatedAt"] = stamp(when)

    def page(self, cursor: str | None, limit: int, updated_since: str | None) -> bytes:
        """The page's JSON text."""
        offset = _offset(cursor)
        if self.mode == "endless":
            items = [
                json.dumps(response(f"io.example.endless/s-{i:07d}", "1", [_remote(i)]))
                for i in range(offset, min(offset + limit, ENDLESS))
            ]
            metadata: dict[str, Any] = {"count": len(items)}
            if offset + limit < ENDLESS:
                metadata["nextCursor"] = _cursor(offset + limit)
            return _list(items, metadata)
        with self.lock:
            listed = self.entries
            if updated_since:
                since = datetime.fromisoformat(updated_since)
                listed = [e for e in listed if datetime.fromisoformat(e["_meta"][OFFICIAL]["updatedAt"]) >= since]
            chosen = [json.dumps(e) for e in listed[offset : offset + limit]]
        if offset == 0 and not updated_since:
            chosen = self.malformed + chosen
        metadata = {"count": len(chosen)}
        if offset + limit < len(listed):
            metadata["nextCursor"] = _cursor(offset + limit)
        if self.mode == "loop" and offset > 0:
            metadata["nextCursor"] = _cursor(limit)  # (the second page's cursor, again)
        return _list(chosen, metadata)


def _list(items: list[str], metadata: dict[str, Any]) -> bytes:
    return ('{"servers": [' + ", ".join(items) + '], "metadata": ' + json.dumps(metadata) + "}").encode()


def build_app(state: RegistryState) -> Starlette:
    """The fixture's ASGI app."""

    async def servers(request: Request) -> Response:
        query = dict(request.query_params)
        state.requests.append(query)
        if state.mode == "garbage":
            return Response(b"<html>not json</html>\x00\xff", media_type="application/json")
        if state.mode == "huge":
            chunk = b" " * 65536

            async def huge() -> AsyncIterator[bytes]:
                for _ in range(state.huge_bytes // len(chunk)):
                    yield chunk

            return StreamingResponse(huge(), media_type="application/json")
        limit = min(int(query.get("limit", "30")), 1000)
        body = state.page(query.get("cursor"), limit, query.get("updated_since"))
        if state.mode == "drip":

            async def drip() -> AsyncIterator[bytes]:
                for i in range(len(body)):
                    await asyncio.sleep(state.drip_s)
                    yield body[i : i + 1]

            return StreamingResponse(drip(), media_type="application/json")
        return Response(body, media_type="application/json")

    return Starlette(routes=[Route("/v0.1/servers", servers)])


@contextmanager
def registry_server(state: RegistryState) -> Iterator[str]:
    """Serve ``state`` on loopback; yields the base URL."""
    with serve(build_app(state)) as port:
        yield f"http://127.0.0.1:{port}"
