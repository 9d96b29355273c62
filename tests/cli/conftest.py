"""The database fixtures of the history tests: each test that asks for ``database_url`` runs on
SQLite and on PostgreSQL."""

from __future__ import annotations

from tests.history.conftest import database_url as database_url
from tests.history.conftest import pytest_generate_tests as pytest_generate_tests
