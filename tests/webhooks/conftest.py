"""Webhook tests: the monitor fixtures (both backends, a key ring) and a real receiver on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.monitors.conftest import database_url, history, pytest_generate_tests, ring, secrets
from tests.servers.uvicorn_thread import serve

__all__ = ["database_url", "history", "pytest_generate_tests", "ring", "secrets"]


@dataclass
class Receiver:
    """A webhook receiver: records each request; answers ``answers`` in turn (then 204)."""

    answers: list[int] = field(default_factory=list)
    seen: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    url: str = ""

    def app(self) -> Starlette:
        async def hook(request: Request) -> Response:
            self.seen.append((dict(request.headers), await request.body()))
            status = self.answers.pop(0) if self.answers else 204
            return Response(b"receiver text that is never stored " * 400, status_code=status)

        return Starlette(routes=[Route("/hook", hook, methods=["POST"])])


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    with serve(made.app()) as port:
        made.url = f"http://127.0.0.1:{port}/hook"
        yield made
