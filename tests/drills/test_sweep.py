"""The sweep drill, small (:mod:`bench.sweep`: 300 endpoints over 10 loopback host names, 3
workers and 1 scheduler on real Redis and PostgreSQL): every endpoint probed exactly once in the
cycle and its run stored once, and per host never more than ``host_concurrency`` probes at once
nor two starts closer than ``host_start_interval_s``, all measured at the fixture server.
Marked ``soak`` (about two minutes)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.sweep import HOST_CONCURRENCY, HOST_START_INTERVAL_S, Figures, drill, report
from tests.history.conftest import need_postgres
from tests.servers.redis_server import shared_redis_url

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]  # (a drill on a loaded machine takes minutes)
ENDPOINTS, HOSTS = 300, 10


@pytest.fixture(scope="module")
def figures() -> Figures:
    """One drill's figures, for the tests below."""
    need_postgres()
    shared_redis_url()
    found = drill(ENDPOINTS, HOSTS)
    print("\n" + report(found))
    return found


def test_a_sweep_cycle_probes_each_endpoint_once_within_the_host_concurrency(figures: Figures) -> None:
    assert figures.probes == Counter({f"/mcp/{i}": 1 for i in range(ENDPOINTS)})
    assert len(figures.runs_per_server) == ENDPOINTS and set(figures.runs_per_server.values()) == {1}
    assert len(figures.most_at_once) == HOSTS and max(figures.most_at_once.values()) <= HOST_CONCURRENCY


def test_no_two_probe_starts_of_a_host_closer_than_the_interval(figures: Figures) -> None:
    assert min(figures.least_gap_s.values()) >= HOST_START_INTERVAL_S
