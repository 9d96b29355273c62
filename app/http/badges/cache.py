"""The badge cache: what a badge says, its entries in the store, their age, and their refreshes.

Policy:
- An entry is one compact JSON object per normalised URL: the badge state, message, colour,
  the probe's time (``checked``, epoch seconds, and ``modified``, its HTTP date) and
  ``fresh_until``. It is fresh for ``badge_ttl_s``; a stale one is served at once while one
  refresh runs. A result older than twice the TTL (its refreshes failed or were refused) is
  shown in grey with its date (state ``aged``), never as a stale green; entries are kept for
  :data:`KEEP_TTLS` TTLs so that a refused refresh never turns a badge into a probe per view.
- One refresh per URL at a time across instances: a store lock taken before the refresh
  (and before its host lookup) and left to expire, so a refresh that fails or is refused is
  tried again at most once per lock period, whoever asks.
- ``Last-Modified`` is never later than the answer's ``Date`` (RFC 9110 section 8.8.2.1): it
  is the probe's time less :data:`DATE_LAG_S` (the HTTP server writes ``Date`` from a clock it
  refreshes once a second, when the request arrives), never later than the request's arrival
  less that (a miss's probe may wait for its host's turn), nor our own clock less that
  (another instance's clock may run ahead of ours). It stays the same for every hit of one entry.
- An entry that is not one of ours (wrong types, text a header cannot carry, no finite time)
  is a miss, probed and written again.
"""

from __future__ import annotations

import functools
import json
import math
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Final

from app.probe import ProbeResult
from app.store import Store, key

KEEP_TTLS: Final = 8
_EPOCH_MIN, _EPOCH_MAX = 0.0, 253_402_300_799.0  # 1970 to the end of 9999: what an HTTP date can carry
DATE_LAG_S: Final = 2.0


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


def aged(checked: float) -> BadgeState:
    """The badge of a result too old to stand for the server now: its date, in grey."""
    return BadgeState("aged", f"last checked {datetime.fromtimestamp(checked, UTC):%Y-%m-%d}", "lightgrey")


@dataclass(frozen=True, slots=True)
class Cached:
    """A cache entry read: the badge to show, its ``Last-Modified``, and whether it is fresh."""

    state: BadgeState
    modified: str
    fresh: bool


def http_date(epoch: float) -> str:
    """An HTTP date (RFC 9110 section 5.6.7)."""
    return format_datetime(datetime.fromtimestamp(math.floor(epoch), UTC), usegmt=True)


class BadgeCache:
    """Badge entries in ``store`` (see the module docs).

    Args:
        store: where entries and refresh locks live.
        ttl_s: how long a probe's badge is fresh.
        refresh_lock_s: how long one refresh holds its URL (its whole budget, with margin).
    """

    def __init__(self, store: Store, ttl_s: float, refresh_lock_s: float) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.refresh_lock_s = refresh_lock_s

    async def read(self, url: str) -> Cached | None:
        """The entry of normalised ``url``, or ``None`` for a miss."""
        raw = await self.store.get(_badge_key(url))
        entry = _entry(raw) if raw is not None else None
        if entry is None:
            return None
        state, checked, modified, fresh_until = entry
        now = time.time()
        if now - checked > 2 * self.ttl_s:
            state = aged(checked)
        if checked > now:
            modified = http_date(now - DATE_LAG_S)
        return Cached(state, modified, now < fresh_until)

    async def write(self, url: str, result: ProbeResult, asked_at: float | None = None) -> tuple[BadgeState, str]:
        """Keep the badge of a light probe's ``result``; its state and ``Last-Modified`` for an
        answer to a request that arrived at ``asked_at`` (the probe may have waited for its turn)."""
        state = state_of(result)
        checked = result.checked_at.timestamp()
        entry = {
            "state": state.state,
            "message": state.message,
            "color": state.color,
            "checked": checked,
            "modified": http_date(checked),
            "fresh_until": time.time() + self.ttl_s,
        }
        await self.store.set(_badge_key(url), json.dumps(entry).encode(), KEEP_TTLS * self.ttl_s)
        return state, http_date(min(checked, asked_at or math.inf, time.time()) - DATE_LAG_S)

    async def claim_refresh(self, url: str) -> bool:
        """Take the URL's refresh for this instance; ``False`` when another refresh holds it."""
        return await self.store.set_nx(key("badge-refresh", url), b"1", self.refresh_lock_s)


@functools.lru_cache(maxsize=4096)
def _entry(raw: bytes) -> tuple[BadgeState, float, str, float] | None:
    """``(state, checked, last-modified, fresh until)`` of a stored entry; ``None`` when it is not one of ours."""
    try:
        entry = json.loads(raw)
        state, message, color, modified = entry["state"], entry["message"], entry["color"], entry["modified"]
        fresh_until = float(entry["fresh_until"])
        texts = (state, message, color, modified)
        if not all(isinstance(text, str) and text.isprintable() and 0 < len(text) <= 200 for text in texts):
            return None
        checked = float(entry["checked"]) if "checked" in entry else parsedate_to_datetime(modified).timestamp()
    except (ValueError, KeyError, TypeError, AttributeError, IndexError, OverflowError):
        return None
    if not (math.isfinite(fresh_until) and _EPOCH_MIN <= checked <= _EPOCH_MAX):
        return None
    return BadgeState(state, message, color), checked, http_date(checked - DATE_LAG_S), fresh_until


@functools.lru_cache(maxsize=4096)
def _badge_key(url: str) -> str:
    """The store key of a normalised URL's badge (a hash: computed once per URL seen often)."""
    return key("badge", url)
