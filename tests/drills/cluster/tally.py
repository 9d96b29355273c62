"""The counts, after the stop: what was answered against what the database, the MCP fixture and
the webhook receiver hold, and every signed answer verified against the published key document.

Losses and duplicates (any of them fails the drill):

- ``pool_overdrawn``: free checks served beyond the pool, plus, per client, beyond its share;
- ``runs_lost``: a check answered 200 whose run id is not in the history; a monitor run charged
  (started) with no stored result; a monitor run ending ``lost``;
- ``runs_duplicated``: a run id stored twice; a monitor's target probed more often than its runs
  were charged; a payment that bought two checks;
- ``webhooks_lost``: a delivery the database calls delivered that the receiver never accepted, one
  it calls failed, an exhausted monitor with no ``monitor.exhausted`` delivery;
- ``webhooks_duplicated``: a ``webhook-id`` the receiver accepted more than once;
- ``bad_signatures``: a signed answer or read that does not verify (``app.attest.verify``, and
  ``node tools/verify-attestation.mjs`` on a sample), a webhook whose signature failed.
"""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import VerificationFailed
from app.attest.verify.verifier import verify
from tests.drills.cluster.load import Load
from tests.drills.cluster.nginx import ROOT
from tests.drills.cluster.receiver import Receiver
from tests.drills.cluster.targets import Targets

STANDALONE = ROOT / "tools" / "verify-attestation.mjs"
DELIVERED, PENDING = "delivered", "pending"


@dataclass
class Totals:
    requests: int = 0
    fivexx: int = 0
    pool_overdrawn: int = 0
    runs_lost: int = 0
    runs_duplicated: int = 0
    webhooks_lost: int = 0
    webhooks_duplicated: int = 0
    bad_signatures: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.pool_overdrawn or self.runs_lost or self.runs_duplicated or self.webhooks_lost
                    or self.webhooks_duplicated or self.bad_signatures)  # fmt: skip

    def line(self) -> str:
        return (f"cluster drill: requests={self.requests} 5xx={self.fivexx} pool_overdrawn={self.pool_overdrawn} "
                f"runs_lost={self.runs_lost} runs_duplicated={self.runs_duplicated} "
                f"webhooks_lost={self.webhooks_lost} webhooks_duplicated={self.webhooks_duplicated} "
                f"bad_signatures={self.bad_signatures}")  # fmt: skip


@dataclass
class Stored:
    """What the database held after the stop."""

    run_ids: list[str]
    monitor_runs: list[Any]  # (monitor_id, run_id, claimed_at, started_at, finished_at, status, reason)
    monitors: list[Any]  # (monitor_id, state, runs_bought, runs_left)
    deliveries: list[Any]  # (delivery_id, event, state, attempts, last_status, last_reason, monitor_id)


def count(load: Load, targets: Targets, receiver: Receiver, stored: Stored, pool: int, share: int,
          monitor_paths: dict[str, int], keys: bytes, work: Path, node_checks: int) -> Totals:  # fmt: skip
    """Every figure (see the module docs); ``monitor_paths`` maps a monitor id to its target's index."""
    totals = Totals(requests=len(load.answers))
    totals.fivexx = sum(1 for a in load.answers if a.status >= 500)
    no_answer = sum(1 for a in load.answers if a.status == 0)
    if no_answer:
        totals.notes.append(f"{no_answer} request(s) got no answer at all (transport error)")

    free = Counter(s.client for s in load.served if s.kind == "free")
    over_pool = max(0, sum(free.values()) - pool)
    over_share = sum(max(0, n - share) for n in free.values())
    totals.pool_overdrawn = over_pool + over_share
    reached = any(a.reason.startswith("free_pool") for a in load.answers if a.status == 402)
    most = max(free.values(), default=0)
    totals.notes.append(f"free checks served {sum(free.values())} of a pool of {pool} (share {share}, most by one "
                        f"client {most}; pool end reached: {reached})")  # fmt: skip

    in_history = Counter(stored.run_ids)
    answered = list(load.served)
    unanswered_ids = sum(1 for s in answered if not s.attestation_id)
    checks_lost = sum(1 for s in answered if s.attestation_id and s.attestation_id not in in_history)
    charged = [r for r in stored.monitor_runs if r[3] is not None]
    charged_unstored = {r[1] for r in charged if r[1] not in in_history}
    ended_lost = {r[1] for r in stored.monitor_runs if r[5] == "lost"}
    totals.runs_lost = unanswered_ids + checks_lost + len(charged_unstored | ended_lost)
    open_runs = sum(1 for r in stored.monitor_runs if r[5] is None)
    totals.notes.append(f"checks answered 200: {len(answered)} ({checks_lost} not in the history, "
                        f"{unanswered_ids} without a run id); monitor runs: {len(stored.monitor_runs)} handed out, "
                        f"{len(charged)} charged, {len(charged_unstored)} charged and not stored, "
                        f"{len(ended_lost)} lost, {open_runs} never finished")  # fmt: skip

    stored_twice = sum(n - 1 for n in in_history.values() if n > 1)
    charged_by_monitor = Counter(r[0] for r in charged)
    extra_probes = {}
    for monitor_id, index in monitor_paths.items():
        seen = targets.monitored[index].probes
        if seen > charged_by_monitor[monitor_id]:
            extra_probes[monitor_id] = seen - charged_by_monitor[monitor_id]
    paid_twice = sum(n - 1 for n in load.paid.values() if n > 1)
    totals.runs_duplicated = stored_twice + sum(extra_probes.values()) + paid_twice
    probes = [target.probes for target in targets.monitored]
    totals.notes.append(
        f"probes at the monitors' servers {probes} for charged runs {[charged_by_monitor[m] for m in monitor_paths]}"
    )
    totals.notes.append(f"run ids stored twice {stored_twice}; monitor probes beyond the charged runs "
                        f"{extra_probes or 0}; payments that bought two checks {paid_twice} "
                        f"(payments that bought one: {sum(1 for n in load.paid.values() if n == 1)})")  # fmt: skip

    states = Counter(d[2] for d in stored.deliveries)
    delivered_unseen = [d[0] for d in stored.deliveries if d[2] == DELIVERED and d[0] not in receiver.accepted]
    failed = [d[0] for d in stored.deliveries if d[2] not in (DELIVERED, PENDING)]
    exhausted = {m[0] for m in stored.monitors if m[1] == "exhausted"}
    alerted = {d[6] for d in stored.deliveries if d[1] == "monitor.exhausted"}
    totals.webhooks_lost = len(delivered_unseen) + len(failed) + len(exhausted - alerted)
    unknown = [i for i in receiver.accepted if i not in {d[0] for d in stored.deliveries}]
    totals.webhooks_duplicated = sum(n - 1 for n in receiver.accepted.values() if n > 1)
    totals.notes.append(f"webhook deliveries {dict(states)}; accepted by the receiver {len(receiver.accepted)} "
                        f"({dict(receiver.events)}); delivered but never received {len(delivered_unseen)}, failed "
                        f"{len(failed)}, exhausted monitors without their alert {len(exhausted - alerted)}, "
                        f"received but unknown to the database {len(unknown)}, answered 503 before the secret "
                        f"was known {receiver.unknown}")  # fmt: skip
    if states[PENDING]:
        totals.notes.append(f"{states[PENDING]} delivery(ies) still pending at the stop (a retry not due yet)")

    python_bad, node_bad, node_done = verify_all(load, keys, work, node_checks)
    totals.bad_signatures = python_bad + node_bad + receiver.bad_signatures
    totals.notes.append(f"signed answers verified: {len(load.served)} answers and {len(load.attestation_reads)} "
                        f"attestation reads with app.attest.verify ({python_bad} failed), {node_done} with "
                        f"node tools/verify-attestation.mjs ({node_bad} failed); webhook signatures failed "
                        f"{receiver.bad_signatures}")  # fmt: skip
    return totals


def verify_all(load: Load, keys: bytes, work: Path, node_checks: int) -> tuple[int, int, int]:
    """``(failed with app.attest.verify, failed with node, checked with node)``."""
    listed = parse_keys(keys)
    signed = [s.body for s in load.served] + list(load.attestation_reads)
    python_bad = 0
    for raw in signed:
        try:
            verify(raw, listed)
        except VerificationFailed:
            python_bad += 1
    node = shutil.which("node")
    if node is None or not signed:
        return python_bad, 0, 0
    step = max(1, len(signed) // max(1, node_checks))
    sample = signed[::step][:node_checks]
    work.mkdir(parents=True, exist_ok=True)
    (work / "keys.json").write_bytes(keys)
    node_bad = 0
    for n, raw in enumerate(sample):
        path = work / f"signed-{n}.json"
        path.write_bytes(raw)
        done = subprocess.run([node, str(STANDALONE), str(path), "--keys", str(work / "keys.json"), "--json"],
                              capture_output=True, timeout=60, check=False)  # fmt: skip
        if done.returncode != 0:
            node_bad += 1
    return python_bad, node_bad, len(sample)
