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
  ``X-Content-Type-Options: nosniff`` and a ``Content-Security-Policy`` without scripts.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import math
import threading
import time
from collections.abc import Callable

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
from app.http.middleware.clientip import client_ip
from app.probe import ProbeFailed, unresolved_result
from app.store import StoreError, health_of
from badges import STYLES, Style, render_svg

logger = logging.getLogger("mcp_sonde.badge")
LABEL = "MCP"
#: Whose turn and lookup share a badge refresh takes: one per host, so the refreshes of one
#: slow-resolving host cannot starve everyone else's.
REFRESH_CLIENT = "badge-refresh"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


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
                metrics.badge_miss.inc()
            return target
        if not cached.fresh:
            metrics.badge_stale.inc()
            self._refresh_in_background(target)
        else:
            metrics.badge_hit.inc()
        return cached.state, cached.modified

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


class PngUnavailable(SondeError):
    """The PNG renderer cannot load (cairosvg, or the system's cairo library; reason ``png_unavailable``)."""


class _PngRenderer:
    """:func:`badges.png.render_png`, imported on first use: ``serve`` starts (and serves SVG and
    JSON badges) on a machine without the system's cairo library, and a renderer that cannot
    load is said once in the log, then refused at once on every PNG request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._render: Callable[[str], bytes] | None = None
        self._failure: str | None = None

    def __call__(self) -> Callable[[str], bytes]:
        """The renderer (blocking on the first call: call it off the event loop).

        Raises:
            PngUnavailable: cairosvg or cairo cannot be loaded.
        """
        with self._lock:
            if self._render is None and self._failure is None:
                try:
                    from badges.png import render_png
                except (ImportError, OSError) as exc:  # (cairocffi's dlopen raises OSError)
                    self._failure = type(exc).__name__
                    logger.error(
                        "PNG badges are unavailable: the cairo library could not be loaded (%s); "
                        "GET /badge/mcp.png answers 503 png_unavailable, SVG and JSON badges are served",
                        self._failure,
                    )
                else:
                    self._render = render_png
            if self._render is None:
                message = "PNG badges are unavailable on this instance; use the SVG badge"
                raise PngUnavailable("png_unavailable", message)
            return self._render


png_renderer = _PngRenderer()


@functools.lru_cache(maxsize=1024)
def _drawn(message: str, color: str, style: Style, kind: str) -> tuple[bytes, str]:
    """The badge body and its strong ETag, drawn once per message, colour and known style."""
    svg = render_svg(LABEL, message, color, style=style)
    body = png_renderer()(svg) if kind == "png" else svg.encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


@functools.lru_cache(maxsize=4096)
def answer(
    body: bytes, etag: str, media_type: str, state: BadgeState, modified: str | None, not_modified: bool
) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """Status, raw headers and body of a badge answer (built once per badge, state and date)."""
    age = 300 if state.probed else 60
    headers = [
        (b"cache-control", f"max-age={age}, s-maxage={age}".encode()),
        (b"etag", etag.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", CSP.encode()),
        (b"x-badge-state", state.state.encode()),
    ]
    if modified is not None:
        headers.append((b"last-modified", modified.encode()))
    if not_modified:
        return 304, tuple(headers), b""
    headers += [(b"content-length", str(len(body)).encode()), (b"content-type", media_type.encode())]
    return 200, tuple(headers), body


class _Raw(Response):
    """A response whose raw headers are given as they are (built by :func:`answer`)."""

    def __init__(self, status: int, headers: tuple[tuple[bytes, bytes], ...], body: bytes) -> None:
        self.status_code, self.body, self.background = status, body, None
        self.raw_headers = list(headers)


def if_none_match(values: list[str]) -> str | None:
    """Every ``If-None-Match`` line as one list (RFC 9110 section 5.3), ``None`` when there is none."""
    return ", ".join(values) if values else None


def _answer(
    request: Request, body: bytes, etag: str, media_type: str, state: BadgeState, modified: str | None
) -> Response:
    fresh = not_modified(if_none_match(request.headers.getlist("if-none-match")), etag)
    return _Raw(*answer(body, etag, media_type, state, modified, fresh))


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` matches ``etag`` by weak comparison: a list, ``W/`` tags or ``*`` (RFC 9110 13.1.2)."""
    if if_none_match is None:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


def _badge_service(request: Request) -> BadgeService:
    service: BadgeService = request.app.state.badges
    return service


SVG_TYPE = "image/svg+xml; charset=utf-8"


def svg_of(state: BadgeState, asked_style: str | None) -> tuple[bytes, str]:
    """The SVG badge and its ETag in the style asked for (``flat`` when it is not one we draw)."""
    style: Style = asked_style if asked_style in STYLES else "flat"
    return _drawn(state.message, state.color, style, "svg")


#: Badge states that say the server is broken: shields' ``isError`` (its colour cannot be overridden).
ERROR_STATES = frozenset({"unreachable", "not_mcp", "tls", "not_found", "error", "refused"})


def json_of(state: BadgeState) -> tuple[bytes, str]:
    """The shields endpoint document of a badge and its ETag (``cacheSeconds``: shields' floor,
    300, which is also our ``max-age`` for a probed badge)."""
    return _json_drawn(state.message, state.color, state.state in ERROR_STATES)


@functools.lru_cache(maxsize=1024)
def _json_drawn(message: str, color: str, is_error: bool) -> tuple[bytes, str]:
    document = {
        "schemaVersion": 1,
        "label": LABEL,
        "message": message,
        "color": color,
        "isError": is_error,
        "cacheSeconds": 300,
    }
    body = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def badge_svg(request: Request) -> Response:
    """``GET /badge/mcp?url=...&style=...``."""
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    body, etag = svg_of(state, request.query_params.get("style", "flat"))
    return _answer(request, body, etag, SVG_TYPE, state, modified)


async def badge_png(request: Request) -> Response:
    """``GET /badge/mcp.png?url=...``: the flat badge as PNG (drawn off the event loop, then remembered);
    503 ``png_unavailable`` before any probe when the renderer cannot load."""
    try:
        await anyio.to_thread.run_sync(png_renderer)
    except PngUnavailable as exc:
        raise ApiError(exc.reason, exc.message, headers={"Cache-Control": "no-store"}) from exc
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    body, etag = await anyio.to_thread.run_sync(_drawn, state.message, state.color, "flat", "png")
    return _answer(request, body, etag, "image/png", state, modified)


async def badge_json(request: Request) -> Response:
    """``GET /badge/mcp.json?url=...``: shields' endpoint schema, so maintainers can style it themselves."""
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    body, etag = json_of(state)
    return _answer(request, body, etag, "application/json", state, modified)
