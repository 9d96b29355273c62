"""The sweep drill's reading of its fixture's log (bench/sweep.py): a probe's span for the per-host
count ends at its last request before the session end."""

from __future__ import annotations

import itertools

from bench.sweep import Spans, analyse


def probe(spans: Spans, path: str, start: float, end: float, delete: tuple[float, float] | None) -> None:
    """A probe's requests, each ``(host, path, method, arrival, end, received)``."""
    steps = ("initialize", "notifications/initialized", "tools/list", "tools/call")
    times = [start + (end - start) * i / len(steps) for i in range(len(steps) + 1)]
    for method, (arrived, ended) in zip(steps, itertools.pairwise(times), strict=True):
        spans.log.append(("h0.sweep.test", path, method, arrived, ended, arrived))
    if delete is not None:
        spans.log.append(("h0.sweep.test", path, "DELETE", *delete, delete[0]))


def test_a_session_end_racing_the_next_start_is_not_two_probes_at_once() -> None:
    spans = Spans(0.0)
    probe(spans, "/mcp/0", 0.0, 3.0, (3.02, 3.04))  # its verdict at 3.0, its DELETE after the next start
    probe(spans, "/mcp/1", 1.1, 4.1, (4.11, 4.12))
    probe(spans, "/mcp/2", 3.01, 6.0, None)
    seen = analyse(spans)
    assert seen.most_at_once == {"h0.sweep.test": 2}
    assert seen.session_ends == 2
    assert seen.probes == {"/mcp/0": 1, "/mcp/1": 1, "/mcp/2": 1}
    assert round(seen.least_gap_s["h0.sweep.test"], 2) == 1.1
    assert seen.span_s == 6.0


def test_probes_that_overlap_before_their_session_ends_still_count() -> None:
    spans = Spans(0.0)
    probe(spans, "/mcp/0", 0.0, 3.0, (3.02, 3.04))
    probe(spans, "/mcp/1", 1.0, 4.0, None)
    probe(spans, "/mcp/2", 2.0, 5.0, None)
    assert analyse(spans).most_at_once == {"h0.sweep.test": 3}
