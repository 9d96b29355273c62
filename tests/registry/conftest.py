"""Registry tests run on both backends (the history tests' fixtures), against the local registry."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.history import migrate
from app.history.engine import open_engine
from tests.history.conftest import database_url, pytest_generate_tests

__all__ = ["database_url", "engine", "pytest_generate_tests"]


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """An engine on an upgraded database of the backend."""
    await migrate.upgrade(database_url)
    made = open_engine(database_url)
    try:
        yield made
    finally:
        await made.dispose()
