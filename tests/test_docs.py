"""The README's reason table and the OpenAPI document say what the code does."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from app.probe import REASONS, STATUSES, ProbeResult

ROOT = Path(__file__).resolve().parent.parent


def test_readme_reason_table_matches_code() -> None:
    readme = (ROOT / "README.md").read_text()
    table = readme.split("<!-- reasons:start -->", 1)[1].split("<!-- reasons:end -->", 1)[0]
    rows = re.findall(r"^\| `([a-z_0-9]+)` \| ([a-z_]+) \|", table, flags=re.MULTILINE)
    assert dict(rows) == {reason: status for reason, (status, _meaning) in REASONS.items()}


def test_openapi_status_enum_and_result_fields_match_code() -> None:
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    assert document["openapi"].startswith("3.1")
    schemas = document["components"]["schemas"]
    assert tuple(schemas["Status"]["enum"]) == STATUSES
    assert set(schemas["ProbeResult"]["properties"]) == set(ProbeResult.model_fields)


def test_every_status_has_a_reason() -> None:
    assert {status for status, _ in REASONS.values()} == set(STATUSES)


def test_readme_lists_every_setting() -> None:
    from app.settings import Settings

    readme = (ROOT / "README.md").read_text()
    missing = [name for name in Settings.model_fields if f"`MCP_SONDE_{name.upper()}`" not in readme]
    assert missing == []


def test_openapi_describes_the_full_result_and_every_check() -> None:
    from app.suite.catalogue import catalogue
    from app.suite.model import CheckResult

    document = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    schemas = document["components"]["schemas"]
    added = schemas["CheckResult"]["allOf"][1]["properties"]
    assert set(added) | set(schemas["ProbeResult"]["properties"]) == set(CheckResult.model_fields)
    readme = (ROOT / "README.md").read_text()
    assert [check for check in catalogue().checks if f"`{check}`" not in readme] == []


def test_the_top_level_openapi_document_is_the_one_the_service_serves() -> None:
    """``openapi.yaml`` links to the packaged copy: an edit through a tool that writes a new file
    (``sed -i``) would leave two documents that drift apart."""
    assert (ROOT / "openapi.yaml").is_symlink()
    assert (ROOT / "openapi.yaml").resolve() == (ROOT / "app" / "http" / "openapi.yaml").resolve()
