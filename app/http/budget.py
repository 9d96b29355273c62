"""Routes under the client's rate limit: every answer, errors and faults of ours included, says
``Cache-Control: no-store`` and carries the client's budget (``X-RateLimit-*``, the IETF
``RateLimit-Policy`` and ``RateLimit`` headers); a fault of ours is logged and answered
``500 internal_error``, never a traceback."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from app.checking.clients import rate_key
from app.checking.errors import ApiError, shared_state_unavailable
from app.checking.ratelimit import RateLimiter
from app.checking.services import Services
from app.http.middleware.clientip import client_ip
from app.store import StoreError

logger = logging.getLogger("mcp_sonde.service")
#: Such an answer is one observation or one decision (and may be a paid one): no cache keeps it.
NO_STORE = {"Cache-Control": "no-store"}


async def budgeted(
    request: Request,
    services: Services,
    answer: Callable[[str], Awaitable[Response]],
    *,
    limiter: RateLimiter | None = None,
    fault: str = "mcp-sonde failed; nothing was charged",
) -> Response:
    """``answer(client)`` under the client's budget of ``limiter`` (the check route's by default).

    Raises:
        ApiError: 429 ``rate_limited``, whatever ``answer`` raises (with the budget), or 500
            ``internal_error`` (``fault`` as its detail) for any other exception.
    """
    client = rate_key(client_ip(request, services.trusted_proxies))
    try:
        decision = await services.admit(client, limiter)
    except ApiError as exc:
        exc.headers = exc.headers | NO_STORE  # rate_limited carries the budget already
        raise
    try:
        response = await answer(client)
    except ApiError as exc:
        exc.headers = decision.headers() | exc.headers | NO_STORE  # every answer shows the client's budget
        raise
    except StoreError as exc:  # (Redis does not answer: refused before anything was charged)
        refusal = shared_state_unavailable()
        refusal.headers |= decision.headers() | NO_STORE
        raise refusal from exc
    except Exception as exc:  # a fault of ours is an answer of this route too
        logger.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        raise ApiError("internal_error", fault, headers=decision.headers() | NO_STORE) from exc
    response.headers.update(decision.headers() | NO_STORE)
    return response
