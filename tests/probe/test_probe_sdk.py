"""The probe against real ``mcp`` SDK servers, in both eras and every reply mode."""

from __future__ import annotations

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.sdk_apps import PAGED_TOOLS

pytestmark = pytest.mark.anyio

MODERN_MOUNTS = ["stateful-sse", "stateful-json", "stateless-json", "stateless-sse", "modern-only"]
LEGACY_MOUNTS = {
    "initialize-only": True,  # session issued
    "initialize-only-json": True,
    "initialize-only-stateless": False,
}


@pytest.mark.parametrize("mount", MODERN_MOUNTS)
async def test_modern_server(sdk_base: str, dev_settings: Settings, mount: str) -> None:
    result = await probe(f"{sdk_base}/{mount}/mcp", settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok")
    assert result.era == "modern"
    assert result.protocol_version == "2026-07-28"
    assert result.transport == "streamable_http"
    assert result.server is not None
    assert (result.server.name, result.server.version, result.server.title) == (mount, "1.2.3", "Probe Fixture")
    assert result.capabilities is not None and "tools" in result.capabilities
    assert result.tools is not None
    assert (result.tools.count, result.tools.names, result.tools.pages_read) == (3, ["add", "echo", "now"], 1)
    assert result.session is None
    assert result.latency_ms is not None and result.latency_ms == result.timings.discover_ms
    assert result.timings.initialize_ms is None
    assert result.untrusted_content is True
    assert result.addresses == ["127.0.0.1"]


@pytest.mark.parametrize(("mount", "session_issued"), LEGACY_MOUNTS.items())
async def test_legacy_server(sdk_base: str, dev_settings: Settings, mount: str, session_issued: bool) -> None:
    result = await probe(f"{sdk_base}/{mount}/mcp", settings=dev_settings)
    assert (result.status, result.reason) == ("ok", "ok")
    assert result.era == "legacy"
    assert result.protocol_version == "2025-11-25"
    assert result.server is not None and result.server.name == mount
    assert result.tools is not None and result.tools.names == ["add", "echo", "now"]
    assert result.session is not None and result.session.issued is session_issued
    assert result.session.end_status == (200 if session_issued else None)
    assert result.latency_ms == result.timings.initialize_ms
    assert result.timings.discover_ms is not None
    assert result.warnings == []


async def test_three_pages_of_tools(sdk_base: str, dev_settings: Settings) -> None:
    result = await probe(f"{sdk_base}/paged/mcp", settings=dev_settings)
    assert result.status == "ok"
    assert result.tools is not None
    assert result.tools.names == PAGED_TOOLS
    assert (result.tools.count, result.tools.pages_read, result.tools.more_pages) == (12, 3, False)


async def test_page_limit_reports_more_pages(sdk_base: str, dev_settings: Settings) -> None:
    settings = dev_settings.model_copy(update={"tools_max_pages": 2})
    result = await probe(f"{sdk_base}/paged/mcp", settings=settings)
    assert result.tools is not None
    assert (result.tools.count, result.tools.pages_read, result.tools.more_pages) == (8, 2, True)


@pytest.mark.parametrize("mount", ["stateful-sse", "initialize-only"])
async def test_light_probe_lists_no_tools(sdk_base: str, dev_settings: Settings, mount: str) -> None:
    result = await probe(f"{sdk_base}/{mount}/mcp", light=True, settings=dev_settings)
    assert result.status == "ok"
    assert result.light is True
    assert result.tools is None
    assert result.timings.tools_list_ms is None
    assert result.server is not None and result.server.name == mount
    if mount == "initialize-only":
        assert result.session is not None and result.session.end_status == 200


async def test_wrong_path_is_not_found(sdk_base: str, dev_settings: Settings) -> None:
    result = await probe(f"{sdk_base}/nothing-here/mcp", settings=dev_settings)
    assert (result.status, result.reason, result.http_status) == ("not_found", "http_not_found", 404)
    assert result.failed_step == "initialize"


async def test_trailing_slash_redirect_is_reported_not_followed(sdk_base: str, dev_settings: Settings) -> None:
    result = await probe(f"{sdk_base}/stateless-json/mcp/", settings=dev_settings)
    assert (result.status, result.reason) == ("redirect", "redirect")
    assert result.http_status == 307
    assert result.location is not None and result.location.endswith("/stateless-json/mcp")


@pytest.mark.parametrize("path", ["stateless-json/mcp", "stateful-sse/mcp", "initialize-only/mcp", "legacy-sse/sse"])
async def test_the_bytes_of_the_tool_list_are_counted_on_every_transport(
    sdk_base: str, dev_settings: Settings, path: str
) -> None:
    """What judging costs is estimated from them (small lists are judged on the event loop): a list
    that arrives on the legacy event stream must count, not the empty 202 of its POST."""
    from app.probe.runner import observe

    observation = await observe(f"{sdk_base}/{path}", settings=dev_settings)
    assert observation.result.status == "ok"
    listed = observation.evidence.listed_bytes
    assert 300 < listed < 5_000, listed  # three small tools, once (not the notification, not the refusal)
