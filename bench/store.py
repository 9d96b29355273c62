"""Benchmark: resident memory of the embedded store filled with 100,000 distinct badge entries.

Each entry is what the badge cache writes (the key of the URL and its compact JSON), for a
distinct URL of 2 kB, through :class:`app.store.memory.MemoryStore` with the default bound of
``memory_store_max_bytes``. Prints the RSS of this process before (everything imported, an
empty store) and after, beside the bound. Goal: RSS after under the bound plus the baseline.

Usage: ``python -m bench.store [N]`` (default 100000).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

from app.settings import Settings
from app.store import key
from app.store.memory import MemoryStore


def rss_mb() -> float:
    """Resident set size of this process now, MB (from /proc)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * 4096 / 1e6


async def fill(store: MemoryStore, n: int) -> None:
    """Write ``n`` badge entries for distinct 2 kB URLs."""
    for i in range(n):
        url = f"https://mcp-{i:06d}.example.com/"
        url += "p" * (2048 - len(url))
        entry = {"state": "ok", "message": "ok", "color": "brightgreen", "modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
        entry["fresh_until"] = time.time() + 86_400  # type: ignore[assignment]
        await store.set(key("badge", url), json.dumps(entry).encode(), 172_800)


def main() -> None:
    """Print the figures."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    bound = Settings().memory_store_max_bytes
    store = MemoryStore(max_bytes=bound)
    baseline = rss_mb()
    asyncio.run(fill(store, n))
    after = rss_mb()
    print(f"store benchmark: {n} distinct badge URLs of 2 kB in the embedded store (bound {bound / 1e6:.0f} MB)")
    print(f"  entries kept   {len(store._values)}   counted {store.size_bytes / 1e6:.1f} MB")
    print(f"  RSS            {baseline:.0f} MB before, {after:.0f} MB after (goal < {baseline + bound / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
