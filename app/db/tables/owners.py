"""The tables of owner claims and what owners do (migration 0011), on the history store's metadata.

- ``claims``: one row per claim of a host (:mod:`app.claims`). ``id`` is the claim's public id,
  ``challenge`` the token the owner publishes at ``https://<host>/.well-known/mcp-sonde.json``
  (public by design: it proves only that whoever can write that file asked for it). ``state`` is
  ``pending`` (until ``expires_at``), ``verified`` or ``lapsed``; ``verified_at`` is the last
  successful verification (what the directory and badges show), ``next_check`` when it is
  checked again, ``failures`` the consecutive failed re-checks and ``last_reason`` why the last
  one failed. ``owner_token_sha256`` is the SHA-256 of the owner token issued at the first
  verification (the token itself is never stored). ``claimed_job`` is the re-check job handed out.
  ``method`` is how it is proved: ``well_known`` (the document) or ``dns_txt`` (a TXT record at
  ``_mcp-sonde.<host>``, migration 0012).
- ``owner_profiles``: the display name and description an owner set for one of their host's
  servers, shown before any registry entry's.
- ``owner_hosts``: per claimed host, whether the registry sweep of its endpoints is paused.
- ``owner_audit``: every owner action (``action``, the ``target`` server id if any, ``detail``
  without secret values), newest last; indexed by ``(host, id)``.
- ``credentialed_checks`` (migration 0012): per server, what each check made with a caller's
  credentials found, as names and counts only, for the owner of its host to read
  (:mod:`app.claims.credentialed`).
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, Index, Integer, String, Table

from app.db.tables.history import Key, Moment, metadata

#: Claim states.
PENDING, VERIFIED, LAPSED = "pending", "verified", "lapsed"
#: How a claim is proved (migration 0012).
WELL_KNOWN, DNS_TXT = "well_known", "dns_txt"

claims = Table(
    "claims",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("host", String(253), nullable=False),
    Column("challenge", String(64), nullable=False),
    Column("state", String(16), nullable=False),
    Column("created_at", Moment, nullable=False),
    Column("expires_at", Moment, nullable=False),
    Column("verified_at", Moment, nullable=True),
    Column("next_check", Moment, nullable=True),
    Column("failures", Integer, nullable=False),
    Column("last_reason", String(64), nullable=True),
    Column("owner_token_sha256", String(64), nullable=True, unique=True),
    Column("claimed_job", String(64), nullable=True),
    Column("method", String(16), nullable=False, server_default=WELL_KNOWN),
)
Index("ix_claims_host_state", claims.c.host, claims.c.state)
Index("ix_claims_state_next_check", claims.c.state, claims.c.next_check)

owner_profiles = Table(
    "owner_profiles",
    metadata,
    Column("server_id", String(24), primary_key=True),
    Column("host", String(253), nullable=False),
    Column("display_name", String(100), nullable=True),
    Column("description", String(1000), nullable=True),
    Column("updated_at", Moment, nullable=False),
)

owner_hosts = Table(
    "owner_hosts",
    metadata,
    Column("host", String(253), primary_key=True),
    Column("sweeps_paused", Boolean, nullable=False),
    Column("updated_at", Moment, nullable=False),
)

owner_audit = Table(
    "owner_audit",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("claim", String(32), nullable=False),
    Column("host", String(253), nullable=False),
    Column("action", String(32), nullable=False),
    Column("target", String(64), nullable=True),
    Column("detail", JSON, nullable=True),
    Column("at", Moment, nullable=False),
)
Index("ix_owner_audit_host_id", owner_audit.c.host, owner_audit.c.id)

credentialed_checks = Table(
    "credentialed_checks",
    metadata,
    Column("id", Key, primary_key=True, autoincrement=True),
    Column("server_id", String(24), nullable=False),
    Column("host", String(253), nullable=False),
    Column("checked_at", Moment, nullable=False),
    Column("summary", JSON, nullable=False),
)
Index("ix_credentialed_checks_server_id_id", credentialed_checks.c.server_id, credentialed_checks.c.id)
