"""The app uvicorn serves from its first moment, while the service itself is still being built.

Policy: importing the service and building it (the key ring, the history database's schema,
the facilitator's ``/supported``, outboxes left by a stopped process) can take seconds on a
loaded machine, and uvicorn accepts no connection before its app's lifespan start-up has
finished. So ``mcp-sonde serve`` (one worker) hands uvicorn this small app, which finishes its
start-up at once and builds the real one in the background:

- ``GET /healthz`` answers 200 ``{"status": "ok"}`` at once (the process is alive);
- ``GET /readyz`` answers 503 ``{"status": "starting"}`` until the service is built and its own
  lifespan start-up has finished, then the service's own answer;
- anything else answers 503 problem details, reason ``starting``, with ``Retry-After: 1``
  (RFC 9110 section 10.2.3), until then; nothing is charged or stored.

When the build or the service's start-up fails, ``failed`` is called with the exception (the
command line stops the server and exits with the code it documents). At shutdown the service's
lifespan is shut down as uvicorn would (ASGI lifespan protocol 2.0). This module imports
nothing of the service, so it is quick to import.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger("mcp_sonde.serve")

#: The title of the ``starting`` problem type (as in :data:`app.checking.errors.API_REASONS`).
STARTING_TITLE: Final = "The service is starting; try again in a second (see Retry-After)."


class StartupFailed(Exception):
    """The service's lifespan start-up failed (the service has logged why)."""


class Starting:
    """An ASGI app that answers while ``build`` makes the service, and is the service after.

    Args:
        build: makes the service's ASGI app (run once, in the background, at start-up).
        failed: called with what the build or the service's start-up raised.
        public_base_url: where ``/problems/starting`` is served (the ``type`` of the problem).
    """

    def __init__(
        self,
        build: Callable[[], Awaitable[ASGIApp]],
        failed: Callable[[BaseException], None],
        public_base_url: str = "",
    ) -> None:
        self._build = build
        self._failed = failed
        self._base = public_base_url
        self.app: ASGIApp | None = None
        self._starting: asyncio.Task[None] | None = None
        self._lifespan: asyncio.Task[None] | None = None
        self._to_app: asyncio.Queue[Message] = asyncio.Queue()
        self._from_app: asyncio.Queue[Message] = asyncio.Queue()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan_protocol(receive, send)
        elif self.app is not None:
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            await self._answer(scope, send)
        else:  # (a WebSocket: refused until the service is there)
            await send({"type": "websocket.close", "code": 1013})

    async def _answer(self, scope: Scope, send: Send) -> None:
        path = scope.get("path", "")
        headers = [(b"cache-control", b"no-store")]
        body: dict[str, object]
        if path == "/healthz":
            status, body, media = 200, {"status": "ok"}, b"application/json"
        elif path == "/readyz":
            status, body, media = 503, {"status": "starting"}, b"application/json"
            headers.append((b"retry-after", b"1"))
        else:
            status, media = 503, b"application/problem+json"
            body = {
                "type": f"{self._base}/problems/starting",
                "title": STARTING_TITLE,
                "status": 503,
                "detail": "The service is starting; nothing was charged.",
                "reason": "starting",
            }
            headers.append((b"retry-after", b"1"))
        content = json.dumps(body, separators=(",", ":")).encode()
        headers += [(b"content-type", media), (b"content-length", str(len(content)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content if scope.get("method") != "HEAD" else b""})

    async def _lifespan_protocol(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        self._starting = asyncio.create_task(self._start())
        await send({"type": "lifespan.startup.complete"})
        while (await receive())["type"] != "lifespan.shutdown":
            pass
        await self._stop()
        await send({"type": "lifespan.shutdown.complete"})

    async def _start(self) -> None:
        try:
            app = await self._build()
            self._lifespan = asyncio.create_task(self._run_lifespan(app))
            await self._to_app.put({"type": "lifespan.startup"})
            answer = await self._next_from_app()
            if answer["type"] != "lifespan.startup.complete":
                raise StartupFailed  # (its message is a traceback; the service logged the reason)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # (what the service raised: the command line says how it ends)
            self._failed(exc)
            return
        self.app = app
        gc.collect()
        gc.freeze()  # (what start-up made lives as long as the process: no collection scans it again)
        logger.info("ready")

    async def _run_lifespan(self, app: ASGIApp) -> None:
        scope: dict[str, Any] = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        await app(scope, self._to_app.get, self._from_app.put)

    async def _next_from_app(self) -> Message:
        """The service's next lifespan message; its exception, if its lifespan ended by one."""
        assert self._lifespan is not None
        reading = asyncio.ensure_future(self._from_app.get())
        await asyncio.wait({reading, self._lifespan}, return_when=asyncio.FIRST_COMPLETED)
        if reading.done():
            return reading.result()
        reading.cancel()
        self._lifespan.result()  # (raises what ended it)
        return {"type": "lifespan.startup.failed"}

    async def _stop(self) -> None:
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._starting
        if self._lifespan is None or self._lifespan.done():
            return
        if self.app is None:  # (stopped mid start-up: nothing to shut down in order)
            self._lifespan.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._lifespan
            return
        await self._to_app.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(Exception):  # (the service logs its own shutdown faults)
            await self._next_from_app()
            await self._lifespan
