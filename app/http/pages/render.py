"""The one Jinja2 environment of the web pages, and the HTML answers rendered with it.

Policy: autoescaping is on for every template (``.html`` and ``.svg``, and strings), so any
value a template prints is escaped unless the template says otherwise (none does for server
text); an undefined name is an error (``StrictUndefined``), never an empty string, so a
misspelt field fails its test instead of vanishing from the page. Every answer carries the
headers of :mod:`app.http.pages.csp` with a nonce of its own, passed to the template as ``csp_nonce``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.checking.errors import ApiError
from app.http.pages import csp, explain, references, units


@functools.cache
def environment() -> Environment:
    """The environment, built once (templates are read from the package data, then cached)."""
    env = Environment(
        loader=PackageLoader("app.http.pages", "templates"),
        autoescape=select_autoescape(["html", "svg"], default_for_string=True, default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,
    )
    env.globals["explain"] = explain.explain
    env.globals["check_title"] = explain.check_title
    env.filters["ms"] = _ms
    env.filters["percent"] = _percent
    env.filters["moment"] = units.moment
    env.filters["size"] = units.size
    env.filters["duration"] = units.duration
    env.filters["linked"] = references.linked
    return env


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f} ms"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render(name: str, context: Mapping[str, Any]) -> str:
    """The template ``name`` rendered with ``context`` (no request: for tests and reuse)."""
    return environment().get_template(name).render(context)


def page(
    request: Request,
    name: str,
    context: Mapping[str, Any],
    status: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """The page ``name`` as an HTML answer, with a fresh CSP nonce (``csp_nonce`` in the template)."""
    nonce = csp.new_nonce()
    body = render(name, {**context, "csp_nonce": nonce, "path": request.url.path})
    return HTMLResponse(body, status_code=status, headers={**(headers or {}), **csp.page_headers(nonce)})


def error_page(request: Request, exc: ApiError, context: Mapping[str, Any] | None = None) -> HTMLResponse:
    """An :class:`ApiError` as the HTML error page: its status, its headers (``Retry-After``, the
    rate-limit budget), its reason key and what it means in words."""
    values = {
        "status": exc.status_code,
        "reason": exc.reason,
        "detail": exc.message,
        "meaning": explain.explain_refusal(exc.reason),
        "retry_after": exc.headers.get("Retry-After"),
        **(context or {}),
    }
    headers = {name: value for name, value in exc.headers.items() if name.lower() != "content-type"}
    return page(request, "error.html", values, status=exc.status_code, headers=headers)
