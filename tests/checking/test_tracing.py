"""OpenTelemetry traces: a check is a span with one child per probe step; off, mcp-sonde imports none of it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from app.http import create_app
from app.settings import Settings
from tests.servers.sonde import finish, launch, sonde
from tests.servers.uvicorn_thread import serve

FREE = {"X-Free-Pool": "1"}


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def traced(exporter: InMemorySpanExporter) -> Iterator[str]:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = Settings(allow_private=True, otel_enabled=True, host_start_interval_s=0, redis_url=None)
    with serve(create_app(settings, tracer_provider=provider), proxy_headers=False) as port:
        yield f"http://127.0.0.1:{port}"


def by_name(spans: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name == name]


def test_a_check_is_a_span_with_a_child_per_probe_step(
    traced: str, exporter: InMemorySpanExporter, sdk_base: str
) -> None:
    url = f"{sdk_base}/stateless-json/mcp?key=s3cret"
    answer = httpx2.post(f"{traced}/v1/mcp/check", json={"url": url}, headers=FREE, timeout=30)
    assert answer.status_code == 200
    spans = exporter.get_finished_spans()
    (check,) = by_name(spans, "mcp_sonde.check")
    assert dict(check.attributes or {}) == {
        "mcp_sonde.light": False,
        "server.address": "127.0.0.1",
        "mcp_sonde.status": "ok",
        "mcp_sonde.reason": "ok",
        "mcp_sonde.request_id": answer.headers["x-request-id"],
    }
    assert check.status.status_code == StatusCode.UNSET
    steps = [span for span in spans if span.name.startswith("mcp_sonde.probe.")]
    names = {span.name.removeprefix("mcp_sonde.probe.") for span in steps}
    assert {"server/discover", "tools/list", "tools/call"} <= names, names  # (stateless: no session to end)
    assert check.context is not None and check.start_time is not None and check.end_time is not None
    for step in steps:
        assert step.parent is not None and step.parent.span_id == check.context.span_id
        assert step.context is not None and step.context.trace_id == check.context.trace_id
        assert step.start_time is not None and step.end_time is not None
        assert check.start_time <= step.start_time <= step.end_time <= check.end_time
    timings = answer.json()["timings"]
    (listing,) = [step for step in steps if step.name == "mcp_sonde.probe.tools/list"]
    assert listing.end_time is not None and listing.start_time is not None
    assert abs((listing.end_time - listing.start_time) / 1e6 - timings["tools_list_ms"]) < 0.01
    assert "s3cret" not in repr([dict(span.attributes or {}) for span in spans])
    assert "stateless-json" not in repr([dict(span.attributes or {}) for span in spans])


def test_a_refused_check_and_a_badge_probe_are_spans_too(
    traced: str, exporter: InMemorySpanExporter, sdk_base: str
) -> None:
    refused = httpx2.post(f"{traced}/v1/mcp/check", json={"url": "ftp://x.example/"}, headers=FREE)
    assert refused.status_code == 422
    badge = httpx2.get(f"{traced}/badge/mcp", params={"url": f"{sdk_base}/stateless-json/mcp"}, timeout=30)
    assert badge.headers["x-badge-state"] == "ok"
    checks = by_name(exporter.get_finished_spans(), "mcp_sonde.check")
    assert len(checks) == 2
    first, second = checks
    assert (first.attributes or {})["mcp_sonde.reason"] == "scheme_not_https"
    assert first.status.status_code == StatusCode.ERROR and "server.address" not in (first.attributes or {})
    assert (second.attributes or {})["mcp_sonde.light"] is True
    assert (second.attributes or {})["mcp_sonde.status"] == "ok"
    children = [s for s in exporter.get_finished_spans() if s.parent is not None]
    assert second.context is not None
    assert {s.name for s in children if s.parent and s.parent.span_id == second.context.span_id} >= {
        "mcp_sonde.probe.server/discover"
    }


#: In the child: the OpenTelemetry SDK cannot be imported (as without the ``otel`` extra), and every
#: import of an opentelemetry module by a module of mcp-sonde is written to $IMPORTS.
WATCH = """
import builtins, importlib.abc, os
class NoSdk(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "opentelemetry.sdk" or name.startswith("opentelemetry.sdk."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, NoSdk())
_import = builtins.__import__
def watched(name, globals=None, locals=None, fromlist=(), level=0):
    importer = (globals or {}).get("__name__", "")
    if level == 0 and name.split(".")[0] == "opentelemetry" and importer.split(".")[0] in ("app", "badges"):
        with open(os.environ["IMPORTS"], "a") as out:
            out.write(f"{importer} imports {name}\\n")
    return _import(name, globals, locals, fromlist, level)
builtins.__import__ = watched
"""


def test_off_mcp_sonde_imports_no_opentelemetry_and_needs_no_sdk(tmp_path: Path, sdk_base: str) -> None:
    imports = tmp_path / "imports"
    imports.write_text("")
    env = {"IMPORTS": str(imports)}
    with sonde("--allow-private", env=env, preamble=WATCH) as served:
        check = httpx2.post(
            f"{served.base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
        badge = httpx2.get(f"{served.base}/badge/mcp", params={"url": f"{sdk_base}/paged/mcp"}, timeout=30)
    assert check.status_code == 200 and check.json()["status"] == "ok"
    assert badge.headers["x-badge-state"] == "ok"
    assert served.returncode == 0
    assert imports.read_text() == ""


def test_on_without_the_sdk_the_start_fails_with_one_clear_line(tmp_path: Path) -> None:
    imports = tmp_path / "imports"
    code, _out, err = finish(
        launch("serve", "--port", "0", env={"IMPORTS": str(imports), "MCP_SONDE_OTEL_ENABLED": "1"}, preamble=WATCH)
    )
    from app.cli.codes import SERVE_EXIT_STARTUP

    assert code == SERVE_EXIT_STARTUP
    records = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    said = [r for r in records if r["logger"] == "mcp_sonde.service" and r["level"] == "ERROR"]
    assert len(said) == 1 and said[0]["message"].startswith("start-up failed: otel_unavailable:"), records
    assert "pip install -e '.[otel]'" in said[0]["message"]


def test_on_the_exporter_is_the_one_the_environment_names(sdk_base: str) -> None:
    env = {"MCP_SONDE_OTEL_ENABLED": "1", "OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "sonde-x"}
    with sonde("--allow-private", env=env) as served:
        check = httpx2.post(
            f"{served.base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
    assert check.status_code == 200 and served.returncode == 0
    out = served.stdout.decode()
    assert '"name": "mcp_sonde.check"' in out and '"name": "mcp_sonde.probe.tools/list"' in out
    assert '"service.name": "sonde-x"' in out


def test_on_with_an_exporter_not_installed_the_start_fails() -> None:
    from importlib.metadata import entry_points

    from app.cli.codes import SERVE_EXIT_STARTUP

    installed = {found.name for found in entry_points(group="opentelemetry_traces_exporter")}
    assert "otlp" not in installed, "this test needs an environment without the OTLP exporter"
    env = {"MCP_SONDE_OTEL_ENABLED": "1", "OTEL_TRACES_EXPORTER": "otlp"}
    code, _out, err = finish(launch("serve", "--port", "0", env=env))
    assert code == SERVE_EXIT_STARTUP
    assert b"otel_unavailable" in err and b"OTEL_TRACES_EXPORTER" in err
