"""Benchmark: the tool-description hygiene scan on the largest tool list of the benign corpus.

The list with the most tools in ``tests/data/hygiene/benign`` (ties: the most text) is scanned
N times after a warm-up; the median CPU time is printed in ms per scan and µs per tool, with the whole
corpus scanned once for scale. "cold" scans a list never seen (the per-tool memo emptied before
each scan); "warm" scans it again, as every later check of the same server does. There is no
baseline: the figures are absolute (the scan is a pure function of the list).

Usage: ``python -m bench.hygiene [N]`` (default 200).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from app.suite import hygiene
from app.suite.hygiene import scan_tools

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "hygiene" / "benign"


def timed(tools: list[dict[str, Any]], *, cold: bool = True) -> float:
    """CPU seconds one scan of ``tools`` takes (``cold``: as if never seen)."""
    if cold:
        hygiene._MEMO.clear()
    started = time.process_time()
    scan_tools(tools)
    return time.process_time() - started


def main() -> None:
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    lists = {path.stem: json.loads(path.read_text())["tools"] for path in sorted(CORPUS.glob("*.json"))}
    name = max(lists, key=lambda stem: (len(lists[stem]), len(json.dumps(lists[stem]))))
    tools = lists[name]
    for _ in range(10):
        timed(tools)
    median = statistics.median(timed(tools) for _ in range(repeats))
    warm = statistics.median(timed(tools, cold=False) for _ in range(repeats))
    size = len(json.dumps(tools, ensure_ascii=False))
    everything = [tool for listed in lists.values() for tool in listed]
    whole = statistics.median(timed(everything) for _ in range(max(1, repeats // 20)))
    print(f"hygiene scan of {name}: {len(tools)} tools, {size:,} characters of JSON, {repeats} repeats")
    print(f"  cold: median {median * 1000:.2f} ms per scan, {median * 1e6 / len(tools):.1f} µs per tool")
    print(f"  warm: median {warm * 1000:.2f} ms per scan, {warm * 1e6 / len(tools):.1f} µs per tool")
    print(
        f"  whole corpus ({len(lists)} lists, {len(everything)} tools) in one scan: median {whole * 1000:.2f} ms,"
        f" {whole * 1e6 / len(everything):.1f} µs per tool"
    )


if __name__ == "__main__":
    main()
