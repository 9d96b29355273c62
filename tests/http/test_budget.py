"""Routes under the client's rate limit (:mod:`app.http.budget`): no-store and the budget on every answer."""

from __future__ import annotations

import logging

import httpx2
import pytest

from tests.conftest import Service


def test_rate_limited_check_is_not_stored_either(service: Service) -> None:
    with service(rate_limit="1/minute") as base:
        httpx2.post(f"{base}/v1/mcp/check", json={"url": "https://127.0.0.1/"}, timeout=30)
        limited = httpx2.post(f"{base}/v1/mcp/check", json={"url": "https://127.0.0.1/"}, timeout=30)
    assert (limited.status_code, limited.json()["reason"]) == (429, "rate_limited")
    assert limited.headers["cache-control"] == "no-store"
    assert limited.headers["x-ratelimit-remaining"] == "0" and int(limited.headers["retry-after"]) >= 1


def test_fault_of_ours_on_the_check_route_keeps_the_route_headers(
    service: Service, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import app.http.routes.ops as routes

    async def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(routes, "run_check", broken)
    caplog.set_level(logging.ERROR)
    with service() as base:
        answer = httpx2.post(f"{base}/v1/mcp/check", json={"url": "https://mcp.example.com/mcp"}, timeout=30)
    assert (answer.status_code, answer.json()["reason"]) == (500, "internal_error")
    assert answer.headers["content-type"] == "application/problem+json"
    assert answer.headers["cache-control"] == "no-store"
    assert answer.headers["x-ratelimit-limit"] == "60" and answer.headers["ratelimit"].startswith('"check";')
    assert [r.exc_info[1] for r in caplog.records if r.exc_info and isinstance(r.exc_info[1], RuntimeError)]
