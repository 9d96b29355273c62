"""Prometheus metrics of the service (prometheus-client), one registry per app.

Policy: every label takes values from a closed set, so no client can add series: routes are
the app's route paths (``other`` for anything else), methods the HTTP methods of RFC 9110
section 9 plus PATCH (``other`` for any other token), statuses the three digits of a status
code, outcomes our own keys. The registry also carries the process and platform collectors.
It is per process: under ``--workers`` > 1 each scrape reads one worker (see docs/operations.md).

``/metrics`` may need a bearer token (setting ``metrics_token``; RFC 6750 section 2.1): it is
compared in constant time and never logged.
"""

from __future__ import annotations

import hmac
from typing import Final

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

from app.checking.httpmetrics import HttpAnswers, Tally

METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"})
_STATUSES: Final = {code: str(code) for code in range(100, 600)}
_WAIT_BUCKETS: Final = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8)


class Metrics:
    """Counters and histograms exposed at ``/metrics``.

    - ``mcp_sonde_http_requests_total{route,method,status}``: HTTP answers.
    - ``mcp_sonde_http_request_duration_seconds{route}``: time to answer.
    - ``mcp_sonde_probes_total{status}``: probes run, by status class.
    - ``mcp_sonde_probe_duration_seconds``: probe wall time.
    - ``mcp_sonde_single_flight_joins_total``: checks served by joining a running probe.
    - ``mcp_sonde_limits_hit_total{limit}``: requests refused by a limit (``client_rate``,
      ``target_busy``, ``badge_probe``, ``badge_network``, ``badge_unresolved``, ``diff_busy``,
      ``diff_cpu``, ...).
    - ``mcp_sonde_free_pool_draws_total{outcome}``: free-pool draws (``drawn``, ``exhausted``, ``returned``).
    - ``mcp_sonde_payments_total{outcome}``: paid checks: ``settled``, ``released`` (not served,
      nothing charged), or the reason key of a refusal (``payment_invalid``,
      ``payment_already_used`` for a replay, ``facilitator_unavailable``, ``settlement_failed``, ...).
    - ``mcp_sonde_badge_cache_total{outcome}``: badge lookups: ``hit``, ``stale`` (served, refreshed), ``miss``.
    - ``mcp_sonde_lookup_wait_seconds``: time a check waited for its host lookup.
    - ``mcp_sonde_probe_turn_wait_seconds``: time a probe waited for its host's slot and start interval.
    - ``mcp_sonde_history_runs_total{outcome}``: served checks handed to the history: ``stored``,
      ``duplicate`` (a run id already kept), ``queued`` (the database did not answer: kept in the
      bounded queue), ``lost`` (the queue was full, or the database refused the run).
    - ``mcp_sonde_history_queue``: runs waiting for the database.
    - ``process_*``, ``python_info``: the process and platform collectors.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        self.http = HttpAnswers()  # (counted without prometheus-client's locks: see its module)
        registry.register(self.http)
        self.probes = Counter("mcp_sonde_probes", "Probes run, by status class.", ["status"], registry=registry)
        self.probe_seconds = Histogram(
            "mcp_sonde_probe_duration_seconds",
            "Probe wall time.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15),
            registry=registry,
        )
        self.joins = Counter(
            "mcp_sonde_single_flight_joins", "Checks served by joining a running probe.", registry=registry
        )
        self.limits_hit = Counter("mcp_sonde_limits_hit", "Requests refused by a limit.", ["limit"], registry=registry)
        self.pool_draws = Counter("mcp_sonde_free_pool_draws", "Free-pool draws.", ["outcome"], registry=registry)
        self.payments = Counter("mcp_sonde_payments", "Paid checks, by outcome.", ["outcome"], registry=registry)
        self.badge_cache = Tally(
            "mcp_sonde_badge_cache", "Badge cache lookups, by outcome.", "outcome", ("hit", "stale", "miss")
        )
        registry.register(self.badge_cache)
        self.lookup_wait = Histogram(
            "mcp_sonde_lookup_wait_seconds",
            "Time a check waited for its host lookup.",
            buckets=_WAIT_BUCKETS,
            registry=registry,
        )
        self.turn_wait = Histogram(
            "mcp_sonde_probe_turn_wait_seconds",
            "Time a probe waited for its host's slot and start interval.",
            buckets=_WAIT_BUCKETS,
            registry=registry,
        )
        self.history_runs = Counter(
            "mcp_sonde_history_runs", "Served checks handed to the history.", ["outcome"], registry=registry
        )
        self.history_queue = Gauge("mcp_sonde_history_queue", "Runs waiting for the database.", registry=registry)

    def http_done(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one HTTP answer (``route``: a route path or ``other``)."""
        method = method if method in METHODS else "other"
        self.http.count(route, method, _STATUSES[status] if 100 <= status <= 599 else "0", seconds)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)


def bearer_matches(authorization: str | None, token: str) -> bool:
    """``Authorization: Bearer <token>`` carries ``token`` (the scheme is case-insensitive, RFC 9110
    section 11.1); compared in constant time."""
    if authorization is None:
        return False
    scheme, _, credentials = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    # (header values arrive decoded as latin-1: encoding them so gives back the bytes sent)
    return hmac.compare_digest(credentials.strip().encode("latin-1", "replace"), token.encode("utf-8"))
