"""``POST /v1/mcp/diff``: what changed between two tool lists, and what it does to clients.

Policy: free (no payment, no free-pool draw) and stateless (nothing is probed or stored);
rate limited per client with a budget of its own (``diff_rate_limit``, policy ``diff``, counted
apart from the check route's) before the body is read. The body is capped
(``diff_max_body_bytes``) and checked (:mod:`app.http.bodies.diff`).

Parsing, checking and comparing run in a worker process (:mod:`app.checking.cpu`), never in
the service's own: a hostile body cannot hold the event loop. At most
:data:`app.checking.services.DIFF_SLOTS` run at once per instance; a request that waits
``diff_timeout_s`` for a turn is ``503 diff_busy`` (``Retry-After``). The comparison is
:func:`app.drift.diff_tools`, bounded per schema (:mod:`app.drift.limits`) and in total: the
costliest body within the caps (1 MiB of tools whose schemas each exhaust their step budget)
would take about 27 s of CPU, so its schema comparisons stop after ``diff_timeout_s`` and the
tools left whose schemas differ are ``unknown`` with ``list_too_large`` (still a 200 answer);
the rest of the work is linear in the body (a full body takes a quarter of a second to parse and
check). Real lists of 2,000 tools, every schema changed, take about a second. Should a body
still use the worker's CPU-time limit (``diff_timeout_s`` + :data:`app.checking.services.PARSE_CPU_S`), the answer is
``503 diff_busy`` and nothing else is affected.

The answer also carries the schema and toolset fingerprints of both lists
(``docs/fingerprints.md``; ``null`` for a list with no canonical form). Every answer, errors
included, carries the client's rate-limit headers and ``Cache-Control: no-store``: the answer is
a pure function of the body, but no shared cache keys on a POST body, and the body may hold a
server's private tool list, which no cache should keep.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response

from app.canonical import CanonicalFormError
from app.checking.cpu import CpuLimitExceeded
from app.checking.errors import ApiError
from app.checking.services import Services
from app.drift import diff_tools
from app.http.bodies.diff import DiffRequest, decode, read_diff_body
from app.http.budget import budgeted
from app.suite.fingerprint import fingerprints


def _prints(tools: list[dict[str, Any]]) -> dict[str, str | None]:
    try:
        found = fingerprints(tools)
    except CanonicalFormError:
        return {"schema_fingerprint": None, "toolset_fingerprint": None}
    return {"schema_fingerprint": found.schema, "toolset_fingerprint": found.toolset}


def compare(body: DiffRequest, seconds: float) -> dict[str, Any]:
    """The answer to ``body``, its schema comparisons within ``seconds`` (blocking; run it on a
    worker thread)."""
    diff = diff_tools(body.before, body.after, seconds=seconds)
    answer: dict[str, Any] = diff.model_dump(mode="json")  # (whole, as the check's baseline diff)
    answer["fingerprints"] = {"before": _prints(body.before), "after": _prints(body.after)}
    return answer


def answer_of(raw: bytes, seconds: float) -> dict[str, Any]:
    """Parse, check and compare a raw body (blocking).

    Raises:
        ApiError: as :func:`app.http.bodies.diff.decode`.
    """
    return compare(decode(raw), seconds)


def answer_json(raw: bytes, seconds: float) -> bytes | tuple[str, str, int]:
    """:func:`answer_of` as the worker process returns it: the answer's JSON, or a refusal's
    reason, message and status (an :class:`ApiError` does not cross processes whole)."""
    try:
        answer = answer_of(raw, seconds)
    except ApiError as exc:
        return (exc.reason, exc.message, exc.status_code)
    return json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


async def _compared(services: Services, raw: bytes) -> bytes:
    settings = services.settings
    slots = services.diff_slots
    with anyio.move_on_after(settings.diff_timeout_s) as waited:
        await slots.acquire()
    if waited.cancelled_caught:
        services.metrics.limits_hit.labels(limit="diff_busy").inc()
        raise ApiError("diff_busy", "every comparison slot is taken; try again shortly", headers={"Retry-After": "1"})
    try:
        answer = await services.cpu.run(answer_json, raw, settings.diff_timeout_s)
    except CpuLimitExceeded as exc:
        services.metrics.limits_hit.labels(limit="diff_cpu").inc()
        message = "the comparison used its CPU time; send smaller lists"
        raise ApiError("diff_busy", message, headers={"Retry-After": "1"}) from exc
    finally:
        slots.release()
    if isinstance(answer, tuple):
        raise ApiError(*answer)
    return answer


async def diff(request: Request) -> Response:
    """``POST /v1/mcp/diff``: compare two tool lists (see the module docs)."""
    services: Services = request.app.state.services
    settings = services.settings

    async def compared(_client: str) -> Response:
        raw = await read_diff_body(request, settings.diff_max_body_bytes, settings.body_timeout_s)
        return Response(await _compared(services, raw), media_type="application/json")

    return await budgeted(request, services, compared, limiter=services.diff_limiter, fault="mcp-sonde failed")
