"""The badge cache (:mod:`app.http.badges.cache`) through the badge routes: entries and ``Last-Modified``."""

from __future__ import annotations

import httpx2
import pytest

from tests.conftest import Service
from tests.servers.raw import RawServer


def test_last_modified_of_a_miss_that_waited_for_its_turn_is_not_after_date(service: Service, raw: RawServer) -> None:
    """Policy (README, badges): ``Last-Modified`` is the probe's time less 2 s, "so never later
    than Date". But uvicorn fixes ``Date`` when the request *arrives* (the request cycle copies
    the server's default headers then), and a miss can wait up to the light-probe budget (5 s)
    for its host's turn (one new probe per second per host) before its probe, whose start is
    ``checked_at``, begins. Four concurrent misses of one host: the later ones answer with a
    Last-Modified seconds after their Date (RFC 9110 section 8.8.2.1 forbids that)."""
    import concurrent.futures
    from email.utils import parsedate_to_datetime

    from tests.servers.raw_mcp import MiniMcp

    raw.routes["/mcp"] = MiniMcp()
    with service(host_start_interval_s=1.0, badge_rate_limit="100/minute") as base:

        def miss(n: int) -> httpx2.Response:
            return httpx2.get(f"{base}/badge/mcp", params={"url": raw.url(f"/mcp?n={n}")}, timeout=30)

        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(miss, range(4)))
    late = [
        (a.headers["date"], a.headers["last-modified"])
        for a in answers
        if "last-modified" in a.headers
        and parsedate_to_datetime(a.headers["last-modified"]) > parsedate_to_datetime(a.headers["date"])
    ]
    assert not late, f"Last-Modified after Date: {late}"


@pytest.mark.parametrize("checked", [1e20, -1e20, 1e300])
def test_a_corrupted_badge_entry_with_an_absurd_time_is_a_miss_not_a_500(service: Service, checked: float) -> None:
    """Policy (app/http/badges/cache.py): "An entry that is not one of ours (wrong types, text a
    header cannot carry, no finite time) is a miss, probed and written again", and a badge is
    "always 200 with an image". ``_entry`` checks that ``checked`` is finite, but then calls
    ``http_date(checked - 2)`` outside its ``try``: a finite time outside datetime's range raises
    (OverflowError / ValueError / OSError) out of the cache read. The edge fast path
    (app/http/badges/hits.py) answers a plain-text 500 "Internal Server Error": no image, no
    problem details."""
    import uuid

    from tests.http.badges.test_route import _seed
    from tests.servers.redis_server import shared_redis_url

    url = "https://corrupt.example.com/mcp"
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    entry = {"state": "ok", "message": "live", "color": "brightgreen", "checked": checked}
    _seed(shared, url, entry | {"modified": "Mon, 30 Nov 2026 00:00:00 GMT", "fresh_until": 1e300})
    with service(**shared) as base:
        svg = httpx2.get(f"{base}/badge/mcp", params={"url": url}, timeout=30)
        json_badge = httpx2.get(f"{base}/badge/mcp.json", params={"url": url}, timeout=30)
        png = httpx2.get(f"{base}/badge/mcp.png", params={"url": url}, timeout=30)
    for answer in (svg, json_badge, png):
        assert answer.status_code == 200, (answer.status_code, answer.headers.get("content-type"), answer.text[:80])
