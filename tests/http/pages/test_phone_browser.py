"""The pages people act on, in a real headless Chromium at 1280 and 390 px, on both history
backends: the directory as one card per server on a phone with its filters folded, the
statistics' charts legible on a phone with their tables folded, a check result that leads to
its server's page, badges and the check's text, the HTML API reference and the check catalogue.
Every page: no CSP violation, axe-core finds no violation at either width, screenshots saved."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from app.checking import links
from app.history.records import server_id_of
from app.suite.catalogue import catalogue
from tests.directory.seed import server_run, tools
from tests.http.pages.browser import WIDTHS
from tests.http.pages.conftest import Site, SiteFactory
from tests.http.pages.directory_seed import seed_directory
from tests.http.pages.test_browser import (
    Watched,
    audited,
    browser,
    check_with_form,
    playwright,
    wait_for_run,
    watched,
)
from tests.http.pages.test_stats import store
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

__all__ = ["browser", "playwright", "watched"]
BOTH_BACKENDS = True
PHONE = WIDTHS["phone"]

#: For each card of the directory: its width, how far any of its parts reaches past its right
#: edge, the URL's lines, and the status cell's sign and words.
CARDS = """() => [...document.querySelectorAll("table.servers tbody tr")].map((card) => {
  const box = card.getBoundingClientRect();
  const parts = [...card.querySelectorAll("*")].map((e) => e.getBoundingClientRect().right - box.right);
  const url = card.querySelector(".url");
  const lines = url.getBoundingClientRect().height / parseFloat(getComputedStyle(url).lineHeight);
  return {display: getComputedStyle(card).display, width: box.width, past: Math.max(...parts), lines: lines,
          widest: url.getBoundingClientRect().width, cue: card.querySelector(".standing .cue").textContent,
          status: card.querySelector(".standing").textContent};
})"""
#: The size each chart's text is drawn at, in CSS pixels.
CHART_TEXT = """() => [...document.querySelectorAll("figure.chart svg text")].map(
  (text) => parseFloat(getComputedStyle(text).fontSize) * text.getScreenCTM().a)"""
#: In-page links whose target is missing.
DEAD_ANCHORS = """() => [...document.querySelectorAll("a[href^='#']")]
  .map((a) => a.getAttribute("href").slice(1)).filter((id) => id && !document.getElementById(id))"""


def from_the_navigation(page: Page, base: str, link: str, path: str) -> None:
    """Open the home page and follow the site navigation's ``link`` to ``path``."""
    page.goto(f"{base}/")
    page.get_by_role("navigation", name="Site").get_by_role("link", name=link).click()
    page.wait_for_url(f"{base}{path}")


@pytest.fixture
def phone(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": PHONE, "height": 844})
    try:
        yield Watched(context)
    finally:
        context.close()


def seed_with_a_down_server(site: Site) -> None:
    down = server_run(30, "down.example.com", tools=tools("echo"), status="timeout", reason="read_timeout")
    seed_directory(site.database, extra=2, more=(down,))


def test_the_directory_on_a_phone_is_one_card_per_server_with_its_filters_folded(
    site: SiteFactory, phone: Watched, watched: Watched
) -> None:
    with site() as running:
        seed_with_a_down_server(running)
        page = phone.page
        page.goto(f"{running.base}/servers")
        assert page.locator("details.filters").evaluate("d => d.open") is False
        assert page.get_by_label("Category").is_hidden() and page.get_by_label("Words").is_visible()
        cards = page.evaluate(CARDS)
        assert len(cards) == 6
        for card in cards:
            assert card["display"] == "block" and card["width"] >= PHONE - 60, card
            assert card["past"] <= 1, card  # nothing reaches past the card
            assert card["lines"] <= 2.1 and card["widest"] >= 200, card  # no URL one character per line
        signs = {card["cue"]: card["status"] for card in cards}
        assert set(signs) == {"✓", "✕"}
        assert "Timed out" in signs["✕"] and "timeout" in signs["✕"] and "Up" in signs["✓"]
        assert "Fly Finder" in page.locator("a.server-link").all_inner_texts()  # the registry's title, not the host
        audited(phone, "servers-folded")  # (loaded on a phone: its screenshots keep the filters folded)
        page.get_by_text("Filters and order").click()
        assert page.get_by_label("Category").is_visible()
        page.get_by_label("Status").select_option("timeout")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url("**/servers?*status=timeout*")
        assert page.locator("a.server-link").all_inner_texts() == ["down.example.com"]
        assert page.locator("details.filters").evaluate("d => d.open") is True  # a narrowed search shows its filters
        assert "(1 in use)" in page.locator("details.filters summary").inner_text()
        phone.clean()
        wide = watched.page
        wide.goto(f"{running.base}/servers")
        assert wide.locator("details.filters").evaluate("d => d.open") is True  # unfolded on a wide screen
        assert wide.locator("table.servers tbody tr").first.evaluate("r => getComputedStyle(r).display") == "table-row"
        audited(watched, "servers")


def test_the_statistics_charts_are_legible_on_a_phone_and_their_tables_folded(
    site: SiteFactory, phone: Watched
) -> None:
    with site() as running:
        writer = threading.Thread(target=store, args=(running,))  # (Playwright's loop holds this thread)
        writer.start()
        writer.join(timeout=60)
        page = phone.page
        page.goto(f"{running.base}/stats")
        sizes = page.evaluate(CHART_TEXT)
        assert sizes and min(sizes) >= 12, sizes
        folds = page.locator("details.figures")
        assert folds.count() == 5 and folds.evaluate_all("ds => ds.filter(d => d.open).length") == 0
        assert page.locator("table.figures").first.is_hidden()
        folds.first.locator("summary").click()
        assert page.locator("table.figures").first.is_visible()
        assert "max_age_s" not in page.locator("main").inner_text()
        assert page.locator("time").first.inner_text().endswith(" UTC")
        audited(phone, "stats-phone")


def test_a_check_result_leads_to_its_server_page_badges_and_the_checks_text(
    site: SiteFactory, raw: RawServer, watched: Watched
) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha"])
    url = raw.url("/mcp")
    with site() as running:
        page = watched.page
        check_with_form(page, running, url)
        server_page = links.server_page(running.base, server_id_of(url))
        assert page.get_by_role("link", name="Server page").get_attribute("href") == server_page
        assert page.get_by_role("link", name="History (JSON)").get_attribute("href") == (
            f"{running.base}/v1/servers/{server_id_of(url)}/history"
        )
        assert page.locator("#result-badge-markdown").input_value() == links.status_badge_markdown(running.base, url)
        assert page.locator("#result-uptime-markdown").input_value().endswith(f"]({server_page})")
        assert page.locator("time").first.inner_text().endswith(" UTC")
        audited(watched, "check-result-links")
        reference = page.get_by_role("link", name="the check's text").first
        target = str(reference.get_attribute("href"))
        check_id = target.rsplit("#check-", 1)[1]
        reference.click()
        page.wait_for_url(f"**/checks#check-{check_id}")
        article = page.locator(f"article#check-{check_id}")
        assert article.is_visible() and catalogue().checks[check_id].title in article.inner_text()
        assert page.evaluate("location.hash") == f"#check-{check_id}"
        wait_for_run(running)
        page.goto(server_page)
        assert page.locator(f"a[href='/checks#check-{check_id}']").count() == 2  # its title and "the check's text"


def test_the_api_reference_is_html_drawn_from_the_document(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        page = watched.page
        from_the_navigation(page, running.base, "API", "/api")
        document = page.request.get(f"{running.base}/openapi.json").json()
        operations = sum(
            1 for item in document["paths"].values() for m in item if m in ("get", "put", "post", "delete")
        )
        assert page.locator("article.operation").count() == operations
        assert page.locator("article.schema").count() == len(document["components"]["schemas"])
        assert page.get_by_role("link", name="OpenAPI 3.1 as YAML").get_attribute("href") == "/openapi.yaml"
        assert page.get_by_role("link", name="as JSON").get_attribute("href") == "/openapi.json"
        assert page.evaluate(DEAD_ANCHORS) == []
        check = page.locator("article.operation", has=page.locator("code.path", has_text="/v1/mcp/check")).first
        assert "CheckResult" in check.inner_text()
        check.get_by_role("link", name="CheckResult").first.click()
        assert page.evaluate("location.hash") == "#schema-CheckResult"
        schema = page.locator("article.schema", has=page.locator("#schema-CheckResult"))
        assert "server_id" in schema.inner_text() and "links" in schema.inner_text()
        assert page.evaluate("document.scripts.length") == 1
        audited(watched, "api-reference")


def test_the_check_catalogue_is_a_page_with_every_check_and_its_json(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        page = watched.page
        from_the_navigation(page, running.base, "Check catalogue", "/checks")
        served = catalogue()
        assert page.locator("article.check-entry").count() == len(served.checks)
        for check_id, spec in served.checks.items():
            assert spec.title in page.locator(f"article#check-{check_id}").inner_text()
        assert served.sha256 in page.locator("main").inner_text()
        assert page.get_by_role("link", name="GET /v1/checks").get_attribute("href") == "/v1/checks"
        assert page.evaluate(DEAD_ANCHORS) == []
        audited(watched, "checks")
