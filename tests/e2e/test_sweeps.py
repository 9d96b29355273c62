"""The registry mirror and its sweep, end to end on each broker: the scheduler hands out the
registry sync, the sync imports the local registry's entries (their remotes: MCP servers on
loopback), the sweep source hands out one probe job per endpoint, workers probe, and each
endpoint's run is in the history once per cycle; an opted-out host is never contacted."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime

import httpx2
from sqlalchemy import func, select, update

from app.db.tables.history import runs, servers
from app.db.tables.registry import registry_endpoints, registry_sync
from app.history.records import server_id_of
from tests.e2e.conftest import Deploy, Deployment, wait_until
from tests.jobs.fleet import Counted
from tests.servers.raw import RawServer
from tests.servers.registry import RegistryState, registry_server, response

ENDPOINTS = 6
ADMIN = "e2e-admin-token-0123456789"


def swept(deployment: Deployment) -> list[tuple[str, str | None, str | None, str | None]]:
    """``(url, claimed job, finished job, last status)`` of every swept endpoint."""
    table = registry_endpoints
    query = select(table.c.url, table.c.claimed_job, table.c.finished_job, table.c.last_status).where(table.c.swept)
    return [(row[0], row[1], row[2], row[3]) for row in deployment.sql(query)]


def runs_by_server(deployment: Deployment) -> Counter[str]:
    query = select(servers.c.server_id, func.count()).join(runs, runs.c.server == servers.c.id)
    return Counter(dict(deployment.sql(query.group_by(servers.c.server_id))))


def cycle(deployment: Deployment) -> None:
    """The test's clock: every swept endpoint due now (a day on, without waiting a day)."""
    deployment.sql(update(registry_endpoints).where(registry_endpoints.c.swept).values(next_due=datetime.now(UTC)))


def test_a_sweep_cycle_stores_each_endpoint_once_and_never_contacts_an_opted_out_host(
    deploy: Deploy, raw: RawServer
) -> None:
    counted = Counted()
    urls = []
    for i in range(ENDPOINTS):
        raw.routes[f"/mcp/{i}"] = counted
        urls.append(raw.url(f"/mcp/{i}"))
    raw.routes["/mcp/out"] = counted
    opted_out = raw.url("/mcp/out", host="localhost")
    entries = [response(f"io.example.e2e/server-{i}", "1.0.0", [{"type": "streamable-http", "url": url}])
               for i, url in enumerate(urls)]  # fmt: skip
    entries.append(response("io.example.e2e/opted-out", "1.0.0", [{"type": "streamable-http", "url": opted_out}]))
    state = RegistryState(entries=entries)
    with registry_server(state) as registry, deploy(registry_url=registry, admin_token=ADMIN) as deployment:
        added = httpx2.post(f"{deployment.base}/v1/admin/optout", json={"item": "localhost"},
                            headers={"authorization": f"Bearer {ADMIN}"}, timeout=10)  # fmt: skip
        assert added.status_code == 201, added.text
        synced = wait_until(lambda: len(swept(deployment)) == ENDPOINTS + 1, 60, "the registry synced", deployment)
        [(report,)] = deployment.sql(select(registry_sync.c.last_report))
        for turn in (1, 2):
            cycle(deployment)
            wait_until(
                lambda: sum(1 for row in swept(deployment) if row[3] not in (None, "skipped")) == ENDPOINTS
                and all(row[1] == row[2] for row in swept(deployment) if row[0] != opted_out),
                90, f"sweep cycle {turn} heard", deployment,
            )  # fmt: skip
            wait_until(lambda n=ENDPOINTS * turn: sum(runs_by_server(deployment).values()) == n, 30,  # type: ignore[misc]
                       f"cycle {turn}'s runs stored", deployment)  # fmt: skip
            if turn == 1:
                first = {row[0]: row[2] for row in swept(deployment)}
        time.sleep(2)  # (a few ticks more: nothing is handed out again before it is due)
        rows = {row[0]: row for row in swept(deployment)}
        stored = runs_by_server(deployment)
        server = httpx2.get(f"{deployment.base}/v1/servers/{server_id_of(urls[0])}", timeout=10).json()
        envelope = httpx2.get(f"{deployment.base}/v1/attestations/{server['latest']['attestation_id']}", timeout=10)
        run_ids = dict(deployment.sql(select(runs.c.run_id, runs.c.attestation_id).join(servers)
                                      .where(servers.c.server_id == server_id_of(urls[0]))))  # fmt: skip
    assert report["stopped"] == "complete" and report["entries"] == ENDPOINTS + 1, report
    assert synced < 60 and len(state.requests) >= 1
    assert stored == Counter({server_id_of(url): 2 for url in urls})  # once per cycle, two cycles
    assert all(counted.paths[f"/mcp/{i}"] == 2 for i in range(ENDPOINTS)), dict(counted.paths)
    assert counted.paths["/mcp/out"] == 0 and "localhost" not in counted.starts
    assert not [r for r in raw.seen if r.headers.get("host", "").startswith("localhost")]
    assert rows[opted_out][1:] == (None, None, "skipped")
    assert all(rows[url][2] in run_ids and rows[url][2] != first[url] for url in urls[:1])
    assert server["latest"]["status"] == "ok" and server["url"] == urls[0]
    assert envelope.status_code == 200, envelope.text
    assert server["latest"]["attestation_id"] in run_ids.values()
