"""The directory page and the server page's registry entry as HTTP answers (no browser): the GET
form's filters, the rows and their links, paging links, refusals shown with their reason, and
registry text escaped."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx2

from app.history.records import server_id_of
from tests.http.pages import hostile
from tests.http.pages.conftest import SiteFactory
from tests.http.pages.directory_seed import HOSTILE_DESCRIPTION, seed_directory
from tests.http.pages.markup import parse
from tests.http.pages.test_pages import assert_page

#: The pages read the same store code on both backends (tests/http/pages/conftest.py).
BOTH_BACKENDS = True

FLY = server_id_of("https://fly.example.com/mcp")


def links(html: str) -> list[str]:
    return [str(e.attrs.get("href")) for e in parse(html).tags("a") if "server-link" in (e.attrs.get("class") or "")]


def test_the_form_filters_and_each_row_links_to_its_page(site: SiteFactory) -> None:
    with site() as running:
        seed_directory(running.database)
        everything = httpx2.get(f"{running.base}/servers", timeout=10)
        travel = httpx2.get(f"{running.base}/servers", params={"q": "hotel", "category": "travel"}, timeout=10)
        gated = httpx2.get(f"{running.base}/servers", params={"auth": "gated"}, timeout=10)
        server = httpx2.get(f"{running.base}/servers/{FLY}", timeout=10)
    assert everything.status_code == 200
    assert_page(everything)
    assert len(links(everything.text)) == 3
    assert links(travel.text) == [f"/servers/{FLY}"]
    page = parse(travel.text)
    assert "from tool names" in page.text and HOSTILE_DESCRIPTION in page.text  # shown as text
    assert "<script>alert" not in travel.text and not page.tags("img")
    selected = [e for e in page.tags("option") if "selected" in e.attrs]
    assert [e.attrs.get("value") for e in selected] == ["travel", "name"]  # the form keeps the search
    assert links(gated.text) == [f"/servers/{server_id_of('https://locked.example.com/mcp')}"]
    assert_page(server)
    shown = parse(server.text)
    assert "io.example/fly" in shown.text and "Registry entry" in shown.text and "travel" in shown.text
    assert HOSTILE_DESCRIPTION in shown.text and "<script>alert" not in server.text
    assert hostile.IMAGE not in server.text


def test_pages_follow_the_cursor(site: SiteFactory) -> None:
    with site() as running:
        seed_directory(running.database, extra=25)
        seen: list[str] = []
        url = f"{running.base}/servers?q=m&limit=10"
        visited = 0
        while url and visited < 10:
            answer = httpx2.get(url, timeout=10)
            assert answer.status_code == 200
            seen += links(answer.text)
            following = [e for e in parse(answer.text).tags("a") if e.attrs.get("rel") == "next"]
            url = f"{running.base}{following[0].attrs['href']}" if following else ""
            visited += 1
        last = answer
    assert len(seen) == len(set(seen)) >= 25 and visited >= 3
    first = [e for e in parse(last.text).tags("a") if "cursor" not in str(e.attrs.get("href")) and
             str(e.attrs.get("href")).startswith("/servers?")]  # fmt: skip
    assert first and parse_qs(urlsplit(str(first[0].attrs["href"])).query) == {"q": ["m"], "limit": ["10"]}


def test_a_refused_parameter_is_shown_with_its_reason(site: SiteFactory) -> None:
    with site() as running:
        bad = httpx2.get(f"{running.base}/servers", params={"sort": "popularity", "q": "<b>x</b>"}, timeout=10)
        cursor = httpx2.get(f"{running.base}/servers", params={"cursor": "nope"}, timeout=10)
    assert bad.status_code == 400 and cursor.status_code == 400
    assert_page(bad)
    assert '<code class="reason">invalid_sort</code>' in bad.text and "<b>x</b>" not in bad.text
    assert '<code class="reason">invalid_cursor</code>' in cursor.text
    assert parse(bad.text).tags("form")  # the form is still there to fix the search
