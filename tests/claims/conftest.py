"""The claims tests' fixtures: both database backends (the history tests' fixtures)."""

from __future__ import annotations

from tests.history.conftest import database_url, engine, pytest_generate_tests

__all__ = ["database_url", "engine", "pytest_generate_tests"]
