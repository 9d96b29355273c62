"""Drawing badges and the answers that carry them: the SVG, PNG and shields JSON bodies, their
strong ETags, and the status and raw headers of an answer (:mod:`app.http.badges.route`).

- Every body is drawn once per label, message, colour and style and remembered (a badge's
  words repeat on every README view); its ETag is the first 128 bits of its SHA-256.
- The label is ``MCP``, or ``MCP · claimed <date>`` for a host whose owner proved control
  (:mod:`app.claims.hosts`: the date of the last successful verification).
- The PNG is drawn by cairosvg, imported on first use (:class:`PngRenderer`).
- An answer says ``Cache-Control: max-age=300, s-maxage=300`` (60 for badges not backed by a
  probe), the ETag, ``Last-Modified`` when there is one, ``X-Content-Type-Options: nosniff``, a
  ``Content-Security-Policy`` without scripts and ``X-Badge-State``; 304 on a matching
  ``If-None-Match`` (weak comparison, RFC 9110 §13.1.2).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import threading
from collections.abc import Callable
from datetime import datetime

from starlette.responses import Response

from app.errors import SondeError
from app.http.badges.cache import BadgeState
from app.http.middleware.cors import EXPOSED_HEADERS
from badges import STYLES, Style, render_svg

logger = logging.getLogger("mcp_sonde.badge")
LABEL = "MCP"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def label_of(claimed_at: datetime | None) -> str:
    """The badge's label: ``MCP``, and the claim's date when the host is claimed."""
    return LABEL if claimed_at is None else f"{LABEL} · claimed {claimed_at:%Y-%m-%d}"


class PngUnavailable(SondeError):
    """The PNG renderer cannot load (cairosvg, or the system's cairo library; reason ``png_unavailable``)."""


class PngRenderer:
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


png_renderer = PngRenderer()


@functools.lru_cache(maxsize=1024)
def drawn(label: str, message: str, color: str, style: Style, kind: str) -> tuple[bytes, str]:
    """The badge body and its strong ETag, drawn once per label, message, colour and known style."""
    svg = render_svg(label, message, color, style=style)
    body = png_renderer()(svg) if kind == "png" else svg.encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


@functools.lru_cache(maxsize=4096)
def answer(
    body: bytes, etag: str, media_type: str, state: BadgeState, modified: str | None, not_modified: bool
) -> tuple[int, tuple[tuple[bytes, bytes], ...], bytes]:
    """Status, raw headers and body of a badge answer (the headers built once per badge, state and date)."""
    status, headers = _head(etag, media_type, state.probed, state.state, modified, not_modified, len(body))
    return status, headers, b"" if not_modified else body


#: Sent with every badge, with an ``Origin`` or not: the Fetch standard (section 3.2.5, "CORS
#: protocol and HTTP caches") asks a resource whose ``Access-Control-Allow-Origin`` is ``*`` for
#: everyone to send it on every response, so a shared cache that kept a badge fetched without an
#: ``Origin`` hands a page a copy it may read (the CORS middleware sets the same values).
ANY_PAGE = {"Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": ", ".join(EXPOSED_HEADERS)}
_CORS = tuple((name.lower().encode(), value.encode()) for name, value in ANY_PAGE.items())


@functools.lru_cache(maxsize=1024)
def _head(
    etag: str, media_type: str, probed: bool, state: str, modified: str | None, not_modified: bool, length: int
) -> tuple[int, tuple[tuple[bytes, bytes], ...]]:
    age = 300 if probed else 60
    headers = [
        (b"cache-control", f"max-age={age}, s-maxage={age}".encode()),
        (b"etag", etag.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"content-security-policy", CSP.encode()),
        (b"x-badge-state", state.encode()),
        *_CORS,
    ]
    if modified is not None:
        headers.append((b"last-modified", modified.encode()))
    if not_modified:
        return 304, tuple(headers)
    headers += [(b"content-length", str(length).encode()), (b"content-type", media_type.encode())]
    return 200, tuple(headers)


class Raw(Response):
    """A response whose raw headers are given as they are (built by :func:`answer`)."""

    def __init__(self, status: int, headers: tuple[tuple[bytes, bytes], ...], body: bytes) -> None:
        self.status_code, self.body, self.background = status, body, None
        self.raw_headers = list(headers)


def if_none_match(values: list[str]) -> str | None:
    """Every ``If-None-Match`` line as one list (RFC 9110 section 5.3), ``None`` when there is none."""
    return ", ".join(values) if values else None


def not_modified(if_none_match: str | None, etag: str) -> bool:
    """``If-None-Match`` matches ``etag`` by weak comparison: a list, ``W/`` tags or ``*`` (RFC 9110 13.1.2)."""
    if if_none_match is None:
        return False
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


SVG_TYPE = "image/svg+xml; charset=utf-8"


def svg_of(state: BadgeState, asked_style: str | None, label: str = LABEL) -> tuple[bytes, str]:
    """The SVG badge and its ETag in the style asked for (``flat`` when it is not one we draw)."""
    style: Style = asked_style if asked_style in STYLES else "flat"
    return drawn(label, state.message, state.color, style, "svg")


#: Badge states that say the server is broken: shields' ``isError`` (its colour cannot be overridden).
ERROR_STATES = frozenset({"unreachable", "not_mcp", "tls", "not_found", "error", "refused"})


def json_of(state: BadgeState, label: str = LABEL) -> tuple[bytes, str]:
    """The shields endpoint document of a badge and its ETag (``cacheSeconds``: shields' floor,
    300, which is also our ``max-age`` for a probed badge)."""
    return _json_drawn(label, state.message, state.color, state.state in ERROR_STATES)


@functools.lru_cache(maxsize=1024)
def _json_drawn(label: str, message: str, color: str, is_error: bool) -> tuple[bytes, str]:
    document = {
        "schemaVersion": 1,
        "label": label,
        "message": message,
        "color": color,
        "isError": is_error,
        "cacheSeconds": 300,
    }
    body = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
