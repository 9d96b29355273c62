"""Prometheus metrics of the service (prometheus-client), one registry per app."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest


class Metrics:
    """Counters and histograms exposed at ``/metrics``.

    - ``mcp_sonde_probes_total{status}``: probes run, by status class.
    - ``mcp_sonde_probe_duration_seconds``: probe wall time.
    - ``mcp_sonde_single_flight_joins_total``: checks served by joining a running probe.
    - ``mcp_sonde_limits_hit_total{limit}``: requests refused by a limit (``client_rate``, ``target_busy``).
    - ``mcp_sonde_free_pool_draws_total{outcome}``: free-pool draws (``drawn``, ``exhausted``, ``returned``).
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.probes = Counter("mcp_sonde_probes", "Probes run, by status class.", ["status"], registry=self.registry)
        self.probe_seconds = Histogram(
            "mcp_sonde_probe_duration_seconds",
            "Probe wall time.",
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15),
            registry=self.registry,
        )
        self.joins = Counter(
            "mcp_sonde_single_flight_joins", "Checks served by joining a running probe.", registry=self.registry
        )
        self.limits_hit = Counter(
            "mcp_sonde_limits_hit", "Requests refused by a limit.", ["limit"], registry=self.registry
        )
        self.pool_draws = Counter("mcp_sonde_free_pool_draws", "Free-pool draws.", ["outcome"], registry=self.registry)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)
