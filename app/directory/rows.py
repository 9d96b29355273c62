"""Keeping the directory rows current (:mod:`app.db.tables.directory`).

A server's row is made again from the stored facts whenever one of them changes: after a run is
stored (inside :meth:`app.history.store.SqlHistory.record`'s transaction, from the server row's
latest run, so a run stored late never replaces a newer one), and after the registry mirror
imports an entry that lists the server (:func:`app.registry.importer.import_entries`, in the
page's transaction). Migration 0007 makes the rows of servers stored before it
(:func:`rebuild_sync`).

Categories: the check suite's rule (:func:`app.suite.category.categorise`) over the names of
the latest complete tool list gives ``tool_category``; the row's ``category`` is that, unless
:data:`TEMPLATE_SERVERS` or more servers' latest lists are that very tool set (same
``definitions_sha256``): such a list is a gateway's or a template's, and says nothing of what
one server does. After a row changes tool set, the rows of its old and new tool sets are
re-counted (:func:`recount`).

Who speaks for the server (its title, description and registry name) is
:mod:`app.directory.identity`'s choice among the registry entries that list it with a remote
that was probed, and its verified owner's profile; ``claimed_at`` is the last successful
verification of a claim of its host. A claim or an owner's profile changing makes the host's
rows again (:func:`refresh_host`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Select, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.migrate import DataSteps
from app.db.tables.directory import directory
from app.db.tables.history import changes, runs, server_days, servers, toolsets
from app.db.tables.owners import VERIFIED, claims, owner_profiles
from app.directory.identity import Identity, identity_of, probed_entries
from app.history import report
from app.history.records import Day
from app.suite.category import categorise

#: This many servers or more listing one tool set identically: a gateway or a template, no category.
TEMPLATE_SERVERS = 20
#: Most characters of tool names kept for the text search (names newline-joined).
TOOL_NAMES_CHARS = 8000
#: A rate over this many days (the uptime sort).
UPTIME_DAYS = 30


def auth_of(status: str | None) -> str | None:
    """``gated`` (the server asks for sign-in), ``open`` (it answered without), else unknown."""
    return {"auth": "gated", "ok": "open"}.get(status or "")


def _facts(server: int) -> Select[Any]:
    return (
        select(
            servers.c.server_id, servers.c.url, servers.c.host, servers.c.last_seen,
            runs.c.status, runs.c.reason, runs.c.protocol_version, runs.c.transport, runs.c.attestation_id,
            runs.c.result,
            toolsets.c.definitions_sha256, toolsets.c.tool_count, toolsets.c.definitions,
        )
        .outerjoin(runs, runs.c.id == servers.c.latest_run)
        .outerjoin(toolsets, toolsets.c.id == servers.c.latest_toolset)
        .where(servers.c.id == server)
    )  # fmt: skip


def _days(server: int, since: date) -> Select[Any]:
    return select(server_days).where(server_days.c.server == server, server_days.c.day >= since)


def _last_change(server: int) -> Select[Any]:
    return select(func.max(changes.c.observed_at)).where(changes.c.server == server)


def _claimed(host: str) -> Select[Any]:
    return select(func.max(claims.c.verified_at)).where(claims.c.host == host, claims.c.state == VERIFIED)


def _profile(server_id: str) -> Select[Any]:
    """The owner's profile of the server, while a claim of its host is verified."""
    verified = select(claims.c.id).where(claims.c.host == owner_profiles.c.host, claims.c.state == VERIFIED)
    return select(owner_profiles).where(owner_profiles.c.server_id == server_id, verified.exists())


def server_title(result: bytes | None) -> str | None:
    """The ``title``, else the ``name``, of the ``serverInfo`` a stored run recorded (its result as
    stored: zlib-compressed JSON; as the probe cleaned and capped it); ``None`` when it named none."""
    try:
        server = json.loads(zlib.decompress(result)).get("server") if result else None
    except (ValueError, AttributeError, zlib.error):
        return None
    if not isinstance(server, dict):
        return None
    for key in ("title", "name"):
        value = server.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()[:128]
    return None


def _names(definitions: bytes | None) -> list[str]:
    if definitions is None:
        return []
    listed = json.loads(zlib.decompress(definitions))
    return [str(tool.get("name", "")) for tool in listed if isinstance(tool, dict)]


def compose(
    facts: Any, days: list[Day], last_changed: datetime | None, who: Identity, claimed_at: datetime | None, today: date
) -> dict[str, Any]:
    """The directory row's values from what is stored (pure)."""
    names = _names(facts.definitions)
    category = categorise(names)
    joined = "\n".join(names)[:TOOL_NAMES_CHARS]
    rate = report.rates(days, today)[f"{UPTIME_DAYS}d"]["rate"]
    name, title, description = who.name, who.title, who.description
    own = server_title(facts.result)
    searched = "\n".join(part for part in (facts.url, name, title, own, description, joined) if part)
    return {
        "server_id": facts.server_id,
        "url": facts.url,
        "host": facts.host,
        "status": facts.status,
        "reason": facts.reason,
        "protocol_version": facts.protocol_version,
        "transport": facts.transport,
        "auth": auth_of(facts.status),
        "last_checked": facts.last_seen,
        "last_changed": last_changed,
        "uptime_30d": -1.0 if rate is None else float(rate),
        "latest_attestation": facts.attestation_id,
        "toolset_digest": facts.definitions_sha256,
        "tool_count": facts.tool_count,
        "tool_names": joined if facts.definitions is not None else None,
        "tool_category": category.topic if category is not None else None,
        "category": category.topic if category is not None else None,
        "registry_entry": who.entry,
        "name": name,
        "title": title,
        "description": description,
        "named_by": who.named_by,
        "server_title": own,
        "publishers": who.publishers,
        "claimed_at": claimed_at,
        "sort_name": (name or facts.host).lower()[:253],
        "search_text": searched.lower(),
    }


def _upsert(dialect: str, server: int, values: Mapping[str, Any]) -> Any:
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    made = insert(directory).values(server=server, **values)
    return made.on_conflict_do_update(index_elements=[directory.c.server], set_=dict(values))


def _count(digest: str) -> Select[Any]:
    return select(func.count()).select_from(directory).where(directory.c.toolset_digest == digest)


def _recategorise(digest: str, shared: bool) -> Any:
    rows = update(directory).where(directory.c.toolset_digest == digest)
    if shared:  # (only the rows still showing one: a gateway's thousands are not rewritten each run)
        return rows.where(directory.c.category.is_not(None)).values(category=None)
    return rows.values(category=directory.c.tool_category)


def _today() -> date:
    return datetime.now(UTC).date()


async def refresh(db: AsyncConnection, server: int) -> None:
    """Make the row of the server with key ``server`` again (see the module docs)."""
    facts = (await db.execute(_facts(server))).one()
    today = _today()
    since = today - timedelta(days=UPTIME_DAYS - 1)
    days = [Day(r.day, r.up, r.gated, r.down, r.left_out) for r in (await db.execute(_days(server, since))).all()]
    last_changed = await db.scalar(_last_change(server))
    who = identity_of((await db.execute(probed_entries(facts.server_id))).all(),
                      (await db.execute(_profile(facts.server_id))).first())  # fmt: skip
    claimed_at = await db.scalar(_claimed(facts.host))
    before = await db.scalar(select(directory.c.toolset_digest).where(directory.c.server == server))
    values = compose(facts, days, last_changed, who, claimed_at, today)
    await db.execute(_upsert(db.dialect.name, server, values))
    for digest in {before, values["toolset_digest"]} - {None}:
        assert digest is not None
        await recount(db, digest)


async def recount(db: AsyncConnection, digest: str) -> None:
    """Set ``category`` of the rows listing the tool set ``digest`` (see the module docs)."""
    shared = int(await db.scalar(_count(digest)) or 0) >= TEMPLATE_SERVERS
    await db.execute(_recategorise(digest, shared))


async def refresh_registry(db: AsyncConnection, server_ids: set[str]) -> None:
    """Make again the rows of the stored servers among ``server_ids`` (a registry import listed them)."""
    if not server_ids:
        return
    keys = (await db.execute(select(servers.c.id).where(servers.c.server_id.in_(sorted(server_ids))))).scalars()
    for key in list(keys):
        await refresh(db, int(key))


async def refresh_host(db: AsyncConnection, host: str) -> None:
    """Make again the rows of the stored servers on ``host`` (a claim or an owner's profile changed)."""
    for key in list((await db.execute(select(servers.c.id).where(servers.c.host == host))).scalars()):
        await refresh(db, int(key))


def rebuild_sync(db: Connection) -> int:
    """Make the row of every stored server (migration 0007, on its synchronous connection); how many."""
    today = _today()
    since = today - timedelta(days=UPTIME_DAYS - 1)
    digests: set[str] = set()
    made = 0
    for server in list(db.execute(select(servers.c.id)).scalars()):
        facts = db.execute(_facts(server)).one()
        days = [Day(r.day, r.up, r.gated, r.down, r.left_out) for r in db.execute(_days(server, since)).all()]
        who = identity_of(
            db.execute(probed_entries(facts.server_id)).all(), db.execute(_profile(facts.server_id)).first()
        )
        values = compose(facts, days, db.scalar(_last_change(server)), who, db.scalar(_claimed(facts.host)), today)
        db.execute(_upsert(db.dialect.name, server, values))
        if values["toolset_digest"] is not None:
            digests.add(values["toolset_digest"])
        made += 1
    for digest in sorted(digests):
        shared = int(db.scalar(_count(digest)) or 0) >= TEMPLATE_SERVERS
        db.execute(_recategorise(digest, shared))
    return made


#: The data steps of the migrations (:mod:`app.db.migrate`): an upgrade that changed where a row's
#: identity comes from (revision 0011, so also every upgrade that made the directory's table in
#: 0007) makes the row of every server already stored, once.
MIGRATION_STEPS: DataSteps = {"0011": rebuild_sync}
