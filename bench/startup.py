"""Benchmark: ``mcp-sonde check`` start-up, from spawning the command to its first packet.

A listener on loopback records when the CLI's connection arrives (the SYN is the probe's first
packet; the connection is then closed, so the check ends at once). Median of repeats, beside
the baseline: the bare interpreter opening the same connection (``python -c`` with ``socket``).
Goal: under 100 ms before the first packet.

Usage: ``python -m bench.startup [N]`` (default 10).
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def first_packet_ms(command: list[str], listener: socket.socket) -> float:
    """Milliseconds from spawning ``command`` to its connection arriving at ``listener``."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    connection, _ = listener.accept()
    arrived = time.perf_counter()
    connection.close()
    listener.settimeout(0.05)
    while process.poll() is None:  # later connections of the same check (its one retry) are closed too
        with contextlib.suppress(TimeoutError):
            listener.accept()[0].close()
    listener.settimeout(30)
    return (arrived - started) * 1000


def main() -> None:
    """Print the figures."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(30)
        port = listener.getsockname()[1]
        cli = [str(BIN / "mcp-sonde"), "check", "--allow-private", f"http://127.0.0.1:{port}/mcp"]
        bare = [sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port})).close()"]
        os.environ.pop("PYTHONPROFILEIMPORTTIME", None)
        first_packet_ms(cli, listener)  # warm the page cache and the bytecode
        ours = statistics.median(first_packet_ms(cli, listener) for _ in range(n))
        base = statistics.median(first_packet_ms(bare, listener) for _ in range(n))
    print(f"start-up benchmark: spawn to first packet, median of {n}")
    print(f"  mcp-sonde check   {ours:7.1f} ms   (goal < 100 ms)")
    print(f"  bare python       {base:7.1f} ms   (ratio {ours / base:.2f})")


if __name__ == "__main__":
    main()
