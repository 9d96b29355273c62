"""Baseline lookups on SQLite and PostgreSQL: the newest complete list of a server (a late run
does not take its place, a run without a list is passed over), a run looked up within one
server, the approved baseline with its newest kept run, and an approval undone by its confirmation."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from app.baselines.store import Baseline, BaselineHeld, Baselines
from app.history.store import SqlHistory
from tests.history.test_changes import SERVER, WIDER
from tests.history.test_store import T0, TOOLS, run

pytestmark = pytest.mark.anyio


class Refused(Exception):
    pass


async def test_the_newest_complete_list_of_a_server(history: SqlHistory) -> None:
    assert await history.toolset(server_id=SERVER) is None  # never seen
    await history.record(run(0))
    await history.record(run(2, tools=WIDER, schema_fingerprint="9" * 64))
    await history.record(run(3, tools=None, status="timeout", reason="handshake_timeout"))  # no list: passed over
    await history.record(run(1, tools=TOOLS))  # stored late: observed before run 2
    await history.record(run(4, url="https://other.example/mcp", host="other.example"))
    latest = await history.toolset(server_id=SERVER)
    assert latest is not None
    assert (latest.run_id, latest.definitions, latest.schema_fingerprint) == (run(2).run_id, WIDER, "9" * 64)


async def test_a_run_is_looked_up_within_its_server(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, url="https://other.example/mcp", host="other.example"))
    found = await history.toolset(run_id=run(0).run_id, server_id=SERVER)
    assert found is not None and found.run_id == run(0).run_id and found.definitions == TOOLS
    assert await history.toolset(run_id=run(1).run_id, server_id=SERVER) is None  # another server's run
    assert await history.toolset(run_id=run(1).run_id) is not None


async def test_the_approved_baseline_names_the_newest_kept_run_that_read_it(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, tools=WIDER, schema_fingerprint="9" * 64))
    await history.record(run(2))  # the first list again
    approved = await Baselines(history.engine).approve(SERVER, run(0).run_id, "host_proof")
    assert approved is not None and approved.toolset.run_id == run(0).run_id
    kept = await Baselines(history.engine).baseline(SERVER, newest_run=True)
    assert kept is not None and kept.toolset.run_id == run(2).run_id  # the newest run that read it
    assert kept.toolset.definitions_sha256 == approved.toolset.definitions_sha256
    plain = await Baselines(history.engine).baseline(SERVER)
    assert plain is not None and plain.toolset.run_id is None and plain.toolset == replace(kept.toolset, run_id=None)
    await history.prune(T0 + timedelta(hours=5))
    gone = await Baselines(history.engine).baseline(SERVER, newest_run=True)
    assert gone is not None and gone.toolset.run_id is None and gone.toolset.definitions == TOOLS


async def test_an_approval_whose_confirmation_fails_is_undone(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, tools=WIDER, schema_fingerprint="9" * 64))
    assert await Baselines(history.engine).approve(SERVER, run(0).run_id, "payment") is not None
    seen: list[Baseline] = []

    async def refuse(baseline: Baseline) -> None:
        seen.append(baseline)
        raise Refused

    with pytest.raises(Refused):
        await Baselines(history.engine).approve(SERVER, run(1).run_id, "payment", refuse)
    assert [(b.toolset.definitions, b.approved_by) for b in seen] == [(WIDER, "payment")]
    kept = await Baselines(history.engine).baseline(SERVER)
    assert kept is not None and (kept.toolset.definitions, kept.approved_by) == (TOOLS, "payment")

    async def accept(baseline: Baseline) -> None:
        seen.append(baseline)

    confirmed = await Baselines(history.engine).approve(SERVER, run(1).run_id, "payment", accept)
    assert confirmed is not None and confirmed == seen[-1]
    kept = await Baselines(history.engine).baseline(SERVER)
    assert kept is not None and (kept.toolset.definitions, kept.approved_by) == (WIDER, "payment")


async def test_only_a_host_proof_replaces_the_host_s_approval(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, tools=WIDER, schema_fingerprint="9" * 64))
    assert await Baselines(history.engine).approve(SERVER, run(0).run_id, "host_proof") is not None
    confirmed: list[Baseline] = []

    async def settle(baseline: Baseline) -> None:
        confirmed.append(baseline)

    with pytest.raises(BaselineHeld):
        await Baselines(history.engine).approve(SERVER, run(1).run_id, "payment", settle)
    assert confirmed == []  # refused before the confirmation: nothing would be settled
    kept = await Baselines(history.engine).baseline(SERVER)
    assert kept is not None and (kept.toolset.definitions, kept.approved_by) == (TOOLS, "host_proof")
    assert await Baselines(history.engine).approve(SERVER, run(1).run_id, "host_proof") is not None
    kept = await Baselines(history.engine).baseline(SERVER)
    assert kept is not None and (kept.toolset.definitions, kept.approved_by) == (WIDER, "host_proof")
