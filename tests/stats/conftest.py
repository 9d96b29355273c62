"""The statistics on both store backends, as the history's tests run (a database per test)."""

from __future__ import annotations

from tests.history.conftest import database_url, history, pytest_generate_tests

__all__ = ["database_url", "history", "pytest_generate_tests"]
