"""The per-request metrics, counted in plain integers and read by Prometheus at scrape time.

Policy: every request the service answers is counted (:mod:`app.http.middleware.accesslog`),
badge hits thousands of times a second. prometheus-client's ``Counter`` and ``Histogram`` take
a lock for every increment (three per answer: the count, the bucket and the sum), so these two
families are kept here instead: a dictionary of counts per label set and, per route, a list of
bucket counts with the sum, all updated on the event loop's thread, and a collector that
turns them into the text exposition format when ``/metrics`` is scraped (the Prometheus
exposition format: a histogram's buckets are cumulative, ``le="+Inf"`` equals ``_count``).
The badge cache's outcomes, counted on every badge answer, are a :class:`Tally` of the same kind.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

#: Upper bounds of the answer-time buckets, seconds.
BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20)


class _Times:
    """One route's answer times: a count per bucket (the last one past every bound) and their sum."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0


class HttpAnswers(Collector):
    """``mcp_sonde_http_requests_total{route,method,status}`` and
    ``mcp_sonde_http_request_duration_seconds{route}`` (the caller keeps the label values closed)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str], int] = {}
        self._times: dict[str, _Times] = {}

    def count(self, route: str, method: str, status: str, seconds: float) -> None:
        """One answer: two dictionary lookups, a bisection and three additions, no lock."""
        key = (route, method, status)
        self._counts[key] = self._counts.get(key, 0) + 1
        times = self._times.get(route)
        if times is None:
            times = self._times[route] = _Times()
        times.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        times.total += seconds

    def collect(self) -> Iterator[Metric]:
        """The two families as they stand (copied first: counting goes on while a scrape reads)."""
        requests = CounterMetricFamily(
            "mcp_sonde_http_requests", "HTTP answers, by route.", labels=["route", "method", "status"]
        )
        for (route, method, status), value in list(self._counts.items()):
            requests.add_metric([route, method, status], value)
        yield requests
        durations = HistogramMetricFamily(
            "mcp_sonde_http_request_duration_seconds", "Time to answer an HTTP request.", labels=["route"]
        )
        for route, times in list(self._times.items()):
            counts, total = list(times.counts), times.total
            running, buckets = 0, []
            for bound, count in zip((*(repr(float(b)) for b in BUCKETS), "+Inf"), counts, strict=True):
                running += count
                buckets.append((bound, running))
            durations.add_metric([route], buckets, total)
        yield durations


class Tally(Collector):
    """A counter family with one label whose values are fixed up front, counted without a lock."""

    def __init__(self, name: str, documentation: str, label: str, values: tuple[str, ...]) -> None:
        self.name, self.documentation, self.label = name, documentation, label
        self.counts = dict.fromkeys(values, 0)

    def inc(self, value: str) -> None:
        """Count one ``value`` (one of the fixed values)."""
        self.counts[value] += 1

    def collect(self) -> Iterator[Metric]:
        """The family as it stands."""
        family = CounterMetricFamily(self.name, self.documentation, labels=[self.label])
        for value, count in list(self.counts.items()):
            family.add_metric([value], count)
        yield family
