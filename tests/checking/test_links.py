"""Every check answer leads somewhere: its server's page, history and badges, and its attestation."""

from __future__ import annotations

import time

import anyio
import httpx2

from app.checking.links import answer_links, status_badge_markdown, uptime_badge_markdown
from app.history.records import server_id_of
from tests.conftest import Service
from tests.http.mcp.test_tool import call
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp


def answered(url: str, within_s: float = 60.0) -> bool:
    """Whether ``url`` answers 200 within ``within_s`` (the history keeps a served check through
    its outbox, so the server's page may come a moment after the answer)."""
    until = time.monotonic() + within_s
    while time.monotonic() < until:
        if httpx2.get(url).status_code == 200:
            return True
        time.sleep(0.1)
    return False


def test_the_links_of_a_url_lead_to_its_page_and_badges_and_ignore_its_query() -> None:
    links = answer_links("https://sonde.example.org", "https://mcp.example.com/mcp?key=1")
    page = "https://sonde.example.org/servers/" + server_id_of("https://mcp.example.com/mcp")
    assert links["server"] == page
    assert links["history"] == page.replace("/servers/", "/v1/servers/") + "/history"
    assert links["badge_svg"] == "https://sonde.example.org/badge/mcp?url=https%3A%2F%2Fmcp.example.com%2Fmcp%3Fkey%3D1"
    assert links["badge_markdown"] == f"[![MCP status]({links['badge_svg']})]({page})"
    assert links["uptime_badge_markdown"] == f"[![MCP uptime]({links['uptime_badge_svg']})]({page})"
    assert status_badge_markdown("https://s.example", "https://a.example/") != uptime_badge_markdown(
        "https://s.example", "https://a.example/"
    )


def test_a_served_check_leads_to_pages_that_answer(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    url = raw.url("/mcp")
    with service(free_pool_size=5, free_pool_per_ip=5) as base:
        answer = httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers={"X-Free-Pool": "1"}).json()
        assert answer["server_id"] == server_id_of(url)
        public = "http://127.0.0.1:8000"  # (public_url unset: the configured host and port)
        assert answer["links"] == answer_links(public, url)
        for name in ("server", "history", "badge_svg", "uptime_badge_svg"):
            assert answered(answer["links"][name].replace(public, base)), name
        assert httpx2.get(f"{base}/v1/attestations/{answer['attestation_id']}").status_code == 200
        tool = anyio.run(lambda: call(base, "check_mcp_server", {"url": url}, headers={"X-Free-Pool": "1"}))
    words = tool.content[1].text  # type: ignore[union-attr]
    assert answer["links"]["server"] in words and answer["links"]["badge_markdown"] in words
    assert f"{public}/v1/attestations/" in words
