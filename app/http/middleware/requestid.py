"""Request ids: every HTTP answer carries ``X-Request-Id``, and every log line written for it the same id.

Policy: the id is the request's own ``X-Request-Id`` only when the socket peer is a trusted
proxy (setting ``trusted_proxies``, as for ``X-Forwarded-For``: see
:mod:`app.http.middleware.clientip`) and the value is a sane token, 1 to 128 characters of
``[A-Za-z0-9._:-]`` (one header line; a list or anything else is not taken); otherwise a new
one, 32 hex digits from the system's CSPRNG. A client on the open internet cannot choose the
id written in our logs, and no value that could break a log line or a header is ever echoed.

The id is held in :data:`app.logs.REQUEST_ID` for the whole life of the request, so the
access line, the service's and the probe's log records, and tasks started for the request
(a probe, a badge refresh) carry it. This layer sits outside everything else, the badge
fast path and Starlette's error middleware included, so even an answer to an unexpected
failure carries the id.
"""

from __future__ import annotations

import os
import re
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.checking.clients import Network
from app.http.middleware.clientip import is_trusted_proxy
from app.logs import REQUEST_ID

HEADER: Final = b"x-request-id"
#: The scope key of an id a layer outside this one already gave the request (the badge fast path's).
GIVEN: Final = "mcp_sonde.request_id"
_SANE: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")


#: Ids drawn from the CSPRNG at once (one system call per this many requests).
_BATCH: Final = 256
_drawn: list[str] = []
os.register_at_fork(after_in_child=_drawn.clear)  # (a child never repeats its parent's ids)


def new_request_id() -> str:
    """A fresh id: 32 hex digits from the system's CSPRNG (drawn in batches, each id used once)."""
    if not _drawn:
        block = os.urandom(16 * _BATCH).hex()
        _drawn.extend(block[i : i + 32] for i in range(0, len(block), 32))
    return _drawn.pop()


def request_id_of(scope: Scope, trusted: tuple[Network, ...]) -> str:
    """The id of the request in ``scope`` as the module policy says."""
    given = [value for name, value in scope["headers"] if name == HEADER] if trusted else []
    if len(given) == 1:
        client = scope.get("client")
        value: str = given[0].decode("latin-1")
        if client and _SANE.fullmatch(value) and is_trusted_proxy(client[0], trusted):
            return value
    return new_request_id()


class RequestIds:
    """ASGI middleware: sets :data:`app.logs.REQUEST_ID` and adds ``X-Request-Id`` to the answer."""

    def __init__(self, app: ASGIApp, trusted: tuple[Network, ...] = ()) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = scope.get(GIVEN) or request_id_of(scope, self.trusted)
        header = (HEADER, request_id.encode("ascii"))

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", ()), header]}
            await send(message)

        token = REQUEST_ID.set(request_id)
        try:
            await self.app(scope, receive, with_id)
        finally:
            REQUEST_ID.reset(token)
