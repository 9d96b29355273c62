"""``GET /probe``: the page our User-Agent names, a template page like the others (the pages' CSP,
values escaped by autoescaping)."""

from __future__ import annotations

import httpx2

from app import __version__
from app.http.pages.probe import context_of
from app.http.pages.render import render
from app.net.agent import user_agent
from app.settings import Settings
from tests.http.pages.conftest import SiteFactory
from tests.http.pages.markup import parse
from tests.http.pages.test_pages import assert_page


def test_the_user_agent_names_the_page_when_the_service_has_a_public_url() -> None:
    assert user_agent(Settings(public_url="https://sonde.example.org/")) == (
        f"mcp-sonde/{__version__} (+https://sonde.example.org/probe)"
    )
    assert user_agent(Settings()) == f"mcp-sonde/{__version__} (+{Settings().info_url})"  # (the CLI's probes)


def test_the_page_explains_the_sweep_and_the_opt_out(site: SiteFactory) -> None:
    with site(sweep_interval_s=43_200, registry_url="https://registry.test/v0/servers") as running:
        page = httpx2.get(f"{running.base}/probe", timeout=10)
        head = httpx2.head(f"{running.base}/probe", timeout=10)
    assert page.status_code == 200 and head.status_code == 200
    assert_page(page)  # (the pages' strict CSP: the one script with this answer's nonce)
    assert page.headers["cache-control"] == "public, max-age=3600"
    text = parse(page.text).text
    assert f"mcp-sonde/{__version__} (+{running.base}/probe)" in text
    assert "12 hours" in text and "6 hours" in text and "7 days" in text  # how often
    assert "At most 2 probes of one host" in text and "Opting out" in text
    assert "initialize" in text and "tools/call" in text and "DELETE" in text


def test_an_instance_that_sweeps_nothing_says_nothing_of_sweeps_and_gives_sizes_in_units() -> None:
    text = " ".join(
        parse(render("probe.html", {**context_of(Settings()), "csp_nonce": "n", "path": "/probe"})).text.split()
    )
    assert "it sweeps no registry" in text
    assert "registry endpoint" not in text.lower() and "How often" not in text
    assert f"at most {Settings().reply_cap_bytes // 1024} kB of each reply" in text
    assert f"at most {Settings().probe_timeout_s:g} s." in text and "second(s)" not in text


def test_every_value_in_the_page_is_escaped() -> None:
    hostile = Settings(info_url='https://x.test/"><script>alert(1)</script>', registry_url="https://r.test/<b>")
    text = render("probe.html", {**context_of(hostile), "csp_nonce": "n", "path": "/probe"})
    assert "<script>alert" not in text and "&lt;script&gt;" in text and "&lt;b&gt;" in text
    assert 'href="https://x.test/&#34;&gt;' in text  # (the attribute cannot be closed)
