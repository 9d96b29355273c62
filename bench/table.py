"""Run every benchmark as its own process and print one table (see bench/README.md)."""

from __future__ import annotations

import re
import subprocess
import sys

RUNS = [
    ("probe", ["bench.probe", "200"]),
    ("cpu", ["bench.cpu", "200", "3"]),
    ("concurrency", ["bench.concurrency", "1000", "1.0"]),
    ("api", ["bench.api", "2000", "16"]),
    ("payment", ["bench.payment", "50"]),
    ("badge", ["bench.badge"]),
    ("startup", ["bench.startup", "10"]),
    ("store", ["bench.store"]),
    ("link", ["bench.link", "5"]),
    ("attest", ["bench.attest", "100", "5"]),
]
HEADER = ("benchmark", "figure", "baseline", "ratio")


def first(text: str, pattern: str) -> str:
    """The first group of ``pattern`` in ``text``, or ``?``."""
    match = re.search(pattern, text, flags=re.MULTILINE)
    return match.group(1) if match else "?"


def rows_for(name: str, out: str) -> list[tuple[str, str, str, str]]:
    """Table rows from one benchmark's output."""
    if name == "probe":
        rows = []
        for line in out.splitlines()[2:]:
            label, ours, theirs, ratio = line.rsplit(maxsplit=3)
            rows.append((f"probe: {label.strip()}", f"{ours} ms", f"mcp SDK client {theirs} ms", ratio))
        return rows
    if name == "cpu":
        sdk = first(out, r"mcp SDK client\s+([\d.]+)")
        return [
            (
                f"client CPU: {case}",
                f"{first(out, pattern)} ms",
                f"mcp SDK client {sdk} ms",
                first(out, pattern + r" ms\s+ratio to the SDK client\s+([\d.]+)"),
            )
            for case, pattern in (("full check", r"full_check\(\)\s+([\d.]+)"), ("probe", r"probe\(\)\s+([\d.]+)"))
        ]
    if name == "concurrency":
        wall, rss, errors = first(out, r"wall\s+([\d.]+)"), first(out, r"RSS\s+(\d+)"), first(out, r"errors\s+(\d+)")
        return [
            ("1,000 concurrent probes", f"{wall} s wall, {rss} MB", f"goal < 1.5 s, < 150 MB; errors {errors}", "-")
        ]
    if name == "startup":
        ours, bare = first(out, r"bytecode cached\s+([\d.]+)"), first(out, r"bare python\s+([\d.]+)")
        uncached = first(out, r"no bytecode cached\s+([\d.]+)")
        uvicorn = first(out, r"bare uvicorn app\s+/healthz\s+(\d+)")
        health, ready = first(out, r"first start\s+/healthz\s+(\d+)"), first(out, r"first start.*/readyz\s+(\d+)")
        worker, scheduler = first(out, r"mcp-sonde worker\s+(\d+)"), first(out, r"mcp-sonde scheduler\s+(\d+)")
        return [
            ("CLI start-up to first packet", f"{ours} ms", f"goal < 100 ms; bare python {bare} ms", "-"),
            ("CLI first packet, no bytecode", f"{uncached} ms", f"goal < 100 ms; bare python {bare} ms", "-"),
            ("worker start-up to started", f"{worker} ms", "goal < 2000 ms", "-"),
            ("scheduler start-up to started", f"{scheduler} ms", "goal < 2000 ms", "-"),
            ("serve start-up to /healthz", f"{health} ms", f"bare uvicorn app {uvicorn} ms", "-"),
            ("serve start-up to /readyz", f"{ready} ms", f"goal < 2000 ms; bare uvicorn app {uvicorn} ms", "-"),
        ]
    if name == "link":
        return _link_rows(out)
    if name == "attest":
        return _attest_rows(out)
    if name == "store":
        after, goal = first(out, r"MB before, (\d+) MB after"), first(out, r"goal < (\d+) MB")
        return [("embedded store, 100,000 of 2 kB", f"{after} MB RSS", f"goal < {goal} MB (bound + baseline)", "-")]
    if name == "api":
        direct, work = first(out, r"probe\(\) directly\s+(\d+)"), first(out, r"run_check\(\) directly\s+(\d+)")
        service = first(out, r"POST /v1/mcp/check\s+(\d+)")
        return [
            (
                "POST /v1/mcp/check",
                f"{service} checks/s",
                f"run_check() directly {work}/s, probe() {direct}/s (goal >= 0.8)",
                first(out, r"ratio service/run_check\s+([\d.]+)"),
            )
        ]
    if name == "payment":
        free, paid = first(out, r"free-pool check\s+median\s+([\d.]+)"), first(out, r"paid check\s+median\s+([\d.]+)")
        added = first(out, r"added by payment\s+median\s+([\d.]+)")
        return [("paid check", f"{paid} ms (+{added} ms)", f"free-pool check {free} ms", "-")]
    bare, cached = first(out, r"fixed SVG\s+(\d+)"), first(out, r"access log on\)\s+(\d+)")
    return [
        (
            "cached badge",
            f"{cached} req/s",
            f"bare route {bare} req/s (goal >= 0.9)",
            first(out, r"cached/bare\s+([\d.]+)"),
        )
    ]


def _attest_rows(out: str) -> list[tuple[str, str, str, str]]:
    rows = []
    for label, added, dump, ratio in re.findall(
        r"^  cpu (.+?): ([\d.]+) ms added, model_dump_json ([\d.]+) ms, ratio ([\d.]+)$", out, flags=re.MULTILINE
    ):
        rows.append((f"signing CPU: {label}", f"+{added} ms", f"model_dump_json {dump} ms", ratio))
    for label, unsigned, signed, added, percent in re.findall(
        r"^  e2e (.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) %", out, flags=re.MULTILINE
    ):
        ratio = f"{float(signed) / float(unsigned):.2f}"
        rows.append(
            (f"signed check: {label}", f"+{added} ms ({percent} %)", f"unsigned {unsigned} ms (goal <= 5 %)", ratio)
        )
    return rows


def _link_rows(out: str) -> list[tuple[str, str, str, str]]:
    if "skipped" in out:
        return [("round trips across a 50 ms link", "skipped", out.strip().split(": ", 1)[-1][:60], "-")]
    rows = []
    for line in out.splitlines()[3:]:
        numbers = [part for part in line[36:].split() if part.replace(".", "", 1).isdigit()]
        if len(numbers) != 9:  # floor, goal, round trips, span, connections, requests, ratio, SDK client, its span
            continue
        label = line[:36].strip()
        floor, rtt, ratio, sdk = numbers[0], numbers[2], numbers[6], numbers[7]
        rows.append((f"link: {label}", f"{rtt} round trips", f"floor {floor}; mcp SDK client {sdk}", ratio))
    return rows


def main() -> None:
    """Run each benchmark, then print the table (``--check``: the regression guard, :mod:`bench.guard`)."""
    if "--check" in sys.argv[1:]:
        from bench import guard

        sys.exit(guard.main())
    rows: list[tuple[str, str, str, str]] = []
    for name, command in RUNS:
        completed = subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True, check=False)
        if completed.returncode != 0:
            rows.append((name, "failed", (completed.stderr.strip().splitlines() or [""])[-1][:60], "-"))
            continue
        rows += rows_for(name, completed.stdout)
    table = [HEADER, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


if __name__ == "__main__":
    main()
