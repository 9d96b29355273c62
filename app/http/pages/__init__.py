"""The web pages: server-rendered HTML for people (the API is for programs).

Every page is a Jinja2 template under ``templates/`` rendered by :func:`app.http.pages.render.page`,
which draws a fresh Content Security Policy nonce for the answer (:mod:`app.http.pages.csp`) and hands
it to the template as ``csp_nonce``; the base layout (``base.html``) gives every page its
landmarks, skip link, stylesheet and the one script (``static/site.js``: the copy buttons, and
the directory's filters shown unfolded on a wide screen; loaded with that nonce). Pages work
without JavaScript: the script only adds buttons and unfolds.

Adding a page: write ``templates/<name>.html`` extending ``base.html`` (blocks ``title`` and
``main``), an ``async def`` route in a module of this package that gathers plain data and
returns ``await page(request, "<name>.html", {...})`` (an :class:`~app.checking.errors.ApiError`
becomes the HTML error page through :func:`app.http.pages.render.error_page`), and add its
:class:`~starlette.routing.Route` to :func:`routes`.

Untrusted text (tool names and descriptions, server names, URLs) reaches templates as data
and is escaped by autoescaping; no template marks server text ``|safe``.
"""

from __future__ import annotations

from starlette.routing import Route


def routes() -> list[Route]:
    """The web pages' routes, for the service's route table."""
    from app.http.pages import catalogue as catalogue_page
    from app.http.pages import directory as directory_page
    from app.http.pages import home, static
    from app.http.pages import probe as probe_page
    from app.http.pages import reference as reference_page
    from app.http.pages import server as server_page
    from app.http.pages import stats as stats_page

    return [
        Route("/", home.home, methods=["GET", "HEAD"]),
        Route("/", home.check, methods=["POST"]),
        Route("/servers", directory_page.directory_page, methods=["GET", "HEAD"]),
        Route("/servers/{server_id}", server_page.server_page, methods=["GET", "HEAD"]),
        Route("/stats", stats_page.stats_page, methods=["GET", "HEAD"]),
        Route("/probe", probe_page.probe_page, methods=["GET", "HEAD"]),
        Route("/checks", catalogue_page.checks_page, methods=["GET", "HEAD"]),
        Route("/api", reference_page.api_page, methods=["GET", "HEAD"]),
        Route("/static/{name}", static.static_file, methods=["GET", "HEAD"]),
    ]
