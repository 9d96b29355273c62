"""The access log (:mod:`app.http.middleware.accesslog`): paths, routes and clients of its lines."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx2
import pytest
import yaml

from app.http.middleware.accesslog import AccessLogger
from tests.conftest import Service


def test_access_log_never_holds_an_arbitrary_path(service: Service, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service() as base:
        httpx2.get(f"{base}/https:%2F%2Fmcp.example.com%2Fmcp%3Fapi_key%3DSECRET1")
        httpx2.post(f"{base}/v1/mcp/check;jsessionid=SECRET2", json={})
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_sonde.access"]
    assert len(lines) == 2
    assert all("SECRET" not in line and '"path":"<unmatched>"' in line for line in lines)


def test_a_problem_page_is_logged_and_counted_under_its_route(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service() as base:
        page = httpx2.get(f"{base}/problems/target_busy")
        nested = httpx2.get(f"{base}/problems/a/b")
        metrics = httpx2.get(f"{base}/metrics").text
    assert (page.status_code, nested.status_code) == (200, 404)
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "mcp_sonde.access"]
    assert [line["path"] for line in lines[:2]] == ["/problems/{reason}", "<unmatched>"]
    assert 'route="/problems/{reason}"' in metrics


def test_the_access_log_names_the_client_behind_a_trusted_proxy(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service(trusted_proxies=["127.0.0.1"]) as base:
        httpx2.get(f"{base}/healthz", headers={"X-Forwarded-For": "198.51.100.7"})
        httpx2.get(f"{base}/healthz", headers={"X-Forwarded-For": "not-an-address"})
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "mcp_sonde.access"]
    assert [line["client"] for line in lines] == ["198.51.100.7", "127.0.0.1"]


def test_a_route_with_a_parameter_inside_its_path_is_logged_under_its_template() -> None:
    """Routes such as ``/v1/claims/{claim_id}/verify`` were logged as ``<unmatched>`` and counted as
    ``other``: only a parameter in the last segment was recognised."""
    document = yaml.safe_load(Path("app/http/openapi.yaml").read_text(encoding="utf-8"))
    logger = AccessLogger(frozenset(document["paths"]) | {"/problems/{reason}"})
    cases = {
        "/v1/claims/clm_x/verify": "/v1/claims/{claim_id}/verify",
        "/v1/servers/7edb453ab40528ebe3d87fd9/history": "/v1/servers/{server_id}/history",
        "/v1/owner/servers/7edb453ab40528ebe3d87fd9/profile": "/v1/owner/servers/{server_id}/profile",
        "/v1/monitors/mon_1/deliveries": "/v1/monitors/{monitor_id}/deliveries",
        "/v1/servers/7edb453ab40528ebe3d87fd9": "/v1/servers/{server_id}",
        "/problems/x": "/problems/{reason}",
    }
    for path, template in cases.items():
        assert logger.route(path) == template, path
    for stray in ("/v1/servers/a/b/history", "/v1/claims//verify", "/v1/servers/"):
        assert logger.route(stray) is None, stray
