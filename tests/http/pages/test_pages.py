"""The pages as HTTP answers (no browser): the CSP and its nonces, escaping of server text, the
form's refusals at the API's statuses, and the server page's 404."""

from __future__ import annotations

import re

import httpx2
import pytest

from app.history.records import server_id_of
from app.http.pages.render import render
from app.http.pages.views import result_view
from tests.checking.test_recorder import stored, wait_for
from tests.http.pages import hostile
from tests.http.pages.conftest import Site, SiteFactory
from tests.http.pages.markup import parse
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

#: The pages read the same store code on both backends (tests/http/pages/conftest.py).
BOTH_BACKENDS = True

NONCE = re.compile(r"script-src 'nonce-([A-Za-z0-9_-]{22})'")


def post(site: Site, url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(f"{site.base}/", data={"url": url}, headers={"Origin": site.base, **headers}, timeout=30)


def assert_page(response: httpx2.Response) -> str:
    """The page's CSP is the strict one with a nonce, the one script carries it, nothing inline."""
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = response.headers["content-security-policy"]
    found = NONCE.search(policy)
    assert found is not None, policy
    for directive in ("default-src 'none'", "style-src 'self'", "img-src 'self' data:", "form-action 'self'",
                      "base-uri 'none'", "frame-ancestors 'none'"):  # fmt: skip
        assert directive in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    page = parse(response.text)
    scripts = page.tags("script")
    assert [(s.attrs.get("src"), s.attrs.get("nonce")) for s in scripts] == [("/static/site.js", found.group(1))]
    assert not any("style" in e.attrs or any(name.startswith("on") for name in e.attrs) for e in page.elements)
    assert response.headers["x-content-type-options"] == "nosniff"
    return found.group(1)


def test_home_page_has_landmarks_a_labelled_form_and_a_fresh_nonce_per_answer(site: SiteFactory) -> None:
    with site() as running:
        first, second = (httpx2.get(f"{running.base}/", timeout=10) for _ in range(2))
        css = httpx2.get(f"{running.base}/static/site.css", timeout=10)
        missing = httpx2.get(f"{running.base}/static/..%2fsettings.py", timeout=10)
    assert first.status_code == 200 and assert_page(first) != assert_page(second)
    page = parse(first.text)
    assert {"header", "nav", "main", "footer"} <= {e.tag for e in page.elements}
    (form,) = page.tags("form")
    assert (form.attrs["method"], form.attrs["action"]) == ("post", "/")
    (field,) = [e for e in page.tags("input") if e.attrs.get("name") == "url"]
    assert [e for e in page.tags("label") if e.attrs.get("for") == field.attrs["id"]]
    assert page.tags("a")[0].attrs["href"] == "#main"  # the skip link comes first
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert missing.status_code == 404


def test_form_runs_a_free_check_and_renders_it(site: SiteFactory, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta"])
    url = raw.url("/mcp")
    with site() as running:
        answer = post(running, url)
        assert wait_for(lambda: stored(running.database))
    assert answer.status_code == 200, answer.text
    assert_page(answer)
    assert answer.headers["cache-control"] == "no-store" and "x-ratelimit-remaining" in answer.headers
    assert int(answer.headers["x-free-pool-remaining"]) >= 0
    page = parse(answer.text)
    assert "Up: answers MCP" in page.text and "The server answered the MCP handshake" in page.text
    assert "alpha" in page.text and "beta" in page.text and "The endpoint answers over HTTP" in page.text
    assert "Verified" in page.text and "Not verified" in page.text  # each check's state
    links = [e.attrs["href"] for e in page.tags("a") if (e.attrs.get("href") or "").startswith("/v1/attestations/")]
    (row,) = stored(running.database)
    assert links == [f"/v1/attestations/{row.run_id}"]


@pytest.mark.parametrize(
    ("overrides", "url", "headers", "status", "reason"),
    [
        ({}, "ftp://mcp.example.com/mcp", {}, 422, "scheme_not_https"),
        ({}, "https://user:pw@mcp.example.com/mcp", {}, 422, "userinfo_present"),
        ({"allow_private": False}, "https://127.0.0.1/mcp", {}, 422, "host_ip_literal"),
        ({"free_pool_size": 0}, "https://{raw}/mcp", {}, 402, "free_pool_exhausted"),
        ({}, "https://{raw}/mcp", {"Origin": "https://evil.example"}, 403, "free_pool_origin_refused"),
        ({"rate_limit": "1/minute"}, "https://x.example/{name}", {}, 429, "rate_limited"),
    ],
)
def test_form_refusals_render_the_reason_at_the_api_status(
    site: SiteFactory, raw: RawServer, overrides: dict[str, object], url: str, headers: dict[str, str],
    status: int, reason: str,
) -> None:  # fmt: skip
    raw.routes["/mcp"] = MiniMcp()
    target = url.replace("https://{raw}/mcp", raw.url("/mcp"))
    with site(**overrides) as running:
        if status == 429:
            post(running, target, **headers)
        answer = post(running, target, **headers)
        kept = stored(running.database) if running.database_exists else []
    assert answer.status_code == status, answer.text
    assert_page(answer)
    (alert,) = [e for e in parse(answer.text).elements if e.attrs.get("role") == "alert"]
    assert alert.tag == "section" and f'<code class="reason">{reason}</code>' in answer.text
    assert "The check was not run" in answer.text and kept == []
    if status == 429:
        assert answer.headers["retry-after"].isdigit() and answer.headers["x-ratelimit-remaining"] == "0"
    # the URL stays in the field (past its budget the body is not even read, as on the API)
    assert ('value=""' if status == 429 else 'value="' + target + '"') in answer.text


def test_form_body_errors(site: SiteFactory) -> None:
    with site() as running:
        as_json = httpx2.post(f"{running.base}/", json={"url": "https://x.example/mcp"}, timeout=10)
        empty = httpx2.post(f"{running.base}/", data={"url": "  "}, timeout=10)
        twice = httpx2.post(f"{running.base}/", content=b"url=a&url=b", timeout=10,
                            headers={"content-type": "application/x-www-form-urlencoded"})  # fmt: skip
        large = httpx2.post(f"{running.base}/", data={"url": "https://x.example/" + "a" * 9000}, timeout=10)
    assert (as_json.status_code, empty.status_code, twice.status_code, large.status_code) == (415, 422, 422, 413)
    assert '<code class="reason">unsupported_media_type</code>' in as_json.text
    assert '<code class="reason">invalid_body</code>' in empty.text and "invalid_body" in twice.text
    assert '<code class="reason">body_too_large</code>' in large.text


def test_hostile_server_text_is_escaped_on_the_form_result_and_the_server_page(
    site: SiteFactory, raw: RawServer
) -> None:
    raw.routes["/mcp"] = hostile.HostileMcp()
    url = raw.url("/mcp")
    with site() as running:
        answer = post(running, url)
        assert wait_for(lambda: stored(running.database))
        server = httpx2.get(f"{running.base}/servers/{server_id_of(url)}", timeout=10)
    assert answer.status_code == 200 and server.status_code == 200, server.text
    for response in (answer, server):
        assert_page(response)
        page = parse(response.text)
        assert not page.tags("img") or all(e.attrs.get("src") != "x" for e in page.tags("img"))
        assert not [e for e in page.tags("a") if (e.attrs.get("href") or "").startswith("javascript:")]
        assert hostile.SCRIPT in page.text  # shown literally
    page = parse(server.text)
    assert hostile.NAME in page.text and hostile.TOOL in page.text and hostile.DESCRIPTION in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in server.text and "<script>alert" not in server.text


def test_server_page_of_a_checked_server(site: SiteFactory, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta", "gamma"])
    url = raw.url("/mcp")
    with site() as running:
        post(running, url)
        (row,) = wait_for(lambda: stored(running.database))
        server = httpx2.get(f"{running.base}/servers/{server_id_of(url)}", timeout=10)
        preview = str(parse(server.text).tags("img")[0].attrs["src"])
        badge = httpx2.get(f"{running.base}{preview}", timeout=10)
    assert server.status_code == 200 and server.headers["cache-control"] == "public, max-age=60"
    assert_page(server)
    page = parse(server.text)
    assert len([e for e in page.tags("rect") if "day" in (e.attrs.get("class") or "")]) == 90
    assert "up: 1 days" in page.text and "no check: 89 days" in page.text
    assert [t for t in ("alpha", "beta", "gamma") if t in page.text] == ["alpha", "beta", "gamma"]
    assert {e.attrs.get("id") for e in page.tags("textarea")} == {"badge-markdown", "badge-html"}
    assert f"[![MCP uptime]({running.base}/badge/mcp/uptime?url=" in page.text
    assert f"/v1/attestations/{row.run_id}" in server.text and "mcp-sonde verify attestation.json" in page.text
    assert "mcp-sonde-keys.json --allow-private" in page.text  # (this site's keys are on loopback)
    assert badge.status_code == 200 and badge.headers["content-type"].startswith("image/svg+xml")


@pytest.mark.parametrize("server_id", ["a" * 24, "not-an-id", "A" * 24])
def test_unknown_server_is_a_404_page_with_its_reason(site: SiteFactory, server_id: str) -> None:
    with site() as running:
        answer = httpx2.get(f"{running.base}/servers/{server_id}", timeout=10)
    assert answer.status_code == 404
    assert_page(answer)
    assert '<code class="reason">server_not_found</code>' in answer.text


def test_templates_escape_every_server_field() -> None:
    document = {
        "url": "https://x.example/mcp?<b>",
        "status": "ok",
        "reason": "ok",
        "server": {"name": hostile.NAME, "title": hostile.IMAGE, "version": hostile.LINK},
        "detail": hostile.SCRIPT,
        "tools": {"count": 1, "names": [hostile.TOOL]},
        "checks": [{"id": "reachability", "state": "verified", "reason": None}],
        "attestation_id": "a" * 64,
        "checked_at": "2026-01-01T00:00:00Z",
    }
    html = render("_result.html", {"result": result_view(document), "server_link": None})
    page = parse(html)
    hrefs = [e.attrs.get("href") for e in page.tags("a")]
    assert (
        not page.tags("script")
        and not page.tags("img")
        and hrefs == ["/checks#check-reachability", "/v1/attestations/" + "a" * 64]
    )
    for text in (hostile.NAME, hostile.IMAGE, hostile.LINK, hostile.SCRIPT, hostile.TOOL):
        assert text in page.text


def test_the_home_page_says_which_targets_this_instance_checks(site: SiteFactory) -> None:
    with site() as running:  # (loopback targets allowed: the development switch)
        switched = httpx2.get(f"{running.base}/", timeout=10).text
    with site(allow_private=False) as running:
        public = httpx2.get(f"{running.base}/", timeout=10).text
    assert "development switch on" in switched and "port 443" not in switched
    assert "Only public https addresses on port 443" in public and "development switch" not in public
