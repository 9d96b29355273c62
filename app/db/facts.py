"""Facts of a run kept as columns beside its compressed result, for the statistics (:mod:`app.stats`).

They are read from the served result's JSON (:class:`app.suite.model.CheckResult`), so every
writer of runs gets them alike:

- ``handshake``: the request that completed the handshake. The result's ``era`` says it (MCP
  2026-07-28 ``server/discover`` for ``modern``, the ``initialize`` of MCP 2024-11-05 to
  2025-11-25 for ``legacy``; :mod:`app.probe.handshake` sets both together); ``None`` when no
  handshake completed.
- ``metadata_published``: the protected resource metadata (RFC 9728 section 3) was found
  (``auth.metadata_published``); ``None`` when the result holds no auth facts (not gated).
- ``tool_count``: valid tools ``tools/list`` returned over the pages read (``tools.count``);
  ``None`` when ``tools/list`` was not reached.

A result that is not a JSON object, or a field of another type, gives ``None`` for that fact.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Final

#: The handshake request of each era.
PATHS: Final = {"modern": "server/discover", "legacy": "initialize"}


@dataclass(frozen=True)
class RunFacts:
    """See the module docs."""

    handshake: str | None = None
    metadata_published: bool | None = None
    tool_count: int | None = None


def facts_of(result: bytes, *, compressed: bool = False) -> RunFacts:
    """The facts of a served result's JSON (``compressed``: zlib-compressed, as stored)."""
    try:
        document = json.loads(zlib.decompress(result) if compressed else result)
    except (ValueError, zlib.error):
        return RunFacts()
    if not isinstance(document, dict):
        return RunFacts()
    era = document.get("era")
    auth = document.get("auth")
    published = auth.get("metadata_published") if isinstance(auth, dict) else None
    tools = document.get("tools")
    count = tools.get("count") if isinstance(tools, dict) else None
    return RunFacts(
        handshake=PATHS.get(era) if isinstance(era, str) else None,
        metadata_published=published if isinstance(published, bool) else None,
        tool_count=count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None,
    )
