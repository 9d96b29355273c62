"""``/stats`` and ``/probe`` in a real headless Chromium: no CSP violation, axe-core finds no
violation, a hostile protocol version rendered as text, the charts drawn, screenshots."""

from __future__ import annotations

import threading

from tests.http.pages.conftest import SiteFactory
from tests.http.pages.test_browser import Watched, audited, browser, playwright, watched
from tests.http.pages.test_stats import HOSTILE, store

__all__ = ["browser", "playwright", "watched"]


def test_stats_page_in_the_browser(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        writer = threading.Thread(target=store, args=(running,))  # (Playwright's loop holds this thread)
        writer.start()
        writer.join(timeout=60)
        page = watched.page
        answer = page.goto(f"{running.base}/stats")
        assert answer is not None and answer.status == 200
        assert page.get_by_role("heading", name="Statistics of the servers checked here").is_visible()
        assert page.locator("svg[role=img]").count() == 5
        assert page.get_by_role("img", name="Servers by the status of their newest run").is_visible()
        assert page.locator("table.figures th", has_text=HOSTILE[:40]).count() == 1  # shown as text
        assert watched.dialogs == [] and page.evaluate("document.querySelectorAll('script').length") == 1
        audited(watched, "stats")  # (screenshots at 1280 and 390 px; neither scrolls sideways)


def test_probe_page_in_the_browser(site: SiteFactory, watched: Watched) -> None:
    with site() as running:
        page = watched.page
        page.goto(f"{running.base}/probe")
        assert page.get_by_role("heading", name="What is this mcp-sonde probe?").is_visible()
        assert page.get_by_role("heading", name="Opting out").is_visible()
        audited(watched, "probe")
