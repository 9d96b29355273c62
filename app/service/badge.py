"""``GET /badge/mcp`` (SVG), ``/badge/mcp.png`` and ``/badge/mcp.json`` (shields endpoint schema).

Policy (GitHub fetches README images through its camo proxy, for every viewer, from shared
addresses, and shows anything but a 200 image as broken):

- Always 200 with an image; the state is also in ``X-Badge-State``.
- The badge comes from a light probe (handshake only, at most ``light_probe_timeout_s``, 5 s,
  under camo's 10 s), cached in the store per normalised URL (scheme and host lower-cased,
  IDNA, default port and fragment dropped, path and query kept) for ``badge_ttl_s`` (24 h).
  A stale entry is served at once while one refresh runs. Concurrent misses share one probe
  (single-flight, across instances through the store).
- Only misses are limited: per client IP (``badge_rate_limit``) and in all
  (``badge_global_limit``); a cache hit is never refused, whoever asks.
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
import time
from dataclasses import dataclass
from datetime import UTC
from email.utils import format_datetime

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from app.errors import TargetRefused
from app.guard import ResolutionFailed, ResolverBusy, TargetUrl, check_url, resolve_target
from app.probe import ProbeFailed, ProbeResult, unresolved_result
from app.service.checks import CheckMode, TargetBusy
from app.service.clientip import client_ip, rate_key
from app.service.ratelimit import RateLimiter
from app.service.services import Services
from app.store import key
from badges import STYLES, Style, render_svg
from badges.png import render_png

logger = logging.getLogger("mcp_sonde.badge")
LABEL = "MCP"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True, slots=True)
class BadgeState:
    """What a badge says: the state key (``X-Badge-State``), message, colour, and whether a probe backs it."""

    state: str
    message: str
    color: str
    probed: bool = True


def state_of(result: ProbeResult) -> BadgeState:
    """The badge for a probe result."""
    if result.status == "ok":
        return BadgeState("ok", f"live · checked {result.checked_at:%Y-%m-%d}", "brightgreen")
    if result.status == "auth":
        return BadgeState("auth", "auth required", "yellow")
    if result.status in ("timeout", "dns", "unreachable"):
        return BadgeState("unreachable", "unreachable", "lightgrey")
    if result.status == "not_mcp":
        return BadgeState("not_mcp", "not MCP", "lightgrey")
    if result.status == "tls":
        return BadgeState("tls", "TLS error", "red")
    if result.status == "not_found":
        return BadgeState("not_found", "not found", "red")
    return BadgeState("error", result.status.replace("_", " "), "red")


REFUSED = BadgeState("refused", "invalid URL", "lightgrey", probed=False)
LIMITED = BadgeState("rate_limited", "rate limited", "lightgrey", probed=False)
BUSY = BadgeState("busy", "checking…", "lightgrey", probed=False)


class BadgeService:
    """Cache, limits and refreshes of badge probes (see the module docs)."""

    def __init__(self, services: Services) -> None:
        self.services = services
        settings = services.settings
        self.per_client = RateLimiter(
            settings.badge_rate_limit, "badge", settings.redis_url, settings.redis_timeout_s, settings.redis_namespace
        )
        self.overall = RateLimiter(
            settings.badge_global_limit,
            "badge-all",
            settings.redis_url,
            settings.redis_timeout_s,
            settings.redis_namespace,
        )
        self._refreshing: set[asyncio.Task[object]] = set()

    async def aclose(self) -> None:
        """Close limiter connections."""
        await self.per_client.aclose()
        await self.overall.aclose()

    def _cache_key(self, target: TargetUrl) -> str:
        return key("badge", target.url)

    async def _cached(self, target: TargetUrl) -> tuple[BadgeState, str, bool] | None:
        """``(state, last-modified, fresh)`` from the cache; a compact entry, cheap to read on every hit."""
        raw = await self.services.store.get(self._cache_key(target))
        if raw is None:
            return None
        try:
            entry = json.loads(raw)
            state = BadgeState(entry["state"], entry["message"], entry["color"])
            return state, str(entry["modified"]), time.time() < float(entry["fresh_until"])
        except (ValueError, KeyError, TypeError):
            return None

    async def _probe(self, target: TargetUrl) -> tuple[BadgeState, str]:
        """A light probe through the single-flight runner; its badge is cached."""
        settings = self.services.settings
        try:
            resolved = await resolve_target(
                target, resolver=self.services.resolver, allow_private=settings.allow_private
            )
        except ResolutionFailed as failure:
            result = unresolved_result(target, failure, light=True)
        else:
            result = await self.services.checks.check(resolved, CheckMode(light=True))
        state = state_of(result)
        modified = format_datetime(result.checked_at.astimezone(UTC), usegmt=True)
        entry = {
            "state": state.state,
            "message": state.message,
            "color": state.color,
            "modified": modified,
            "fresh_until": time.time() + settings.badge_ttl_s,
        }
        await self.services.store.set(self._cache_key(target), json.dumps(entry).encode(), 2 * settings.badge_ttl_s)
        return state, modified

    def _refresh_in_background(self, target: TargetUrl) -> None:
        async def refresh() -> None:
            try:
                await self._probe(target)
            except Exception:  # a refresh never breaks anything; the stale badge stays until the next try
                logger.warning("badge refresh failed", exc_info=True)

        task = asyncio.create_task(refresh())
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def state_for(self, request: Request, url: str) -> tuple[BadgeState, str | None]:
        """The badge for ``url`` and its ``Last-Modified``: from the cache, or a limited light probe."""
        settings = self.services.settings
        try:
            target = _checked(url, settings.allow_private)
        except TargetRefused:
            return REFUSED, None
        cached = await self._cached(target)
        if cached is not None:
            state, modified, fresh = cached
            if not fresh:
                self._refresh_in_background(target)
            return state, modified
        client = rate_key(client_ip(request, self.services.trusted_proxies))
        if not (await self.per_client.hit(client)).allowed or not (await self.overall.hit("all")).allowed:
            self.services.metrics.limits_hit.labels(limit="badge_probe").inc()
            return LIMITED, None
        # The miss answers within the light-probe budget: a probe still queued behind others of
        # the same host finishes in the background and fills the cache for the next view.
        task = asyncio.create_task(self._miss(target))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)
        try:
            return await asyncio.wait_for(asyncio.shield(task), settings.light_probe_timeout_s)
        except TimeoutError:
            return BUSY, None

    async def _miss(self, target: TargetUrl) -> tuple[BadgeState, str | None]:
        try:
            return await self._probe(target)
        except TargetRefused:
            return REFUSED, None
        except (TargetBusy, ResolverBusy, ProbeFailed):
            return BUSY, None


@functools.lru_cache(maxsize=4096)
def _checked(url: str, allow_private: bool) -> TargetUrl:
    """:func:`app.guard.check_url`, remembered: badge URLs repeat on every README view."""
    return check_url(url, allow_private=allow_private)


@functools.lru_cache(maxsize=1024)
def _drawn(message: str, color: str, style: Style, kind: str) -> tuple[bytes, str]:
    """The badge body and its strong ETag, drawn once per message, colour and known style."""
    svg = render_svg(LABEL, message, color, style=style)
    body = render_png(svg) if kind == "png" else svg.encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _headers(etag: str, state: BadgeState, modified: str | None) -> dict[str, str]:
    age = 300 if state.probed else 60
    headers = {
        "Cache-Control": f"max-age={age}, s-maxage={age}",
        "ETag": etag,
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": CSP,
        "X-Badge-State": state.state,
    }
    if modified is not None:
        headers["Last-Modified"] = modified
    return headers


def _answer(
    request: Request, body: bytes, etag: str, media_type: str, state: BadgeState, modified: str | None
) -> Response:
    headers = _headers(etag, state, modified)
    if not_modified(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=media_type, headers=headers)


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


async def badge_svg(request: Request) -> Response:
    """``GET /badge/mcp?url=...&style=...``."""
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    asked = request.query_params.get("style", "flat")
    style: Style = asked if asked in STYLES else "flat"
    body, etag = _drawn(state.message, state.color, style, "svg")
    return _answer(request, body, etag, "image/svg+xml; charset=utf-8", state, modified)


async def badge_png(request: Request) -> Response:
    """``GET /badge/mcp.png?url=...``: the flat badge as PNG (drawn off the event loop, then remembered)."""
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    body, etag = await anyio.to_thread.run_sync(_drawn, state.message, state.color, "flat", "png")
    return _answer(request, body, etag, "image/png", state, modified)


async def badge_json(request: Request) -> Response:
    """``GET /badge/mcp.json?url=...``: shields' endpoint schema, so maintainers can style it themselves."""
    state, modified = await _badge_service(request).state_for(request, request.query_params.get("url", ""))
    document = {"schemaVersion": 1, "label": LABEL, "message": state.message, "color": state.color}
    body = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return _answer(request, body, etag, "application/json", state, modified)
