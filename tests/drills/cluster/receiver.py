"""The webhook receiver: one path per monitor (``/hook/<n>``), each delivery verified with the
``standardwebhooks`` package against that monitor's secret before anything else, and counted per
``webhook-id``. A delivery for a monitor whose secret is not known yet (its 201 is still on the
way) answers 503, so the service tries it again; a bad signature answers 400 and is counted."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.servers.uvicorn_thread import serve


@dataclass
class Receiver:
    """What the receiver accepted (2xx) and refused."""

    secrets: dict[str, str] = field(default_factory=dict)  # path index -> whsec_ secret
    accepted: Counter[str] = field(default_factory=Counter)  # webhook-id -> 2xx answers
    events: Counter[str] = field(default_factory=Counter)  # event type -> accepted
    bad_signatures: int = 0
    unknown: int = 0
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.port}/hook/{index}"

    async def hook(self, request: Request) -> Response:
        body = await request.body()
        index = request.path_params["index"]
        secret = self.secrets.get(index)
        if secret is None:
            with self._lock:
                self.unknown += 1
            return Response(status_code=503)
        try:
            event = Webhook(secret).verify(body, dict(request.headers))
        except WebhookVerificationError:
            with self._lock:
                self.bad_signatures += 1
            return Response(status_code=400)
        with self._lock:
            self.accepted[request.headers["webhook-id"]] += 1
            self.events[str(event.get("type"))] += 1
        return Response(status_code=204)

    @contextmanager
    def serving(self) -> Iterator[Receiver]:
        app = Starlette(routes=[Route("/hook/{index}", self.hook, methods=["POST"])])
        with serve(app) as port:
            self.port = port
            yield self
