"""``GET /badge/mcp`` (SVG), ``/badge/mcp.png`` and ``/badge/mcp.json`` (shields endpoint schema).

Policy (GitHub fetches README images through its camo proxy, for every viewer, from shared
addresses, and shows anything but a 200 image as broken):

- Always 200 with an image; the state is also in ``X-Badge-State``.
- The badge comes from a light probe (handshake only, at most ``light_probe_timeout_s``, 5 s,
  under camo's 10 s), cached in the store per normalised URL (scheme and host lower-cased,
  IDNA, default port and fragment dropped, path and query kept) for ``badge_ttl_s`` (24 h).
  A stale entry is served at once while one refresh runs (one per URL across instances); a
  result older than twice the TTL shows its date in grey (:mod:`app.http.badges.cache`).
  Concurrent misses share one probe (single-flight, across instances through the store).
- Only misses are limited; a cache hit is never refused, whoever asks. A miss counts against
  its client (IPv4 address or IPv6 /64, ``badge_rate_limit``) and each network above it
  (:mod:`app.checking.prefixes`: IPv6 /56 and /48, IPv4 /24 and /16, each at most its share of
  ``badge_global_limit``). Then its name is looked up: a name that does not resolve counts
  against a small budget of its own (``fairness.yaml``), one that does against the global
  budget (``badge_global_limit``), so misses of made-up names cannot use up the probes real
  badges need. A miss's probe takes the asking client's turn at the host
  (:mod:`app.checking.runner`); refreshes share one and are not counted.
- ``Cache-Control: max-age=300, s-maxage=300`` (60 for badges not backed by a probe: refused
  URL, rate limited, busy), a strong ``ETag``, ``Last-Modified``, 304 on ``If-None-Match``,
  ``X-Content-Type-Options: nosniff`` and a ``Content-Security-Policy`` without scripts
  (:mod:`app.http.badges.drawing`).
- A host whose owner proved control (:mod:`app.claims`) has the label ``MCP · claimed <date>``,
  the date of the claim's last successful verification, read from a copy in memory
  (:mod:`app.claims.hosts`), so a hit never waits for the database.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from app.checking.clients import rate_key
from app.checking.errors import ApiError
from app.checking.prefixes import networks, policy
from app.checking.ratelimit import RateLimiter
from app.checking.runner import CheckMode, TargetBusy
from app.checking.services import Services
from app.errors import SondeError, TargetRefused
from app.guard import ResolutionFailed, ResolverBusy, TargetUrl, check_url, resolve_target
from app.guard.shares import LookupOwner, lookups_for
from app.http.badges.cache import BUSY, LIMITED, REFUSED, BadgeCache, BadgeState
from app.http.badges.drawing import (
    SVG_TYPE,
    PngUnavailable,
    Raw,
    answer,
    drawn,
    if_none_match,
    json_of,
    label_of,
    not_modified,
    png_renderer,
    svg_of,
)  # fmt: skip
from app.http.middleware.clientip import client_ip
from app.probe import ProbeFailed, unresolved_result
from app.store import StoreError, health_of

logger = logging.getLogger("mcp_sonde.badge")
#: Whose turn and lookup share a badge refresh takes: one per host, so the refreshes of one
#: slow-resolving host cannot starve everyone else's.
REFRESH_CLIENT = "badge-refresh"


class BadgeService:
    """Cache, limits and refreshes of badge probes (see the module docs)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        settings = services.settings
        health = health_of(services.store)
        self.per_client = RateLimiter.configured(settings, settings.badge_rate_limit, "badge", health)
        self.overall = RateLimiter.configured(settings, settings.badge_global_limit, "badge-all", health)
        fairness = policy("badge_misses")
        budget, allowance = self.overall.item.amount, self.per_client.item.amount
        self.levels = fairness.levels
        self.per_network = [
            RateLimiter.configured(
                settings, settings.badge_global_limit, f"badge-net{i}", health, level.cap(budget, allowance)
            )
            for i, level in enumerate(fairness.levels)
        ]
        unresolved = max(1, math.ceil(fairness.unresolved * budget))
        self.unresolved = RateLimiter.configured(
            settings, settings.badge_global_limit, "badge-unresolved", health, unresolved
        )
        refresh_lock_s = settings.light_probe_timeout_s + settings.queue_budget_s + 5
        self.cache = BadgeCache(services.cache, settings.badge_ttl_s, refresh_lock_s)
        self._refreshing: set[asyncio.Task[object]] = set()
        self._stale_urls: set[str] = set()

    async def aclose(self) -> None:
        """Close limiter connections."""
        for limiter in (self.per_client, self.overall, *self.per_network, self.unresolved):
            await limiter.aclose()

    async def _probe(
        self, target: TargetUrl, client: str, asked_at: float | None = None, counted: bool = False
    ) -> tuple[BadgeState, str | None]:
        """A light probe through the single-flight runner, on ``client``'s turn; its badge is
        cached. ``counted``: a miss, counted against the unresolved or the global budget once
        its name is looked up (:data:`LIMITED`, nothing cached, when that budget is used up)."""
        settings = self.services.settings
        with self.services.tracing.check(light=True) as span:
            span.target(target.host)
            asked = time.monotonic()
            try:
                try:
                    with lookups_for(LookupOwner(client)):
                        resolved = await resolve_target(
                            target, resolver=self.services.resolver, allow_private=settings.allow_private
                        )
                finally:
                    self.services.metrics.lookup_wait.observe(time.monotonic() - asked)
            except ResolutionFailed as failure:
                if counted and not (await self.unresolved.hit("all")).allowed:
                    return self._limited("badge_unresolved")
                result = unresolved_result(target, failure, light=True)
            else:
                if counted and not (await self.overall.hit("all")).allowed:
                    return self._limited("badge_probe")
                result = await self.services.checks.check(resolved, CheckMode(light=True), client=client)
            span.result(result.status, result.reason)
        return await self.cache.write(target.url, result, asked_at)

    def _refresh_in_background(self, target: TargetUrl) -> None:
        if target.url in self._stale_urls:
            return  # this process is refreshing it (or asking whether another instance is)
        self._stale_urls.add(target.url)

        async def refresh() -> None:
            try:
                if await self.cache.claim_refresh(target.url):
                    await self._probe(target, f"{REFRESH_CLIENT}:{target.host}")
            except SondeError as exc:  # refused now, busy, ...: one line; the stale badge stays until the next try
                logger.warning("badge refresh not made: %s", exc.reason)
            except Exception as exc:  # a refresh never breaks anything
                logger.warning("badge refresh failed: %s", type(exc).__name__)
            finally:
                self._stale_urls.discard(target.url)

        task = asyncio.create_task(refresh())
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def lookup(self, url: str, *, count_miss: bool = True) -> tuple[BadgeState, str | None] | TargetUrl:
        """The badge for ``url`` when no probe is needed (a refused URL, a cache hit; a stale hit
        starts its refresh), else the checked target of a miss (counted unless ``count_miss`` is
        false: the fast path hands its misses to the route, which looks again and counts)."""
        try:
            target = _checked(url, self.services.settings.allow_private)
        except TargetRefused:
            return REFUSED, None
        cached = await self.cache.read(target.url)
        metrics = self.services.metrics
        if cached is None:
            if count_miss:
                metrics.badge_cache.inc("miss")
            return target
        if not cached.fresh:
            metrics.badge_cache.inc("stale")
            self._refresh_in_background(target)
        else:
            metrics.badge_cache.inc("hit")
        return cached.state, cached.modified

    def label_for(self, url: str) -> str:
        """The badge's label for ``url``: with the claim's date when its host is claimed."""
        try:
            host = _checked(url, self.services.settings.allow_private).host
        except TargetRefused:
            return label_of(None)
        return label_of(self.services.claimed.verified_at(host))

    async def state_for(self, request: Request, url: str) -> tuple[BadgeState, str | None]:
        """The badge for ``url`` and its ``Last-Modified``: from the cache, or a limited light probe."""
        settings = self.services.settings
        asked_at = time.time()  # the answer's Date is taken when the request arrives
        found = await self.lookup(url)
        if not isinstance(found, TargetUrl):
            return found
        target = found
        client = rate_key(client_ip(request, self.services.trusted_proxies))
        if not (await self.per_client.hit(client)).allowed:
            return self._limited("badge_probe")
        for limiter, network in zip(self.per_network, networks(client, self.levels), strict=False):
            if not (await limiter.hit(network)).allowed:
                return self._limited("badge_network")
        # The miss answers within the light-probe budget: a probe still queued behind others of
        # the same host finishes in the background and fills the cache for the next view.
        task = asyncio.create_task(self._miss(target, client, asked_at))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(task), settings.light_probe_timeout_s)
        except TimeoutError:
            return BUSY, None

    def _limited(self, limit: str) -> tuple[BadgeState, None]:
        self.services.metrics.limits_hit.labels(limit=limit).inc()
        return LIMITED, None

    async def _miss(self, target: TargetUrl, client: str, asked_at: float) -> tuple[BadgeState, str | None]:
        try:
            return await self._probe(target, client, asked_at, counted=True)
        except TargetRefused:
            return REFUSED, None
        except (TargetBusy, ResolverBusy, ProbeFailed, StoreError):  # (Redis down: no probe without its locks)
            return BUSY, None


@functools.lru_cache(maxsize=4096)
def _checked(url: str, allow_private: bool) -> TargetUrl:
    """:func:`app.guard.check_url`, remembered: badge URLs repeat on every README view."""
    return check_url(url, allow_private=allow_private)


def _answer(
    request: Request, body: bytes, etag: str, media_type: str, state: BadgeState, modified: str | None
) -> Response:
    fresh = not_modified(if_none_match(request.headers.getlist("if-none-match")), etag)
    return Raw(*answer(body, etag, media_type, state, modified, fresh))


def _badge_service(request: Request) -> BadgeService:
    service: BadgeService = request.app.state.badges
    return service


async def badge_svg(request: Request) -> Response:
    """``GET /badge/mcp?url=...&style=...``."""
    service, url = _badge_service(request), request.query_params.get("url", "")
    state, modified = await service.state_for(request, url)
    body, etag = svg_of(state, request.query_params.get("style", "flat"), service.label_for(url))
    return _answer(request, body, etag, SVG_TYPE, state, modified)


async def badge_png(request: Request) -> Response:
    """``GET /badge/mcp.png?url=...``: the flat badge as PNG (drawn off the event loop, then remembered);
    503 ``png_unavailable`` before any probe when the renderer cannot load."""
    try:
        await anyio.to_thread.run_sync(png_renderer)
    except PngUnavailable as exc:
        raise ApiError(exc.reason, exc.message, headers={"Cache-Control": "no-store"}) from exc
    service, url = _badge_service(request), request.query_params.get("url", "")
    state, modified = await service.state_for(request, url)
    body, etag = await anyio.to_thread.run_sync(
        drawn, service.label_for(url), state.message, state.color, "flat", "png"
    )
    return _answer(request, body, etag, "image/png", state, modified)


async def badge_json(request: Request) -> Response:
    """``GET /badge/mcp.json?url=...``: shields' endpoint schema, so maintainers can style it themselves."""
    service, url = _badge_service(request), request.query_params.get("url", "")
    state, modified = await service.state_for(request, url)
    body, etag = json_of(state, service.label_for(url))
    return _answer(request, body, etag, "application/json", state, modified)
