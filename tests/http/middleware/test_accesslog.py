"""The access log (:mod:`app.http.middleware.accesslog`): paths, routes and clients of its lines."""

from __future__ import annotations

import json
import logging

import httpx2
import pytest

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
