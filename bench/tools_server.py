"""A minimal MCP (2026-07-28) server on loopback listing N real tool definitions.

Run as ``python -m bench.tools_server PORT N``. The tools are those of the benign hygiene corpus
(``tests/data/hygiene/benign``, real servers' lists: descriptions, input schemas, annotations),
each name once: the N smallest (at most 241), in corpus order, so that 200 of them (166 kB of
JSON) fit in one reply under the probe's default cap (``reply_cap_bytes``, 256 kB) and the list
is read in full. It answers as ``bench/slow_server.py`` does (whose loop it runs), with no
delay. Used by ``bench/attest.py``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench import slow_server

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "hygiene" / "benign"


def corpus_tools(n: int) -> list[dict[str, Any]]:
    """The ``n`` smallest distinct tools of the corpus, in its order (see the module docs)."""
    tools: dict[str, dict[str, Any]] = {}
    for path in sorted(CORPUS.glob("*.json")):
        for tool in json.loads(path.read_text("utf-8"))["tools"]:
            tools.setdefault(tool["name"], tool)
    if n > len(tools):
        raise SystemExit(f"the corpus has {len(tools)} distinct tools, not {n}")
    listed = list(tools.values())
    kept = sorted(range(len(listed)), key=lambda index: (len(json.dumps(listed[index])), index))[:n]
    return [listed[index] for index in sorted(kept)]


if __name__ == "__main__":
    slow_server.TOOLS = dict(slow_server.TOOLS, tools=corpus_tools(int(sys.argv[2])))
    asyncio.run(slow_server.main(int(sys.argv[1]), 0.0))
