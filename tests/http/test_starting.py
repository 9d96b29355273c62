"""The app uvicorn serves while the service is built (app.http.starting), driven through the
ASGI lifespan protocol as uvicorn drives it, with a real Starlette app as the service."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message

from app.checking.errors import API_REASONS
from app.http.starting import STARTING_TITLE, Starting, StartupFailed

pytestmark = pytest.mark.anyio


class Service:
    """A Starlette app whose lifespan start-up waits for ``go`` (and may fail), recording its steps."""

    def __init__(self, fail: bool = False) -> None:
        self.go = asyncio.Event()
        self.steps: list[str] = []
        self.fail = fail

    def app(self) -> Starlette:
        @contextlib.asynccontextmanager
        async def lifespan(app: Starlette) -> AsyncIterator[None]:
            await self.go.wait()
            if self.fail:
                raise RuntimeError("the facilitator lacks a payment option")
            self.steps.append("started")
            yield
            self.steps.append("stopped")

        return Starlette(routes=[Route("/readyz", lambda r: PlainTextResponse("ready"))], lifespan=lifespan)


class Lifespan:
    """uvicorn's side of the lifespan protocol."""

    def __init__(self, app: ASGIApp) -> None:
        self.to_app: asyncio.Queue[Message] = asyncio.Queue()
        self.from_app: asyncio.Queue[Message] = asyncio.Queue()
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": {}}
        self.task = asyncio.ensure_future(app(scope, self.to_app.get, self.from_app.put))

    async def say(self, kind: str) -> str:
        await self.to_app.put({"type": kind})
        return str((await asyncio.wait_for(self.from_app.get(), 30))["type"])


async def get(app: ASGIApp, path: str, method: str = "GET") -> httpx2.Response:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://sonde") as client:
        return await client.request(method, path)


async def until(condition: Any) -> None:
    for _ in range(3000):  # (a loaded machine: up to 30 s)
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never")


async def test_answers_at_once_while_the_service_is_built_and_is_the_service_after() -> None:
    service, failures = Service(), list[BaseException]()
    built = asyncio.Event()

    async def build() -> ASGIApp:
        await built.wait()
        return service.app()

    starting = Starting(build, failures.append, "https://sonde.example.org")
    lifespan = Lifespan(starting)
    assert await lifespan.say("lifespan.startup") == "lifespan.startup.complete"  # (before the build)
    health = await get(starting, "/healthz")
    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    ready = await get(starting, "/readyz")
    assert (ready.status_code, ready.json(), ready.headers["retry-after"]) == (503, {"status": "starting"}, "1")
    check = await get(starting, "/v1/mcp/check", "POST")
    assert check.status_code == 503 and check.headers["content-type"] == "application/problem+json"
    assert check.json() == {
        "type": "https://sonde.example.org/problems/starting",
        "title": STARTING_TITLE,
        "status": 503,
        "detail": "The service is starting; nothing was charged.",
        "reason": "starting",
    }
    assert (await get(starting, "/healthz", "HEAD")).content == b""
    built.set()
    await asyncio.sleep(0.05)
    assert (await get(starting, "/readyz")).status_code == 503  # (built, its own start-up not done)
    service.go.set()
    await until(lambda: starting.app is not None)
    assert (await get(starting, "/readyz")).text == "ready"
    assert await lifespan.say("lifespan.shutdown") == "lifespan.shutdown.complete"
    assert service.steps == ["started", "stopped"] and failures == []


async def test_a_start_up_that_fails_is_reported_and_the_service_never_answers() -> None:
    service, failures = Service(fail=True), list[BaseException]()
    service.go.set()

    async def build() -> ASGIApp:
        return service.app()

    starting = Starting(build, failures.append)
    lifespan = Lifespan(starting)
    assert await lifespan.say("lifespan.startup") == "lifespan.startup.complete"
    await until(lambda: failures)
    assert [type(f) for f in failures] == [StartupFailed] and starting.app is None
    assert (await get(starting, "/readyz")).status_code == 503
    assert await lifespan.say("lifespan.shutdown") == "lifespan.shutdown.complete"


async def test_a_build_that_raises_is_reported() -> None:
    failures: list[BaseException] = []

    async def build() -> ASGIApp:
        raise OSError("the key document cannot be read")

    lifespan = Lifespan(Starting(build, failures.append))
    assert await lifespan.say("lifespan.startup") == "lifespan.startup.complete"
    await until(lambda: failures)
    assert isinstance(failures[0], OSError)
    assert await lifespan.say("lifespan.shutdown") == "lifespan.shutdown.complete"


async def test_a_stop_during_the_start_ends_it_without_a_failure() -> None:
    service, failures = Service(), list[BaseException]()

    async def build() -> ASGIApp:
        return service.app()

    starting = Starting(build, failures.append)
    lifespan = Lifespan(starting)
    assert await lifespan.say("lifespan.startup") == "lifespan.startup.complete"
    await asyncio.sleep(0.05)  # (the service's start-up waits on go, which never comes)
    assert await lifespan.say("lifespan.shutdown") == "lifespan.shutdown.complete"
    await asyncio.wait_for(lifespan.task, 30)
    assert failures == [] and starting.app is None and service.steps == []


def test_the_starting_problem_is_the_catalogued_one() -> None:
    assert API_REASONS["starting"] == (503, STARTING_TITLE)
