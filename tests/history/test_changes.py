"""Tool-list changes and baselines in the history store, on SQLite and PostgreSQL: a change per
consecutive pair of complete lists, a late run put in its place, baselines by run, fingerprint
and approval, and pruning that keeps what changes and baselines point to."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.baselines.store import Baselines
from app.history.records import server_id_of
from app.history.store import SqlHistory
from tests.history.test_store import T0, TOOLS, run

pytestmark = pytest.mark.anyio
SERVER = server_id_of("https://mcp.example.com/mcp")
STRICT = ({"name": "add", "inputSchema": {"type": "object", "required": ["a"]}}, TOOLS[1])
WIDER = (*TOOLS, {"name": "sum", "inputSchema": {"type": "object"}})


async def test_a_change_is_kept_between_consecutive_complete_lists(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1))  # the same list: no change
    await history.record(run(2, tools=None, status="timeout", reason="handshake_timeout"))  # no list: no break
    await history.record(run(3, tools=WIDER, schema_fingerprint="9" * 64))
    await history.record(run(4, tools=STRICT, schema_fingerprint="7" * 64))
    found = await history.changes(SERVER)
    assert [(c.run_id, c.verdict) for c in found] == [(run(4).run_id, "breaking"), (run(3).run_id, "compatible")]
    newest = found[0]
    assert newest.before == ("9" * 64, "1" * 64) and newest.after == ("7" * 64, "1" * 64)
    assert newest.observed_at == run(4).observed_at
    by_tool = {(t["name"], t["change"]): t["verdict"] for t in newest.diff["tools"]}
    assert by_tool == {("add", "input_schema_changed"): "breaking", ("sum", "removed"): "breaking"}
    assert newest.diff["tools"][0]["findings"][0]["pointer"].startswith("/required")


async def test_changes_page_by_limit_and_before(history: SqlHistory) -> None:
    lists = (TOOLS, WIDER)
    for n in range(6):
        await history.record(run(n, tools=lists[n % 2]))
    assert len(await history.changes(SERVER)) == 5
    first = await history.changes(SERVER, limit=2)
    assert [c.run_id for c in first] == [run(5).run_id, run(4).run_id]
    rest = await history.changes(SERVER, limit=50, before=first[-1].observed_at)
    assert [c.run_id for c in rest] == [run(n).run_id for n in (3, 2, 1)]
    assert await history.changes(server_id_of("https://other.example/mcp")) == []


async def test_a_run_stored_late_takes_its_place_among_the_changes(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(2))
    await history.record(run(1, tools=WIDER))  # observed between the two, stored after both
    found = await history.changes(SERVER)
    assert [(c.run_id, c.verdict) for c in found] == [(run(2).run_id, "breaking"), (run(1).run_id, "compatible")]
    await history.record(run(3, tools=WIDER))
    await history.record(run(-1, tools=WIDER))  # earliest of all, stored last: run 0 now changes from it
    found = await history.changes(SERVER)
    assert [(c.run_id, c.verdict) for c in found] == [
        (run(3).run_id, "compatible"),
        (run(2).run_id, "breaking"),
        (run(1).run_id, "compatible"),
        (run(0).run_id, "breaking"),
    ]


async def test_a_toolset_is_found_by_run_and_by_fingerprint(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, tools=WIDER, schema_fingerprint="9" * 64))
    by_run = await history.toolset(run_id=run(1).run_id)
    assert by_run is not None and by_run.definitions == WIDER and by_run.run_id == run(1).run_id
    by_print = await history.toolset(schema_fingerprint="8" * 64)
    assert by_print is not None and by_print.definitions == TOOLS and by_print.schema_fingerprint == "8" * 64
    assert await history.toolset(run_id="e" * 64) is None  # (no run is called so)
    assert await history.toolset(schema_fingerprint="0" * 64) is None
    await history.record(run(2, tools=None, status="timeout", reason="handshake_timeout"))
    assert await history.toolset(run_id=run(2).run_id) is None  # a run with no complete list


async def test_a_baseline_is_approved_from_a_run_of_the_server_and_replaced(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(1, tools=WIDER, schema_fingerprint="9" * 64))
    await history.record(run(2, url="https://other.example/mcp", host="other.example"))
    assert await Baselines(history.engine).baseline(SERVER) is None
    assert await Baselines(history.engine).approve(SERVER, run(2).run_id, "host_proof") is None  # another server's run
    assert await Baselines(history.engine).approve(SERVER, "f" * 64, "host_proof") is None
    approved = await Baselines(history.engine).approve(SERVER, run(0).run_id, "payment")
    assert approved is not None and approved.toolset.definitions == TOOLS
    again = await Baselines(history.engine).approve(SERVER, run(1).run_id, "host_proof")
    kept = await Baselines(history.engine).baseline(SERVER)
    assert again is not None and kept is not None
    assert (kept.toolset.definitions, kept.approved_by) == (WIDER, "host_proof")
    assert kept.approved_at >= approved.approved_at


async def test_prune_keeps_the_lists_changes_and_baselines_point_to(history: SqlHistory) -> None:
    await history.record(run(0))
    await history.record(run(30, tools=WIDER))
    await history.record(run(60, tools=STRICT))
    await Baselines(history.engine).approve(SERVER, run(0).run_id, "host_proof")
    assert await history.prune(T0 + timedelta(hours=45)) == 2
    baseline = await Baselines(history.engine).baseline(SERVER)
    assert baseline is not None and baseline.toolset.definitions == TOOLS  # its runs are gone, it stays
    found = await history.changes(SERVER)
    assert [c.run_id for c in found] == [run(60).run_id]  # the changes of pruned runs went with them
    assert found[0].before[0] == "8" * 64


async def test_lists_equal_once_cleaned_but_not_as_served_are_an_unknown_change(history: SqlHistory) -> None:
    """Regression: two lists that differed only past what cleaned definitions keep were stored
    as one tool set, and no change was recorded; their fingerprints tell them apart."""
    await history.record(run(0))
    await history.record(run(1, schema_fingerprint="9" * 64))  # the same cleaned list, another print
    (change,) = await history.changes(SERVER)
    assert change.verdict == "unknown" and change.before[0] == "8" * 64 and change.after[0] == "9" * 64
    assert change.diff["verdict"] == "unchanged"  # nothing the kept definitions show


async def test_a_scheduled_run_is_found_by_its_attestation_id_too(history: SqlHistory) -> None:
    """Regression: a job's run is stored under the job's id, but its answers and webhooks name it by
    its attestation id; that id was refused as a baseline (404 run_not_found / baseline_not_found)."""
    stored = run(0)
    assert stored.run_id != stored.attestation_id
    await history.record(stored)
    by_attestation = await history.toolset(run_id=stored.attestation_id, server_id=SERVER)
    assert by_attestation is not None and by_attestation.definitions == TOOLS
    approved = await Baselines(history.engine).approve(SERVER, stored.attestation_id, "payment")
    assert approved is not None and approved.toolset.definitions == TOOLS
