"""The five faults, one at a time, each under the running load, and how long recovery took.

Each fault returns a :class:`Recovery`: the seconds from undoing the fault (the restart; for the
scheduler, the kill itself) until the part was back, as the fault's own measure says
(``measure``), and the seconds until the first check answered through nginx without a 5xx
(``answer_s``, from the load's own answers).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from tests.drills.cluster import db
from tests.drills.cluster.load import Load, is_served
from tests.drills.cluster.plan import Plan
from tests.drills.cluster.targets import Targets
from tests.drills.cluster.topology import START_S, Cluster

#: Most seconds a part may take to come back before the drill calls it unrecovered.
RECOVERY_BOUND_S = 180.0


@dataclass
class Recovery:
    name: str
    injected: float  # time.monotonic()
    restored: float
    recover_s: float | None  # None: not within RECOVERY_BOUND_S
    measure: str
    answer_s: float | None = None
    note: str = ""


def until(condition: Callable[[], bool], bound_s: float = RECOVERY_BOUND_S, every_s: float = 0.25) -> float | None:
    """Seconds until ``condition()`` holds (``None`` past ``bound_s``)."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > bound_s:
            return None
        time.sleep(every_s)
    return time.monotonic() - started


def first_answer(load: Load, moment: float, bound_s: float = RECOVERY_BOUND_S) -> float | None:
    """Seconds from ``moment`` until the load's first check answered without a 5xx."""
    found = until(lambda: any(is_served(a) for a in load.since(moment)), bound_s)
    if found is None:
        return None
    return min(a.at for a in load.since(moment) if is_served(a)) - moment


def all_ready(cluster: Cluster) -> bool:
    return all(cluster.readyz(port).get("status") == "ready" for port in cluster.api_ports)


def worker_on_target(cluster: Cluster, targets: Targets) -> tuple[int, str]:
    """The worker with a connection open to the monitors' MCP server (mid-probe), else the first; its
    index and how it was chosen."""
    listing = subprocess.run(["ss", "-Htnp", "state", "established", f"( dport = :{targets.raw.port} )"],
                             capture_output=True, text=True, timeout=10, check=False).stdout  # fmt: skip
    pids = {int(pid) for pid in re.findall(r"pid=(\d+)", listing)}
    for index, proc in enumerate(cluster.workers):
        if proc.pid in pids:
            return index, "mid-probe (a connection to a monitor's server open)"
    return 0, "no worker was seen mid-probe; killed worker-1"


def api_instance(cluster: Cluster, load: Load, plan: Plan) -> Recovery:
    """(1) SIGKILL an API instance; nginx sends the retries it may to the other; restart it."""
    proc = cluster.api[0]
    injected = time.monotonic()
    proc.kill()
    time.sleep(1.0)
    proc.start()
    restored = time.monotonic()
    try:
        cluster.wait_api(proc)
        took: float | None = time.monotonic() - restored
    except RuntimeError:
        took = None
    return Recovery("api SIGKILL", injected, restored, took, "restarted instance ready (/readyz)")


def worker(cluster: Cluster, load: Load, plan: Plan, targets: Targets) -> Recovery:
    """(2) SIGKILL a worker while a monitor's probe is in flight; restart it. Recovered: every
    monitor run under way at the kill has finished (its job redelivered), or a run finished after."""
    until(lambda: targets.monitor_in_flight() > 0, bound_s=3 * plan.interval_s, every_s=0.05)
    index, how = worker_on_target(cluster, targets)
    proc = cluster.workers[index]
    url = _database(cluster)
    rows = db.maybe_rows(url, db.runs_under_way()) or []
    open_ids = {row[0] for row in rows}
    killed_at = datetime.now(UTC)
    injected = time.monotonic()
    proc.kill()
    proc.start()
    restored = time.monotonic()

    def finished() -> bool:
        runs = db.maybe_rows(url, db.runs_finished_since(killed_at))
        if runs is None:
            return False
        done = {row[0] for row in runs}
        return open_ids <= done if open_ids else bool(done)

    took = until(finished)
    note = f"{proc.name} {how}; {len(open_ids)} monitor run(s) under way"
    return Recovery("worker SIGKILL", injected, restored, took, "runs under way finished (redelivered)", note=note)


def scheduler(cluster: Cluster, load: Load, plan: Plan) -> Recovery:
    """(3) SIGKILL the active scheduler: the standby takes over; the killed one comes back as standby."""
    active = cluster.active_scheduler()
    standby = next(proc for proc in cluster.schedulers if proc is not active)
    url = _database(cluster)
    killed_at = datetime.now(UTC)
    injected = time.monotonic()
    active.kill()
    took = until(lambda: "this scheduler is active" in Cluster.since_start(standby))
    claimed = until(lambda: (db.latest(url, "claimed_at") or killed_at) > killed_at, bound_s=3 * plan.interval_s)
    claimed_s = time.monotonic() - injected
    active.start()
    note = f"{standby.name} took over from {active.name}"
    note += f"; a monitor run claimed {claimed_s:.1f} s after the kill" if claimed is not None else "; no run claimed"
    try:
        Cluster.wait_log(active, "standing by", START_S)
    except RuntimeError:
        note += f"; {active.name} did not come back as standby"
    return Recovery("scheduler SIGKILL", injected, injected, took, "standby active (its log)", note=note)


def redis(cluster: Cluster, load: Load, plan: Plan) -> Recovery:
    """(4) Redis stopped (a kill: its append-only file keeps what it answered), down a while, started
    again on its port."""
    assert cluster.redis is not None
    injected = time.monotonic()
    cluster.redis.stop()
    time.sleep(plan.hold_s)
    cluster.redis.start()
    restored = time.monotonic()
    took = until(lambda: all_ready(cluster))
    return Recovery("redis restart", injected, restored, took, "both instances ready (/readyz)")


def postgres(cluster: Cluster, load: Load, plan: Plan) -> Recovery:
    """(5) PostgreSQL stopped (pg_ctl stop -m fast), down a while, started again."""
    assert cluster.postgres is not None
    injected = time.monotonic()
    cluster.postgres.stop("fast")
    time.sleep(plan.hold_s)
    cluster.postgres.start()
    restored = time.monotonic()
    started_at = datetime.now(UTC)
    took = until(lambda: all_ready(cluster))
    ran = until(lambda: bool(db.maybe_rows(_database(cluster), db.runs_finished_since(started_at))),
                bound_s=4 * plan.interval_s)  # fmt: skip
    note = "a monitor run finished after it" if ran is not None else "no monitor run finished after it"
    return Recovery("postgres stop", injected, restored, took, "both instances ready (/readyz)", note=note)


def _database(cluster: Cluster) -> str:
    assert cluster.postgres is not None
    return cluster.postgres.url
