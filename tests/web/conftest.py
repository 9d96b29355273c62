"""Fixtures of the web pages' tests: the service on a known loopback port whose origin is its
public URL (so the form's ``Origin`` is its own), with its history in a temp data dir."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.service import create_app
from app.settings import Settings
from tests.conftest import LOOPBACK
from tests.servers.ports import free_port
from tests.servers.uvicorn_thread import serve


@dataclass(frozen=True)
class Site:
    """A running service: its base URL and data dir (``history.sqlite3`` is there)."""

    base: str
    data_dir: Path

    @property
    def database(self) -> str:
        return f"sqlite+aiosqlite:///{self.data_dir / 'history.sqlite3'}"


SiteFactory = Callable[..., AbstractContextManager[Site]]


@pytest.fixture
def site(tmp_path: Path) -> SiteFactory:
    """``with site(**settings) as running:`` the API and its pages (loopback targets allowed, no Redis)."""

    @contextmanager
    def run(**overrides: Any) -> Iterator[Site]:
        port = free_port()
        values: dict[str, Any] = {
            **LOOPBACK,
            "data_dir": tmp_path,
            "public_url": f"http://127.0.0.1:{port}",
        }
        values.update(overrides)
        app = create_app(Settings(**values))
        with serve(app, port=port, proxy_headers=False):
            yield Site(f"http://127.0.0.1:{port}", Path(values["data_dir"]))

    return run
