"""The settings object: development defaults and cross-field rules."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, ValidationError

from app.settings import DEVELOPMENT_FREE_POOL_PER_IP, Settings


def test_development_mode_raises_the_per_client_free_share_unless_it_is_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().free_pool_per_ip == 20
    assert Settings(allow_private=True).free_pool_per_ip == DEVELOPMENT_FREE_POOL_PER_IP == 1000
    assert Settings(allow_private=True, free_pool_per_ip=20).free_pool_per_ip == 20
    monkeypatch.setenv("MCP_SONDE_ALLOW_PRIVATE", "true")
    assert Settings().free_pool_per_ip == DEVELOPMENT_FREE_POOL_PER_IP
    monkeypatch.setenv("MCP_SONDE_FREE_POOL_PER_IP", "3")
    assert Settings().free_pool_per_ip == 3


def test_the_metrics_port_is_not_the_main_port() -> None:
    with pytest.raises(ValidationError, match="metrics_port must differ"):
        Settings(port=9000, metrics_port=9000)
    assert Settings(port=9000, metrics_port=9100).metrics_port == 9100


def test_the_metrics_token_is_not_shown() -> None:
    settings = Settings(metrics_token=SecretStr("hunter2-token"))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.model_dump())
