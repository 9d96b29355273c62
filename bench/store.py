"""Benchmark: resident memory of the embedded store written with 100,000 entries of 2 kB each.

Each entry is keyed as the badge cache keys it (the hash of a distinct URL of 2 kB, so keys
are short whatever the URL) and its value is a badge entry whose message is padded to 2 kB, so
the bytes written (about 200 MB) pass the default bound of ``memory_store_max_bytes`` (64 MB)
three times over and the store must evict to keep within it. Written through
:class:`app.store.memory.MemoryStore` with that bound. Prints the entries kept, the bytes the
store counts, and the RSS of this process before (everything imported, an empty store) and
after, beside the bound. Goal: RSS after under the bound plus the baseline.

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


#: Bytes of each value written.
VALUE_BYTES = 2048


async def fill(store: MemoryStore, n: int) -> int:
    """Write ``n`` entries of 2 kB for distinct 2 kB URLs; the bytes written."""
    written = 0
    for i in range(n):
        url = f"https://mcp-{i:06d}.example.com/"
        url += "p" * (2048 - len(url))
        entry = {"state": "ok", "message": "", "color": "brightgreen", "modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
        entry["fresh_until"] = time.time() + 86_400  # type: ignore[assignment]
        entry["message"] = "m" * (VALUE_BYTES - len(json.dumps(entry)))
        value = json.dumps(entry).encode()
        await store.set(key("badge", url), value, 172_800)
        written += len(value)
    return written


def main() -> None:
    """Print the figures."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    bound = Settings().memory_store_max_bytes
    store = MemoryStore(max_bytes=bound)
    baseline = rss_mb()
    written = asyncio.run(fill(store, n))
    after = rss_mb()
    print(f"store benchmark: {n} entries of 2 kB ({written / 1e6:.0f} MB written), bound {bound / 1e6:.0f} MB")
    print(f"  entries kept   {len(store._values)}   counted {store.size_bytes / 1e6:.1f} MB")
    print(f"  RSS            {baseline:.0f} MB before, {after:.0f} MB after (goal < {baseline + bound / 1e6:.0f} MB)")


if __name__ == "__main__":
    main()
