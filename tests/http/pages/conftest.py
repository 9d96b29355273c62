"""Fixtures of the web pages' tests: the service on a known loopback port whose origin is its
public URL (so the form's ``Origin`` is its own), with its history in a temp data dir (SQLite),
or, in a module that sets ``BOTH_BACKENDS = True``, on each backend in turn (a new PostgreSQL
database at the newest schema for the second)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.http import create_app
from app.settings import Settings
from tests.conftest import LOOPBACK
from tests.history.conftest import asyncpg_url, postgres_database
from tests.servers.ports import free_port
from tests.servers.uvicorn_thread import serve


@dataclass(frozen=True)
class Site:
    """A running service: its base URL, data dir and history database's URL."""

    base: str
    data_dir: Path
    database: str

    @property
    def database_exists(self) -> bool:
        """Whether the history database was made yet (SQLite: on the first write; PostgreSQL: always)."""
        return not self.database.startswith("sqlite") or (self.data_dir / "history.sqlite3").exists()


SiteFactory = Callable[..., AbstractContextManager[Site]]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The tests of a ``BOTH_BACKENDS`` module run on SQLite and on PostgreSQL."""
    if getattr(metafunc.module, "BOTH_BACKENDS", False) and "site" in metafunc.fixturenames:
        metafunc.parametrize("site_backend", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def site_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The history database's URL: SQLite in the data dir, or a new PostgreSQL database."""
    if getattr(request, "param", "sqlite") == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'history.sqlite3'}"
        return
    with postgres_database(upgraded=True) as name:
        yield asyncpg_url(name)


@pytest.fixture
def site(tmp_path: Path, site_backend: str) -> SiteFactory:
    """``with site(**settings) as running:`` the API and its pages (loopback targets allowed, no Redis)."""

    @contextmanager
    def run(**overrides: Any) -> Iterator[Site]:
        port = free_port()
        values: dict[str, Any] = {
            **LOOPBACK,
            "data_dir": tmp_path,
            "public_url": f"http://127.0.0.1:{port}",
        }
        if not site_backend.startswith("sqlite"):
            values["database_url"] = site_backend
        values.update(overrides)
        app = create_app(Settings(**values))
        with serve(app, port=port, proxy_headers=False):
            yield Site(f"http://127.0.0.1:{port}", Path(values["data_dir"]), values.get("database_url", site_backend))

    return run
