"""The pages in a real headless Chromium, as people use them: the free check form against a
loopback MCP server, the server page and its copy buttons, keyboard-only use, hostile server
text, the CSP (no violation reported), axe-core (no violation of any impact, at either width), and
screenshots at desktop and phone widths."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Playwright, sync_playwright

from app.history.records import server_id_of
from tests.checking.test_recorder import stored
from tests.checking.test_recorder import wait_for as wait_until
from tests.http.pages import hostile
from tests.http.pages.browser import WATCH_CSP, chromium, csp_violations, screenshots
from tests.http.pages.conftest import Site, SiteFactory
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp


@pytest.fixture(scope="module")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright: Playwright) -> Iterator[Browser]:
    launched = playwright.chromium.launch(executable_path=chromium(), headless=True, args=["--no-sandbox"])
    try:
        yield launched
    finally:
        launched.close()


class Watched:
    """A page with its console's CSP reports and any dialog it opened."""

    def __init__(self, context: BrowserContext) -> None:
        self.context = context
        self.page = context.new_page()
        self.console: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", self._console)
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(WATCH_CSP)

    def _console(self, message: ConsoleMessage) -> None:
        self.console.append(f"{message.type}: {message.text}")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(str(dialog.message))
        dialog.dismiss()

    def clean(self, status: int = 200) -> None:
        """No CSP violation reported (events or console), no dialog, no console error (but the
        page's own status, when it is an error)."""
        assert csp_violations(self.page) == []
        own = f"error: Failed to load resource: the server responded with a status of {status} "
        errors = [line for line in self.console if line.startswith("error") and not line.startswith(own)]
        assert [line for line in self.console if "Content Security Policy" in line] == [] and errors == []
        assert self.dialogs == []


@pytest.fixture
def watched(browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Watched(context)
    finally:
        context.close()


def audited(watched: Watched, name: str, status: int = 200) -> None:
    """The page reports no CSP violation; at both widths axe-core finds nothing and screenshots are saved."""
    watched.clean(status)
    screenshots(watched.page, name)


def kept(site: Site) -> list[Any]:
    """The runs stored in the site's history, read on a thread of its own (Playwright's sync API
    keeps an event loop running on this one)."""
    found: list[Any] = []
    reader = threading.Thread(target=lambda: found.extend(stored(site.database)))
    reader.start()
    reader.join(timeout=30)
    return found


def wait_for_run(site: Site) -> list[Any]:
    """The stored runs, once the history holds one (bounded wait)."""
    runs: list[Any] = wait_until(lambda: kept(site))
    assert runs, "no run was stored"
    return runs


def check_with_form(page: Page, site: Site, url: str) -> None:
    page.goto(f"{site.base}/")
    page.get_by_label("MCP endpoint URL").fill(url)
    page.get_by_role("button", name="Check").click()
    page.wait_for_selector("#result-heading, #error-heading", timeout=30_000)


def test_free_check_form_shows_the_result(site: SiteFactory, raw: RawServer, watched: Watched) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta"])
    url = raw.url("/mcp")
    with site() as running:
        page = watched.page
        answer = page.goto(f"{running.base}/")
        assert answer is not None and "nonce-" in answer.headers["content-security-policy"]
        audited(watched, "home")
        check_with_form(page, running, url)
        assert page.locator("#result-heading").inner_text().endswith(url)
        assert page.locator(".status strong").inner_text() == "Up: answers MCP"
        assert page.get_by_text("The server answered the MCP handshake and listed its tools.").is_visible()
        rows = page.locator("table.checks tbody tr")
        assert rows.count() >= 10 and page.locator("table.checks").get_by_text("Verified").first.is_visible()
        (row,) = wait_for_run(running)
        assert page.get_by_role("link", name=f"attestation {row.run_id}").get_attribute("href") == (
            f"/v1/attestations/{row.run_id}"
        )
        audited(watched, "check-result")


def test_form_refusal_is_shown_with_its_reason(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        check_with_form(watched.page, running, "https://user:pw@mcp.example.com/mcp")
        alert = watched.page.get_by_role("alert")
        assert "userinfo_present" in alert.inner_text() and "credentials are never sent" in alert.inner_text()
        audited(watched, "check-refused", 422)


def test_keyboard_only_check(site: SiteFactory, raw: RawServer, watched: Watched) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha"])
    with site() as running:
        page = watched.page
        page.goto(f"{running.base}/")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.className") == "skip"  # the skip link comes first
        for _ in range(10):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.id") == "url":
                break
        assert page.evaluate("document.activeElement.id") == "url"
        page.keyboard.type(raw.url("/mcp"))
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.locator(".status strong").inner_text() == "Up: answers MCP"
        watched.clean()


def test_server_page_copies_the_badge_snippet(site: SiteFactory, raw: RawServer, watched: Watched) -> None:
    raw.routes["/mcp"] = MiniMcp(tools=["alpha", "beta", "gamma"])
    url = raw.url("/mcp")
    with site() as running:
        check_with_form(watched.page, running, url)
        wait_for_run(running)
        watched.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=running.base)
        page = watched.page
        page.goto(f"{running.base}/servers/{server_id_of(url)}")
        assert page.locator("svg rect.day").count() == 90
        assert page.locator(".tool-name").all_inner_texts() == ["alpha", "beta", "gamma"]
        for box, label in (("badge-markdown", "Markdown"), ("badge-html", "HTML")):
            snippet = page.locator(f"#{box}").input_value()
            page.get_by_role("button", name=f"Copy {label}").click()
            page.wait_for_function("t => document.querySelector('.copy-status').textContent.includes(t)", arg=label)
            assert page.evaluate("navigator.clipboard.readText()") == snippet
        assert "/badge/mcp/uptime?url=" in snippet and snippet.startswith(f'<a href="{running.base}/servers/')
        badge = page.get_by_role("img", name="MCP uptime badge of this server")
        assert badge.evaluate("image => image.complete && image.naturalWidth > 0")
        audited(watched, "server")
        missing = page.goto(f"{running.base}/servers/{'0' * 24}")
        assert missing is not None and missing.status == 404
        assert "server_not_found" in page.locator("main").inner_text()
        audited(watched, "not-found", 404)


def test_the_snippets_are_selectable_text_without_javascript(
    site: SiteFactory, raw: RawServer, browser: Browser
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    url = raw.url("/mcp")
    context = browser.new_context(java_script_enabled=False)
    try:
        with site() as running:
            page = context.new_page()
            check_with_form(page, running, url)
            assert page.locator(".status strong").inner_text() == "Up: answers MCP"  # the form needs no script
            wait_for_run(running)
            page.goto(f"{running.base}/servers/{server_id_of(url)}")
            assert page.locator("#badge-markdown").input_value().startswith("[![MCP uptime](")
            assert page.locator("button.copy-button").first.is_hidden()  # no dead buttons without a script
    finally:
        context.close()


def test_hostile_server_text_is_shown_as_text(site: SiteFactory, raw: RawServer, watched: Watched) -> None:
    raw.routes["/mcp"] = hostile.HostileMcp()
    url = raw.url("/mcp")
    with site() as running:
        page = watched.page
        check_with_form(page, running, url)
        assert page.get_by_text(hostile.NAME, exact=False).first.is_visible()
        wait_for_run(running)
        page.goto(f"{running.base}/servers/{server_id_of(url)}")
        assert page.locator(".server-name").inner_text().startswith(hostile.NAME)
        assert hostile.TOOL in page.locator(".tool-name").all_inner_texts()
        assert page.locator(".tool-description").first.inner_text() == hostile.DESCRIPTION
        assert page.locator("img[src='x'], a[href^='javascript:'], main script").count() == 0
        assert page.evaluate("document.scripts.length") == 1  # only the copy buttons' script
        audited(watched, "server-hostile")
