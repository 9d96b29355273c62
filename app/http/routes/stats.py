"""``GET /v1/stats``: the directory's public statistics, from the snapshot (:mod:`app.stats.snapshot`).

Every figure is defined in the answer (``definitions``, and per failure bucket) and in
``openapi.yaml``. The answer may be cached as long as the snapshot is fresh
(``Cache-Control: public, max-age=60``). A database that does not answer is ``503
history_unavailable``. This read never contacts a server.
"""

from __future__ import annotations

from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checking.services import Services
from app.http.routes.ops import services_of
from app.http.routes.paths import CACHE, unavailable

#: Longest wait for the statistics, seconds (the first computation on a new database included).
STATS_READ_S = 10.0


async def published(services: Services) -> dict[str, Any]:
    """The published statistics.

    Raises:
        ApiError: 503 ``history_unavailable`` when the database does not answer in time.
    """
    try:
        with anyio.fail_after(STATS_READ_S):
            return await services.stats.current()
    except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
        raise unavailable(exc) from exc


async def stats(request: Request) -> Response:
    """``GET /v1/stats`` (see the module docs)."""
    return JSONResponse(await published(services_of(request)), headers=CACHE)
