"""``POST /v1/mcp/diff``: what changed between two tool lists, and what it does to clients.

Policy: free (no payment, no free-pool draw) and stateless (nothing is probed, stored or
logged but the access line); rate limited per client with a budget of its own
(``diff_rate_limit``, namespace ``diff``, counted apart from the check route's), counted before
the body is read. The body is capped (``diff_max_body_bytes``) and checked
(:mod:`app.service.diffbody`). The comparison is :func:`app.drift.diff_tools`, bounded per schema
(:mod:`app.drift.limits`) and here in total: it runs on a worker thread, never on the event
loop, at most ``diff_concurrency`` at once per process (a request that waits longer than
``diff_timeout_s`` for its turn is ``503 diff_busy`` with ``Retry-After``), and a comparison
that passes ``diff_timeout_s`` stops at the next tool and is ``422 diff_too_costly`` (the
deadline is checked between tools, so a thread never runs on after its answer). The answer
also carries the schema and toolset fingerprints of both lists (``docs/fingerprints.md``;
``null`` for a list with no canonical form).

Every answer, errors included, carries the client's rate-limit headers (``RateLimit-Policy``
names the ``diff`` policy) and ``Cache-Control: no-store``: the answer is a pure function of
the body, but the body is a POST's, which no shared cache keys on, and it may hold a
server's private tool list, which no cache should keep.
"""

from __future__ import annotations

import functools
import logging
import time
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.checks.canonical import CanonicalFormError
from app.checks.fingerprint import fingerprints
from app.drift import OutOfTime, diff_tools
from app.service.clientip import client_ip, rate_key
from app.service.diffbody import DiffRequest, read_diff_request
from app.service.errors import ApiError
from app.service.services import Services

logger = logging.getLogger("mcp_sonde.service")
NO_STORE = {"Cache-Control": "no-store"}


def _prints(tools: list[dict[str, Any]]) -> dict[str, str | None]:
    try:
        found = fingerprints(tools)
    except CanonicalFormError:
        return {"schema_fingerprint": None, "toolset_fingerprint": None}
    return {"schema_fingerprint": found.schema, "toolset_fingerprint": found.toolset}


def compare(body: DiffRequest, timeout_s: float) -> dict[str, Any]:
    """The answer to ``body`` (blocking; run it on a worker thread).

    Raises:
        OutOfTime: the comparison took longer than ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    diff = diff_tools(body.before, body.after, deadline=deadline)
    answer: dict[str, Any] = diff.model_dump(mode="json", exclude_none=True)
    answer["fingerprints"] = {"before": _prints(body.before), "after": _prints(body.after)}
    return answer


async def _compared(services: Services, body: DiffRequest) -> dict[str, Any]:
    settings = services.settings
    limiter = services.diff_slots
    with anyio.move_on_after(settings.diff_timeout_s) as waited:
        await limiter.acquire()
    if waited.cancelled_caught:
        services.metrics.limits_hit.labels(limit="diff_busy").inc()
        raise ApiError("diff_busy", "every comparison slot is taken; try again shortly", headers={"Retry-After": "1"})
    try:
        run = functools.partial(compare, body, settings.diff_timeout_s)
        return await anyio.to_thread.run_sync(run)
    except OutOfTime:
        raise ApiError(
            "diff_too_costly",
            f"comparing the two lists took longer than {settings.diff_timeout_s} s; send fewer or smaller tools",
        ) from None
    finally:
        limiter.release()


async def diff(request: Request) -> Response:
    """``POST /v1/mcp/diff``: compare two tool lists (see the module docs)."""
    services: Services = request.app.state.services
    settings = services.settings
    client = rate_key(client_ip(request, services.trusted_proxies))
    try:
        decision = await services.admit(client, services.diff_limiter)
    except ApiError as exc:
        exc.headers = exc.headers | NO_STORE  # rate_limited carries the budget already
        raise
    headers = decision.headers() | NO_STORE
    try:
        body = await read_diff_request(request, settings.diff_max_body_bytes, settings.body_timeout_s)
        answer = await _compared(services, body)
    except ApiError as exc:
        exc.headers = headers | exc.headers
        raise
    except Exception as exc:  # a fault of ours is an answer of this route too
        logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        raise ApiError("internal_error", "mcp-sonde failed", headers=headers) from exc
    return JSONResponse(answer, headers=headers)
