"""The app as :func:`app.http.create_app` builds it: routing."""

from __future__ import annotations

import httpx2
import pytest

from tests.conftest import Service


@pytest.mark.parametrize("path", ["/v1/mcp/check/", "/healthz/"])
def test_trailing_slash_is_a_json_404_not_a_redirect(service: Service, path: str) -> None:
    with service() as base:
        response = httpx2.request(
            "POST" if "check" in path else "GET", f"{base}{path}", headers={"host": "evil.example"}
        )
    assert response.status_code == 404
    assert response.json()["reason"] == "not_found"
    assert "location" not in response.headers
