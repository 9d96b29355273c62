"""``/v1/admin/optout`` behind the admin token, on the running service."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import httpx2
import pytest

from tests.conftest import Service, reason_of


def test_without_an_admin_token_the_routes_are_off(service: Service) -> None:
    with service() as base:
        answers = [httpx2.get(f"{base}/v1/admin/optout", headers={"Authorization": "Bearer whatever-at-all"}),
                   httpx2.post(f"{base}/v1/admin/optout", json={"item": "example.com"}),
                   httpx2.delete(f"{base}/v1/admin/optout", params={"item": "example.com"})]  # fmt: skip
    for answer in answers:
        assert (answer.status_code, reason_of(answer)) == (403, "admin_disabled")
        assert answer.headers["cache-control"] == "no-store"


def test_the_list_behind_the_token(service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    token = "admin-" + uuid.uuid4().hex
    bearer = {"Authorization": f"Bearer {token}"}
    with service(admin_token=token, data_dir=tmp_path) as base:
        url = f"{base}/v1/admin/optout"
        missing = httpx2.get(url)
        other_scheme = httpx2.get(url, headers={"Authorization": f"Basic {token}"})
        wrong = httpx2.get(url, headers={"Authorization": f"Bearer {token}x"})
        added = httpx2.post(url, json={"item": "Example.COM"}, headers=bearer)
        again = httpx2.post(url, json={"item": "example.com."}, headers=bearer)
        second = httpx2.post(url, json={"item": "https://other.test/mcp?key=s3cret"}, headers=bearer)
        invalid = httpx2.post(url, json={"item": "example.com/path"}, headers=bearer)
        not_json = httpx2.post(url, content=b"{", headers=bearer | {"content-type": "application/json"})
        wrong_body = httpx2.post(url, json={"item": "a.test", "more": 1}, headers=bearer)
        listed = httpx2.get(url, headers=bearer)
        removed = httpx2.delete(url, params={"item": "example.com"}, headers=bearer)
        gone = httpx2.delete(url, params={"item": "example.com"}, headers=bearer)
        no_item = httpx2.delete(url, headers=bearer)
        after = httpx2.get(url, headers=bearer)
    assert (missing.status_code, reason_of(missing)) == (401, "admin_unauthorized")
    assert missing.headers["www-authenticate"] == 'Bearer realm="admin"'
    assert (other_scheme.status_code, reason_of(other_scheme)) == (401, "admin_unauthorized")
    assert (wrong.status_code, reason_of(wrong)) == (403, "admin_forbidden")
    assert added.status_code == 201 and added.json()["value"] == "example.com" and added.json()["added"] is True
    assert again.status_code == 200 and again.json()["added"] is False
    assert second.json()["value"] == "https://other.test/mcp"
    assert (invalid.status_code, reason_of(invalid)) == (422, "optout_invalid")
    assert (not_json.status_code, reason_of(not_json)) == (400, "invalid_json")
    assert (wrong_body.status_code, reason_of(wrong_body)) == (422, "invalid_body")
    assert [(i["kind"], i["value"]) for i in listed.json()["items"]] == [
        ("host", "example.com"), ("url", "https://other.test/mcp")]  # fmt: skip
    assert removed.json() == {"removed": True}
    assert (gone.status_code, reason_of(gone)) == (404, "optout_not_found")
    assert (no_item.status_code, reason_of(no_item)) == (400, "invalid_query")
    assert [i["value"] for i in after.json()["items"]] == ["https://other.test/mcp"]
    assert token not in caplog.text and "s3cret" not in listed.text
