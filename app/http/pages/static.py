"""``GET /static/{name}``: the pages' stylesheet and script, from the package data.

Policy: only the files named in :data:`FILES` are served (no path from the request reaches the
file system); each is read once, answered with its media type, ``nosniff`` and an ``ETag``,
and may be cached an hour. An unknown name is ``404 not_found``.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from typing import Final

from starlette.requests import Request
from starlette.responses import Response

from app.checking.errors import ApiError

#: name -> media type
FILES: Final = {
    "site.css": "text/css; charset=utf-8",
    "site.js": "text/javascript; charset=utf-8",
}


@functools.cache
def _read(name: str) -> tuple[bytes, str]:
    body = resources.files("app.http.pages").joinpath("static", name).read_bytes()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def static_file(request: Request) -> Response:
    """``GET /static/{name}``."""
    name = str(request.path_params["name"])
    if name not in FILES:
        raise ApiError("not_found", "no such file")
    body, etag = _read(name)
    headers = {"Cache-Control": "public, max-age=3600", "ETag": etag, "X-Content-Type-Options": "nosniff"}
    if etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type=FILES[name], headers=headers)
