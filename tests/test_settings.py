"""The settings object: development defaults and cross-field rules."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from app.settings import Settings


def test_the_metrics_port_is_not_the_main_port() -> None:
    with pytest.raises(ValidationError, match="metrics_port must differ"):
        Settings(port=9000, metrics_port=9000)
    assert Settings(port=9000, metrics_port=9100).metrics_port == 9100


def test_the_metrics_token_is_not_shown() -> None:
    settings = Settings(metrics_token=SecretStr("hunter2-token"))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.model_dump())
