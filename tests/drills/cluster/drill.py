"""The drill's course: bring the cluster up, buy the monitors, run the load, make the faults one at
a time, let the monitors run out, stop everything gracefully, count."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2

from tests.drills.cluster import db, faults
from tests.drills.cluster.faults import Recovery
from tests.drills.cluster.load import Load
from tests.drills.cluster.plan import Plan
from tests.drills.cluster.receiver import Receiver
from tests.drills.cluster.tally import Stored, Totals, count
from tests.drills.cluster.targets import Targets
from tests.drills.cluster.topology import Cluster, Payments
from tests.payment.chain import Chain, facilitator_app, new_chain, pay
from tests.servers.uvicorn_thread import serve


@dataclass
class Report:
    """What the drill measured."""

    plan: Plan
    recoveries: list[Recovery] = field(default_factory=list)
    totals: Totals = field(default_factory=Totals)
    exit_codes: dict[str, int | None] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    cluster: Cluster | None = None
    load: Load | None = None

    def phases(self) -> dict[str, tuple[int, int]]:
        """Phase -> (requests, 5xx), in the order the phases ran."""
        found: dict[str, tuple[int, int]] = {}
        for answer in self.load.answers if self.load is not None else []:
            requests, fivexx = found.get(answer.phase, (0, 0))
            found[answer.phase] = (requests + 1, fivexx + (answer.status >= 500))
        return found

    def reasons(self) -> dict[tuple[str, int, str], int]:
        """(phase, status, reason) -> how many, of every 5xx and every request without an answer."""
        found: dict[tuple[str, int, str], int] = {}
        for answer in self.load.answers if self.load is not None else []:
            if answer.status >= 500 or answer.status == 0:
                key = (answer.phase, answer.status, answer.reason)
                found[key] = found.get(key, 0) + 1
        return found


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def buy_monitors(cluster: Cluster, chain: Chain, targets: Targets, receiver: Receiver, load: Load,
                 plan: Plan) -> dict[str, int]:  # fmt: skip
    """The plan's monitors, each bought with one x402 payment through nginx; monitor id -> target index."""
    bought: dict[str, int] = {}
    with httpx2.Client(base_url=cluster.base, timeout=90) as http:
        for index in range(plan.monitors):
            body = {"url": targets.monitor_url(index, period_s=3 * plan.interval_s), "interval_s": plan.interval_s,
                    "webhook": receiver.url(index)}  # fmt: skip
            offered = load.record("monitor", "buyer", lambda b=body: http.post("/v1/monitors", json=b))  # type: ignore[misc]
            if offered is None or offered.status_code != 402:
                raise RuntimeError(f"POST /v1/monitors without a payment: {offered and offered.text[:500]}")
            signature = anyio.run(pay, chain.payer, offered.headers["payment-required"])
            made = load.record("monitor", "buyer", lambda b=body, s=signature: http.post(  # type: ignore[misc]
                "/v1/monitors", json=b, headers={"PAYMENT-SIGNATURE": s}))  # fmt: skip
            if made is None or made.status_code != 201:
                raise RuntimeError(f"POST /v1/monitors with a payment: {made and made.text[:500]}")
            created = made.json()
            receiver.secrets[str(index)] = created["webhook_secret"]
            bought[created["monitor_id"]] = index
    return bought


def settled(cluster: Cluster) -> bool:
    """Every monitor ran out, every run finished, no delivery waits."""
    assert cluster.postgres is not None
    url = cluster.postgres.url
    try:
        monitors = db.monitor_rows(url)
        runs = db.monitor_run_rows(url)
        deliveries = db.delivery_rows(url)
    except Exception:  # any driver or network fault: not answering now
        return False
    return (all(m[1] != "active" for m in monitors) and all(r[5] is not None for r in runs)
            and all(d[2] != "pending" for d in deliveries))  # fmt: skip


def run(plan: Plan, root: Path, report: Report) -> None:
    """The drill (see the module docs); ``report`` is filled in as it goes (so a failure shows what was had)."""
    began = time.monotonic()
    log("offline chain and token")
    chain = new_chain()
    targets = Targets()
    targets.start()
    receiver = Receiver()
    with ExitStack() as stack:
        stack.callback(targets.stop)
        facilitator = stack.enter_context(serve(facilitator_app(chain)))
        stack.enter_context(receiver.serving())
        paid = Payments(chain.pay_to.address, chain.network, chain.token.address, f"http://127.0.0.1:{facilitator}")
        cluster = Cluster(root, plan, paid, webhook_port=receiver.port)
        report.cluster = cluster
        stack.callback(cluster.cleanup)
        log("cluster starting: postgres, redis, migration, 2 api, 2 workers, 2 schedulers, nginx")
        cluster.up()
        report.timings["start-up"] = time.monotonic() - began
        log(f"cluster up in {report.timings['start-up']:.1f} s; nginx on {cluster.base}")

        unpaid = httpx2.post(f"{cluster.base}/v1/mcp/check", json={"url": targets.check_url("paid")}, timeout=90)
        if unpaid.status_code != 402:
            raise RuntimeError(f"an unpaid check answered {unpaid.status_code}: {unpaid.text[:300]}")
        header = unpaid.headers["payment-required"]
        signatures = [anyio.run(pay, chain.payer, header) for _ in range(plan.payments)]
        load = Load(cluster.base, targets, signatures, plan.free_clients, plan.identities, plan.pause_s)
        report.load = load
        load.phase = "setup"
        monitor_paths = buy_monitors(cluster, chain, targets, receiver, load, plan)
        log(f"{len(monitor_paths)} monitors bought ({plan.block_runs} runs every {plan.interval_s} s); load starts")

        load.phase = "warm"
        load.start()
        stack.callback(load.finish)
        time.sleep(plan.warm_s)
        steps: list[tuple[str, Callable[[], Recovery]]] = [
            ("api-kill", lambda: faults.api_instance(cluster, load, plan)),
            ("worker-kill", lambda: faults.worker(cluster, load, plan, targets)),
            ("scheduler-kill", lambda: faults.scheduler(cluster, load, plan)),
            ("redis-restart", lambda: faults.redis(cluster, load, plan)),
            ("postgres-stop", lambda: faults.postgres(cluster, load, plan)),
        ]
        for phase, fault in steps:
            load.phase = phase
            log(f"fault: {phase}")
            recovery = fault()
            recovery.answer_s = faults.first_answer(load, recovery.restored)
            report.recoveries.append(recovery)
            took = "never" if recovery.recover_s is None else f"{recovery.recover_s:.1f} s"
            log(f"  recovered: {took} ({recovery.measure}) {recovery.note}")
            time.sleep(plan.calm_s)
        load.phase = "soak"
        time.sleep(plan.soak_s)
        load.finish()
        report.timings["load"] = time.monotonic() - began - report.timings["start-up"]
        log(f"load stopped after {len(load.answers)} requests; monitors settle (at most {plan.settle_s:g} s)")
        load.phase = "settle"
        waited = faults.until(lambda: settled(cluster), bound_s=plan.settle_s, every_s=1.0)
        report.timings["settle"] = waited if waited is not None else plan.settle_s
        keys = httpx2.get(f"{cluster.base}/.well-known/mcp-sonde-keys.json", timeout=30).content
        log("graceful stop (SIGTERM)")
        report.exit_codes = cluster.down()
        assert cluster.postgres is not None
        url = cluster.postgres.url
        stored = Stored(db.run_ids(url), db.monitor_run_rows(url), db.monitor_rows(url), db.delivery_rows(url))
        log("counting")
        report.totals = count(load, targets, receiver, stored, plan.pool, plan.share, monitor_paths, keys,
                              root / "verify", plan.node_checks)  # fmt: skip
        if waited is None:
            report.totals.notes.append(f"the monitors had not settled within {plan.settle_s:g} s")
        report.totals.notes.append("answers by kind and status: " + json.dumps(_by_kind(load), sort_keys=True))
    report.timings["total"] = time.monotonic() - began


def _by_kind(load: Load) -> dict[str, dict[str, int]]:
    found: dict[str, dict[str, int]] = {}
    for answer in load.answers:
        kind = found.setdefault(answer.kind, {})
        kind[str(answer.status)] = kind.get(str(answer.status), 0) + 1
    return found
