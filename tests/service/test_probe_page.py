"""``GET /probe``: the page our User-Agent names, plain HTML without script, values escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import httpx2

from app import __version__
from app.probe.runner import user_agent
from app.service.probe_page import render
from app.settings import Settings
from tests.service.conftest import Service


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]


def test_the_user_agent_names_the_page_when_the_service_has_a_public_url() -> None:
    assert user_agent(Settings(public_url="https://sonde.example.org/")) == (
        f"mcp-sonde/{__version__} (+https://sonde.example.org/probe)"
    )
    assert user_agent(Settings()) == f"mcp-sonde/{__version__} (+{Settings().info_url})"  # (the CLI's probes)


def test_the_page_explains_the_sweep_and_the_opt_out(service: Service) -> None:
    with service(public_url="https://sonde.example.org", sweep_interval_s=43_200) as base:
        page = httpx2.get(f"{base}/probe")
        head = httpx2.head(f"{base}/probe")
    assert page.status_code == 200 and head.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src" not in page.headers["content-security-policy"]
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    text = page.text
    assert f"mcp-sonde/{__version__} (+https://sonde.example.org/probe)" in text
    assert "12 hours" in text and "6 hours" in text and "7 days" in text  # how often
    assert "At most 2 probes of one host" in text and "Opting out" in text
    parsed = Tags()
    parsed.feed(text)
    assert "script" not in parsed.tags and not [a for a in parsed.attributes if a.startswith("on")]


def test_every_value_in_the_page_is_escaped() -> None:
    hostile = Settings(info_url='https://x.test/"><script>alert(1)</script>', registry_url="https://r.test/<b>")
    text = render(hostile)
    assert "<script>" not in text and "&lt;script&gt;" in text and "&lt;b&gt;" in text
