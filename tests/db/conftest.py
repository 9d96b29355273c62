"""The database tests' fixtures: both backends (the history tests' fixtures)."""

from __future__ import annotations

from tests.history.conftest import database_url, pytest_generate_tests

__all__ = ["database_url", "pytest_generate_tests"]
