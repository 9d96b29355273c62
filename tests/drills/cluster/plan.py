"""How long and how hard: the quick drill (well under 4 minutes with start-up) and the full one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """Durations in seconds, sizes in checks."""

    name: str
    warm_s: float  # load alone before the first fault
    hold_s: float  # how long a stopped part stays down (Redis, PostgreSQL)
    calm_s: float  # load after a fault's recovery, before the next fault
    soak_s: float  # load alone after the last fault
    free_clients: int  # threads of free checks, each with identities of its own
    identities: int  # source addresses the free clients use in all
    pool: int  # MCP_SONDE_FREE_POOL_SIZE
    share: int  # MCP_SONDE_FREE_POOL_PER_IP
    payments: int  # paid checks, each payment spent twice at once
    monitors: int
    block_runs: int  # runs each monitor buys (interval_s apart)
    interval_s: int
    settle_s: float  # most time the monitors and deliveries get to finish after the load
    pause_s: float  # a free client's pause between checks
    node_checks: int  # signed answers the standalone verifier checks too (all: app.attest.verify)


QUICK = Plan(name="quick", warm_s=10, hold_s=4, calm_s=4, soak_s=6, free_clients=16, identities=128, pool=1400,
             share=12, payments=16, monitors=3, block_runs=12, interval_s=10, settle_s=60, pause_s=0.6,
             node_checks=40)  # fmt: skip
FULL = Plan(name="full", warm_s=60, hold_s=10, calm_s=30, soak_s=300, free_clients=16, identities=240, pool=9000,
            share=40, payments=80, monitors=4, block_runs=60, interval_s=10, settle_s=150, pause_s=0.6,
            node_checks=400)  # fmt: skip
