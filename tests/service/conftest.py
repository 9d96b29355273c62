"""The service fixture lives in tests/conftest.py (payment tests use it too); names re-exported here."""

from __future__ import annotations

from tests.conftest import Service as Service
from tests.conftest import reason_of as reason_of
