"""The directory's rows list a server no registry entry or owner names by the name it gives
itself (serverInfo), not its host: shown as text, and found by search."""

from __future__ import annotations

import asyncio
import html
import json
import re

import httpx2

from app.checking.services import open_history
from app.history.records import server_id_of
from tests.directory.seed import server_run
from tests.http.pages.conftest import SiteFactory
from tests.http.pages.markup import parse

#: The pages read the same store code on both backends (tests/http/pages/conftest.py).
BOTH_BACKENDS = True
TITLE = "<b>Eat</b> & drink"


def test_a_row_shows_the_servers_own_name_escaped_and_search_finds_it(site: SiteFactory) -> None:
    result = json.dumps({"status": "ok", "server": {"name": "eat-server", "version": "1", "title": TITLE}}).encode()

    async def write(database: str) -> None:
        history = open_history(database)
        try:
            assert await history.record(server_run(1, "eat.example.com", result=result))
            assert await history.record(server_run(2, "nameless.example.com"))
        finally:
            await history.aclose()

    with site() as running:
        asyncio.run(write(running.database))
        listed = httpx2.get(f"{running.base}/servers", timeout=10)
        found = httpx2.get(f"{running.base}/servers", params={"q": "drink"}, timeout=10)
    assert listed.status_code == 200 and "<b>Eat</b>" not in listed.text
    labels = re.findall(r'class="data server-link" href="/servers/([0-9a-f]{24})">([^<]*)</a>', listed.text)
    assert dict(labels) == {
        server_id_of("https://eat.example.com/mcp"): html.escape(TITLE, quote=False),
        server_id_of("https://nameless.example.com/mcp"): "nameless.example.com",  # (it gives no name: its host)
    }
    assert TITLE in parse(found.text).text and "nameless.example.com" not in parse(found.text).text


def test_a_missing_server_page_says_so_once_and_offers_the_search(site: SiteFactory) -> None:
    with site() as running:
        missing = httpx2.get(f"{running.base}/servers/{'0' * 24}", timeout=10)
    assert missing.status_code == 404
    text = parse(missing.text).text.lower()
    assert text.count("no check of this server is kept here") == 1  # (it was said twice)
    forms = [f for f in parse(missing.text).tags("form") if f.attrs.get("action") == "/servers"]
    assert forms and forms[0].attrs.get("method") == "get"
    assert any(e.attrs.get("name") == "q" for e in parse(missing.text).tags("input"))
