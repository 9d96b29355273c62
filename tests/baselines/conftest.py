"""Baselines on both store backends: the history store's fixtures (SQLite and PostgreSQL)."""

from __future__ import annotations

from tests.history.conftest import database_url, history, pytest_generate_tests

__all__ = ["database_url", "history", "pytest_generate_tests"]
