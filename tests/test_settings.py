"""The settings object: development defaults and cross-field rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from app.settings import (
    DEVELOPMENT_FREE_POOL_PER_IP,
    MIN_INTERVAL_S,
    STAGING_MIN_INTERVAL_S,
    STAGING_RUN_LOST_S,
    Settings,
)


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


def test_staging_needs_the_development_switch_and_shortens_monitor_intervals_and_the_lost_limit() -> None:
    with pytest.raises(ValidationError, match="staging needs the development switch"):
        Settings(staging=True)
    with pytest.raises(ValidationError, match="at least 600"):
        Settings(monitor_run_lost_s=120)
    plain, staging = Settings(allow_private=True), Settings(allow_private=True, staging=True)
    assert (plain.monitor_min_interval_s, plain.monitor_run_lost_s) == (MIN_INTERVAL_S, 3600.0) == (300, 3600.0)
    assert (staging.monitor_min_interval_s, staging.monitor_run_lost_s) == (STAGING_MIN_INTERVAL_S, STAGING_RUN_LOST_S)
    assert Settings(allow_private=True, staging=True, monitor_run_lost_s=60).monitor_run_lost_s == 60
    with pytest.raises(ValidationError):
        Settings(allow_private=True, staging=True, monitor_run_lost_s=59)


def test_the_metrics_port_is_not_the_main_port() -> None:
    with pytest.raises(ValidationError, match="metrics_port must differ"):
        Settings(port=9000, metrics_port=9000)
    assert Settings(port=9000, metrics_port=9100).metrics_port == 9100


def test_the_metrics_token_is_not_shown() -> None:
    settings = Settings(metrics_token=SecretStr("hunter2-token"))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.model_dump())


ROOT = Path(__file__).resolve().parent.parent


def test_the_settings_page_is_generated_from_the_code() -> None:
    """docs/settings.md is what scripts/settings_doc.py writes from the Field descriptions."""
    checked = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "settings_doc.py"), "--check"], capture_output=True, text=True, cwd=ROOT
    )
    assert checked.returncode == 0, checked.stderr
    page = (ROOT / "docs" / "settings.md").read_text("utf-8")
    assert all(f"`MCP_SONDE_{name.upper()}`" in page for name in Settings.model_fields)


def test_every_setting_says_what_it_does() -> None:
    for name, field in Settings.model_fields.items():
        assert field.description and len(field.description) >= 30, name
        assert field.description[0].isupper() or field.description[0] in "`<", name
