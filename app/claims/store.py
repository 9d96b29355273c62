"""Claims, owner tokens, owner profiles, paused sweeps and the audit log, in the history database.

Policy:

- A claim is opened ``pending`` with a fresh challenge (256 bits) and lasts :data:`PENDING_S`
  unverified. Its first successful verification makes it ``verified`` and issues the owner token
  (256 bits, ``own_`` prefixed), returned once and kept only as its SHA-256 (a database read
  yields no token). Later verifications renew ``verified_at``, the date the directory and
  badges show.
- A verified claim is checked again every :data:`RECHECK_S`. When its host answers without the
  challenge (the file or the token is gone) it lapses at once; when the host cannot be reached
  it lapses after :data:`LAPSE_AFTER` failed checks in a row. A lapsed claim's token acts no
  more; the owner claims again.
- An owner token acts for its claim's host only: a server of another host is ``404`` to it.
- Every owner action is a row of ``owner_audit`` (what, on which server, when, a detail
  without secret values), in the transaction of the action itself.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.db.claim import Read, claim_due
from app.db.tables.history import baselines, servers
from app.db.tables.owners import LAPSED, PENDING, VERIFIED, WELL_KNOWN, claims, owner_audit, owner_hosts, owner_profiles
from app.directory.rows import refresh_host

PENDING_S = 7 * 86_400
RECHECK_S = 86_400
LAPSE_AFTER = 3
AUDIT_PAGE = 100


def utc(moment: datetime | None) -> datetime | None:
    """``moment`` as an aware UTC time (SQLite gives naive ones back)."""
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def token_sha256(token: str) -> str:
    """How an owner token is kept."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim as stored (never its owner token)."""

    id: str
    host: str
    challenge: str
    state: str
    created_at: datetime
    expires_at: datetime
    verified_at: datetime | None
    failures: int
    last_reason: str | None
    method: str = WELL_KNOWN

    @classmethod
    def of(cls, row: Mapping[Any, Any]) -> Claim:
        """The claim of a ``claims`` row."""
        return cls(
            row["id"], row["host"], row["challenge"], row["state"], utc(row["created_at"]) or datetime.now(UTC),
            utc(row["expires_at"]) or datetime.now(UTC), utc(row["verified_at"]), row["failures"], row["last_reason"],
            row["method"],
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class OwnerAction:
    """One row of the audit log."""

    action: str
    target: str | None
    detail: dict[str, Any] | None
    at: datetime


class ClaimStore:
    """Claims and what owners do (see the module docs)."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def open(self, host: str, method: str = WELL_KNOWN, now: datetime | None = None) -> Claim:
        """A new pending claim of ``host``, to be proved by ``method``."""
        moment = now or datetime.now(UTC)
        row = {
            "id": "clm_" + secrets.token_hex(12), "host": host, "challenge": secrets.token_urlsafe(32),
            "state": PENDING, "created_at": moment, "expires_at": moment + timedelta(seconds=PENDING_S),
            "verified_at": None, "next_check": None, "failures": 0, "last_reason": None,
            "owner_token_sha256": None, "claimed_job": None, "method": method,
        }  # fmt: skip
        async with self.engine.begin() as db:
            await db.execute(insert(claims).values(**row))
        return Claim.of(row)

    async def get(self, claim_id: str, now: datetime | None = None) -> Claim | None:
        """The claim ``claim_id``; ``None`` when unknown or pending past its time."""
        async with self.engine.connect() as db:
            row = (await db.execute(select(claims).where(claims.c.id == claim_id))).mappings().first()
        if row is None:
            return None
        claim = Claim.of(row)
        if claim.state == PENDING and claim.expires_at <= (now or datetime.now(UTC)):
            return None
        return claim

    async def verified(self, claim: Claim, now: datetime | None = None) -> str | None:
        """Record a successful verification of ``claim``; the owner token when this one issues it."""
        moment = now or datetime.now(UTC)
        token = "own_" + secrets.token_urlsafe(32)
        values: dict[str, Any] = {
            "state": VERIFIED, "verified_at": moment, "next_check": moment + timedelta(seconds=RECHECK_S),
            "failures": 0, "last_reason": None,
        }  # fmt: skip
        async with self.engine.begin() as db:
            issued = await db.execute(
                update(claims)
                .where(claims.c.id == claim.id, claims.c.owner_token_sha256.is_(None))
                .values(**values, owner_token_sha256=token_sha256(token))
            )
            first = issued.rowcount == 1
            if not first:
                await db.execute(
                    update(claims).where(claims.c.id == claim.id, claims.c.state != LAPSED).values(**values)
                )
            await _audit(db, claim, "claim_verified", None, {"first": first}, moment)
            await refresh_host(db, claim.host)  # (the directory shows the claim's date)
        return token if first else None

    async def failed(self, claim: Claim, reason: str, gone: bool, now: datetime | None = None) -> str:
        """Record a failed re-check of a verified claim; the claim's state after it."""
        moment = now or datetime.now(UTC)
        failures = claim.failures + 1
        state = LAPSED if gone or failures >= LAPSE_AFTER else claim.state
        async with self.engine.begin() as db:
            await db.execute(
                update(claims)
                .where(claims.c.id == claim.id)
                .values(
                    state=state, failures=failures, last_reason=reason,
                    next_check=None if state == LAPSED else moment + timedelta(seconds=RECHECK_S),
                )
            )  # fmt: skip
            if state == LAPSED:
                await _audit(db, claim, "claim_lapsed", None, {"reason": reason}, moment)
                await refresh_host(db, claim.host)
        return state

    async def due(self, now: datetime, limit: int) -> list[Claim]:
        """Claim up to ``limit`` verified claims due for their re-check at ``now``: each is handed
        to one caller only (:func:`app.db.claim.claim_due`), its next check moved a day on."""
        hold = now + timedelta(seconds=RECHECK_S)

        async def move(_row: Read) -> dict[str, Any]:
            return {"next_check": hold}

        ids: list[str] = []
        async with self.engine.begin() as db:
            async for (key, _due), _moved in claim_due(
                db, claims, (), due=claims.c.next_check, now=now, limit=limit, move=move,
                where=(claims.c.state == VERIFIED,), still=(claims.c.state == VERIFIED,),
            ):  # fmt: skip
                ids.append(key)
        if not ids:
            return []
        async with self.engine.connect() as db:
            rows = (await db.execute(select(claims).where(claims.c.id.in_(ids)))).mappings().all()
        return [Claim.of(row) for row in rows]

    async def by_token(self, token: str) -> Claim | None:
        """The verified claim whose owner token is ``token``."""
        query = select(claims).where(claims.c.owner_token_sha256 == token_sha256(token), claims.c.state == VERIFIED)
        async with self.engine.connect() as db:
            row = (await db.execute(query)).mappings().first()
        return None if row is None else Claim.of(row)

    async def server_of(self, claim: Claim, server_id: str) -> int | None:
        """The row id of the server ``server_id`` when it is on the claim's host."""
        query = select(servers.c.id).where(servers.c.server_id == server_id, servers.c.host == claim.host)
        async with self.engine.connect() as db:
            found: int | None = await db.scalar(query)
        return found

    async def set_profile(self, claim: Claim, server_id: str, name: str | None, description: str | None) -> None:
        """Set the display name and description shown first for ``server_id`` (audited)."""
        moment = datetime.now(UTC)
        async with self.engine.begin() as db:
            await db.execute(delete(owner_profiles).where(owner_profiles.c.server_id == server_id))
            await db.execute(
                insert(owner_profiles).values(
                    server_id=server_id, host=claim.host, display_name=name, description=description, updated_at=moment
                )
            )
            detail = {"display_name": name is not None, "description": description is not None}
            await _audit(db, claim, "profile_set", server_id, detail, moment)
            await refresh_host(db, claim.host)

    async def set_sweeps(self, claim: Claim, paused: bool) -> None:
        """Pause or resume registry sweeps of the claim's host (audited)."""
        moment = datetime.now(UTC)
        async with self.engine.begin() as db:
            await db.execute(delete(owner_hosts).where(owner_hosts.c.host == claim.host))
            await db.execute(insert(owner_hosts).values(host=claim.host, sweeps_paused=paused, updated_at=moment))
            await _audit(db, claim, "sweeps_paused" if paused else "sweeps_resumed", None, None, moment)

    async def sweeps_paused(self, host: str) -> bool:
        """Whether the owner of ``host`` paused its sweeps."""
        async with self.engine.connect() as db:
            paused = await db.scalar(select(owner_hosts.c.sweeps_paused).where(owner_hosts.c.host == host))
        return bool(paused)

    async def clear_baseline(self, claim: Claim, server: int, server_id: str) -> bool:
        """Clear the approved baseline of a server of the claim's host (audited); whether there was one."""
        moment = datetime.now(UTC)
        async with self.engine.begin() as db:
            cleared = await db.execute(delete(baselines).where(baselines.c.server == server))
            await _audit(db, claim, "baseline_cleared", server_id, {"had_one": cleared.rowcount > 0}, moment)
        return bool(cleared.rowcount)

    async def audit(self, claim: Claim, action: str, target: str | None, detail: dict[str, Any] | None) -> None:
        """Record an owner action done elsewhere (a baseline approval)."""
        async with self.engine.begin() as db:
            await _audit(db, claim, action, target, detail, datetime.now(UTC))

    async def audit_log(self, host: str, limit: int = AUDIT_PAGE) -> list[OwnerAction]:
        """The newest ``limit`` owner actions on ``host``, newest first."""
        query = select(owner_audit).where(owner_audit.c.host == host).order_by(owner_audit.c.id.desc()).limit(limit)
        async with self.engine.connect() as db:
            rows = (await db.execute(query)).mappings().all()
        return [OwnerAction(r["action"], r["target"], r["detail"], utc(r["at"]) or datetime.now(UTC)) for r in rows]


async def _audit(
    db: AsyncConnection, claim: Claim, action: str, target: str | None, detail: dict[str, Any] | None, at: datetime
) -> None:
    await db.execute(
        insert(owner_audit).values(claim=claim.id, host=claim.host, action=action, target=target, detail=detail, at=at)
    )
