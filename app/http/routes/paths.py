"""What the history routes share: the server id in their path, how long they wait for the
database, their caching, and the answer when the database does not answer.

``server_id`` is the first 24 hex characters of the SHA-256 of the server's normalised URL
without its query string (:func:`app.history.records.server_id_of`); anything else is ``404
server_not_found``, as is an id never checked here.
"""

from __future__ import annotations

import re

from starlette.requests import Request

from app.checking.errors import ApiError

SERVER_ID = re.compile(r"^[0-9a-f]{24}$")
#: History reads may be cached a minute.
CACHE = {"Cache-Control": "public, max-age=60"}
#: Longest wait for the database on a history read, and on the uptime badge's (image proxies
#: give up early), seconds; past it the database does not answer.
READ_S = 3.0
BADGE_READ_S = 1.0


def server_id_in_path(request: Request) -> str:
    """The request's ``{server_id}``.

    Raises:
        ApiError: 404 ``server_not_found`` for one that is not 24 lower-case hex characters.
    """
    server_id = str(request.path_params["server_id"])
    if not SERVER_ID.fullmatch(server_id):
        raise ApiError("server_not_found", "a server id is 24 lower-case hex characters (SHA-256 of its URL)")
    return server_id


def unavailable(exc: Exception) -> ApiError:
    """``503 history_unavailable`` for a fault of the database (or its driver) ``exc``."""
    return ApiError("history_unavailable", f"the history database does not answer ({type(exc).__name__})")
