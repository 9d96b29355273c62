"""CORS (the Fetch standard's CORS protocol): what pages on other origins may do with the API.

Policy:
- Any origin may read badges and the contract, and call the API without credentials
  (``Access-Control-Allow-Origin: *``, never ``Allow-Credentials``): the API holds no cookie or
  ambient authority a page could borrow.
- A paid check may come from any page: only the visitor's own wallet can sign its payment.
- The free pool is different: its share belongs to the client's address, so any page could
  spend its visitors' shares. A browser must send ``X-Free-Pool`` as a non-safelisted header,
  which takes a preflight; the preflight allows that header only for the origins in
  ``free_pool_origins`` (and this service's own origin), and a request that still carries
  it from another ``Origin`` is refused with ``403 free_pool_origin_refused`` (browsers that
  skip preflights, extensions). Clients that are not browsers send no ``Origin`` and are not
  concerned.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Final
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp

from app.checking.freepool import HEADER as FREE_POOL_HEADER
from app.settings import Settings

#: Response headers browsers may read (x402 clients in a page need the payment headers).
EXPOSED_HEADERS: Final = [
    "PAYMENT-REQUIRED",
    "PAYMENT-RESPONSE",
    "X-Free-Pool-Remaining",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "RateLimit",
    "RateLimit-Policy",
    "Retry-After",
    "X-Request-Id",
    "X-Badge-State",
    "ETag",
]

_HEADERS: Final = [
    "content-type",
    "payment-signature",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "mcp-sonde-proof",
]


def own_origin(settings: Settings) -> str:
    """This service's origin (scheme://host[:port]), from its public base URL."""
    return _own_origin(settings.public_base_url)


@functools.lru_cache(maxsize=8)
def _own_origin(base_url: str) -> str:
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def free_pool_origins(settings: Settings) -> frozenset[str]:
    """Origins whose pages may draw on the free pool."""
    return _origins(own_origin(settings), tuple(settings.free_pool_origins))


@functools.lru_cache(maxsize=8)
def _origins(own: str, configured: tuple[str, ...]) -> frozenset[str]:
    """The set, built once per configuration (it is asked on every free-pool request)."""
    return frozenset({own, *(origin.rstrip("/").lower() for origin in configured)})


def origin_may_draw(headers: Mapping[str, str], settings: Settings) -> bool:
    """Whether a request's ``Origin`` (if any) may draw on the free pool."""
    origin = headers.get("origin")
    return origin is None or origin.lower() in free_pool_origins(settings)


class Cors(CORSMiddleware):
    """Starlette's CORS middleware, whose preflight allows the free-pool header only for the
    configured origins (see the module docs)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        options = {
            "allow_origins": ["*"],
            "allow_methods": ["GET", "POST", "PUT", "DELETE"],
            "expose_headers": EXPOSED_HEADERS,
            "max_age": 600,
        }
        super().__init__(app, allow_headers=[*_HEADERS, FREE_POOL_HEADER], **options)  # type: ignore[arg-type]
        self._without_free_pool = CORSMiddleware(app, allow_headers=_HEADERS, **options)  # type: ignore[arg-type]
        self._origins = free_pool_origins(settings)

    def preflight_response(self, request_headers: Headers) -> Response:
        if request_headers["origin"].lower() in self._origins:
            return super().preflight_response(request_headers)
        return self._without_free_pool.preflight_response(request_headers)
