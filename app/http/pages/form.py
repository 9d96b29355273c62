"""Reading the check form's body: ``application/x-www-form-urlencoded`` (HTML, section 4.10.21.7).

Policy: as the API's bodies (:func:`app.http.bodies.check.read_body`): at most ``max_bytes``, within
the body timeout; the form has one field, ``url``, given once. Anything else is a 4xx with the
API's reason keys (``unsupported_media_type``, ``invalid_body``), rendered on the page.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from starlette.requests import Request

from app.checking.errors import ApiError
from app.http.bodies.check import read_body

MEDIA_TYPE = "application/x-www-form-urlencoded"


async def read_url(request: Request, max_bytes: int, timeout_s: float) -> str:
    """The form's ``url``, stripped of surrounding whitespace.

    Raises:
        ApiError: ``unsupported_media_type`` (415), ``body_too_large`` (413), ``body_timeout``
            (408), ``body_incomplete`` (400) or ``invalid_body`` (422).
    """
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != MEDIA_TYPE:
        raise ApiError("unsupported_media_type", f"send the form as {MEDIA_TYPE}")
    body = await read_body(request, max_bytes, timeout_s)
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False, max_num_fields=4)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ApiError("invalid_body", "the form could not be read") from exc
    urls = fields.get("url", [])
    if len(urls) != 1 or not urls[0].strip():
        raise ApiError("invalid_body", "enter the URL of an MCP endpoint (https://…)")
    return urls[0].strip()
