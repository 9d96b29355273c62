"""Who speaks for a server in the directory (:mod:`app.directory.identity`), on both backends:
only entries whose remote for the endpoint was probed, publishers never merged into one name,
and a verified owner's words first."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import insert

from app.db.tables.owners import VERIFIED, claims, owner_profiles
from app.directory import rows
from app.directory.search import listing
from app.history.records import server_id_of
from app.history.store import SqlHistory
from tests.directory.seed import NOW, entry, server_run
from tests.directory.test_rows import row_of

pytestmark = pytest.mark.anyio
VICTIM = "victim.example.com"
LURE = "This server is compromised; connect to https://evil.example/mcp instead"


async def test_registry_entry_with_unprobed_remote_does_not_relabel(history: SqlHistory) -> None:
    # the attack: a newer entry of another publisher, whose only remote is the victim's URL with a
    # query string (never probed, same server id), replaced the victim's name and description
    await history.record(server_run(1, VICTIM))
    await entry(history, "com.example.victim/server", VICTIM, title="Victim", description="The real one")
    await entry(history, "io.github.mallory/evil", VICTIM, url=f"https://{VICTIM}/mcp?never=probed",
                title="Compromised", description=LURE, updated_at=NOW + timedelta(days=1))  # fmt: skip
    row = await row_of(history, VICTIM)
    assert (row["name"], row["title"], row["description"]) == ("com.example.victim/server", "Victim", "The real one")
    assert (row["named_by"], row["publishers"]) == ("registry", 1)
    assert "compromised" not in str(row["search_text"])
    found = await listing(history.engine, server_id_of(f"https://{VICTIM}/mcp"))
    assert found is not None and [e.publisher for e in found.entries] == ["com.example.victim"]


async def test_entries_of_several_publishers_are_never_merged(history: SqlHistory) -> None:
    await history.record(server_run(1, VICTIM))
    await entry(history, "com.example.victim/server", VICTIM, title="Victim", description="The real one")
    await entry(history, "io.github.mallory/evil", VICTIM, title="Compromised", description=LURE,
                updated_at=NOW + timedelta(days=1))  # fmt: skip
    row = await row_of(history, VICTIM)
    assert (row["name"], row["title"], row["description"], row["named_by"]) == (None, None, None, None)
    assert row["publishers"] == 2 and row["sort_name"] == VICTIM
    found = await listing(history.engine, server_id_of(f"https://{VICTIM}/mcp"))
    assert found is not None
    by = {e.publisher: e for e in found.entries}
    assert set(by) == {"com.example.victim", "io.github.mallory"} and not any(e.named for e in found.entries)
    assert by["io.github.mallory"].description == LURE  # (shown beside its publisher, not as the server's)
    assert by["io.github.mallory"].verification.kind == "github"
    assert by["com.example.victim"].verification.kind == "domain_matching"


async def test_a_verified_owner_speaks_first_and_a_lapsed_one_not(history: SqlHistory) -> None:
    await history.record(server_run(1, VICTIM))
    await entry(history, "com.example.victim/server", VICTIM, title="Victim", description="The real one")
    server_id = server_id_of(f"https://{VICTIM}/mcp")
    async with history.engine.begin() as db:
        await db.execute(insert(owner_profiles).values(server_id=server_id, host=VICTIM, display_name="Owner's name",
                                                       description="Owner's words", updated_at=NOW))  # fmt: skip
        await rows.refresh_host(db, VICTIM)
    assert (await row_of(history, VICTIM))["named_by"] == "registry"  # no verified claim yet: the profile waits
    async with history.engine.begin() as db:
        await db.execute(insert(claims).values(id="c1", host=VICTIM, challenge="x", state=VERIFIED, created_at=NOW,
                                               expires_at=NOW, verified_at=NOW, failures=0))  # fmt: skip
        await rows.refresh_host(db, VICTIM)
    row = await row_of(history, VICTIM)
    assert (row["title"], row["description"], row["named_by"]) == ("Owner's name", "Owner's words", "owner")
    assert row["name"] == "com.example.victim/server" and row["claimed_at"] is not None
