"""``/stats`` and ``GET /v1/stats`` over HTTP, with runs stored through the real store: a hostile
protocol version shown as text, the pages' CSP, the charts as SVG with their title, description
and table, every figure's definition on the page."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import httpx2

from app.checking.services import open_history
from app.http.pages.stats import page_words
from app.stats.figures import figures
from tests.http.pages.conftest import Site, SiteFactory
from tests.http.pages.markup import parse
from tests.http.pages.test_pages import assert_page
from tests.stats.runs import run

#: The pages read the same store code on both backends (tests/http/pages/conftest.py).
BOTH_BACKENDS = True

HOSTILE = '"><script>alert(1)</script><svg onload=alert(2)>'


def store(site: Site) -> None:
    now = datetime.now(UTC)

    async def record() -> None:
        history = open_history(site.database)
        try:
            for item in (
                run("a.test", now - timedelta(hours=2), era="legacy", version=HOSTILE[:64], tools=("add", "echo")),
                run("b.test", now - timedelta(hours=1), era="modern", version="2026-07-28", tools=("add",)),
                run("c.test", now, "auth", "auth_required", metadata=True),
                run("d.test", now, "timeout", "read_timeout"),
            ):
                assert await history.record(item)
        finally:
            await history.aclose()

    asyncio.run(record())


def body_fields(document: object) -> set[str]:
    """Every member name with an underscore in a JSON document."""
    if isinstance(document, dict):
        return {key for key in document if "_" in key} | {f for value in document.values() for f in body_fields(value)}
    if isinstance(document, list):
        return {field for value in document for field in body_fields(value)}
    return set()


def test_the_stats_page_draws_escaped_charts_with_their_text(site: SiteFactory) -> None:
    with site() as running:
        store(running)
        answer = httpx2.get(f"{running.base}/stats", timeout=30)
        api = httpx2.get(f"{running.base}/v1/stats", timeout=30)
    assert answer.status_code == 200
    assert_page(answer)
    assert "<script>alert" not in answer.text and "onload=alert" not in answer.text.replace("&lt;svg onload", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer.text
    page = parse(answer.text)
    assert HOSTILE[:22] in page.text  # (shown as text, whole in the table, cut in the drawing)
    svgs = page.tags("svg")
    assert len(svgs) == 5  # status, failures, a chart per handshake path, tool counts
    assert all(svg.attrs["role"] == "img" and svg.attrs.get("aria-labelledby") for svg in svgs)
    ids = {e.attrs.get("id") for e in page.elements}
    for svg in svgs:
        assert set(str(svg.attrs["aria-labelledby"]).split()) <= ids
    assert len(page.tags("rect")) == 11 + 7 + 1 + 1 + 8  # one bar per row
    assert len(page.tags("table")) == 6  # a table per chart, and drift
    words = page_words()
    for key, text in figures().definitions.items():
        assert words.get(key, text) in page.text
    # no field name of the API document in the page's words (it said "max_age_s says ...")
    for field in {*body_fields(api.json()), "authorization_servers", "resource_metadata"}:
        assert field not in page.text, field
    assert "recomputed when older than 5 min" in page.text
    for bucket in figures().buckets:
        assert bucket.definition in page.text
    assert "1 of 3 servers that are up" in page.text and "Median tool count: 1.5" in page.text
    assert api.status_code == 200 and api.headers["cache-control"] == "public, max-age=60"
    body = api.json()
    assert body["servers"] == 4 and body["protocol_versions"][1]["answered"][0]["version"] == HOSTILE[:64]
    assert body["definitions"] == figures().definitions
