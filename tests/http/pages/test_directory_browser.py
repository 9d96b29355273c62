"""The directory in a real headless Chromium: filter it with the GET form, open a server page from
a row, keyboard included; axe-core finds no violation; screenshots at desktop
and phone widths."""

from __future__ import annotations

from app.history.records import server_id_of
from tests.http.pages.conftest import SiteFactory
from tests.http.pages.directory_seed import HOSTILE_DESCRIPTION, seed_directory
from tests.http.pages.test_browser import Watched, audited, browser, playwright, watched

__all__ = ["browser", "playwright", "watched"]
FLY = server_id_of("https://fly.example.com/mcp")


def test_filter_the_directory_and_open_a_server(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        seed_directory(running.database, extra=3)
        page = watched.page
        page.goto(f"{running.base}/")
        page.get_by_role("link", name="Servers").click()
        page.wait_for_url(f"{running.base}/servers")
        assert page.locator("a.server-link").count() == 6
        audited(watched, "directory")
        page.get_by_label("Words").fill("hotel")
        page.get_by_label("Category").select_option("travel")
        page.get_by_label("Sign-in").select_option("open")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url("**/servers?*category=travel*")
        rows = page.locator("a.server-link")
        assert rows.all_inner_texts() == ["Fly Finder"]
        assert HOSTILE_DESCRIPTION in page.locator("table.servers").inner_text()  # text, not markup
        assert page.get_by_label("Category").input_value() == "travel"  # the form keeps the search
        audited(watched, "directory-filtered")
        rows.first.focus()
        page.keyboard.press("Enter")
        page.wait_for_url(f"{running.base}/servers/{FLY}")
        assert page.locator(".registry-name").inner_text() == "io.example/fly"
        assert HOSTILE_DESCRIPTION in page.locator(".registry-description").inner_text()
        audited(watched, "server-from-directory")
