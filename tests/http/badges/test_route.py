"""GET /badge/mcp, .png and .json: states, cache, single-flight, limits and headers."""

from __future__ import annotations

import socket
import threading
import time
import uuid
from collections.abc import Coroutine
from email.utils import formatdate
from typing import Any
from urllib.parse import quote

import anyio
import httpx2
import pytest
import trustme

from app.guard.shares import LookupShares
from tests.conftest import Service
from tests.servers.network import loopback_addrinfo, server_context
from tests.servers.raw import RawServer, Request, send
from tests.servers.raw_mcp import MiniMcp
from tests.servers.redis_server import shared_redis_url


def badge(base: str, url: str, kind: str = "", **params: str) -> httpx2.Response:
    query = "&".join([f"url={quote(url, safe='')}"] + [f"{k}={v}" for k, v in params.items()])
    return httpx2.get(f"{base}/badge/mcp{kind}?{query}", timeout=30)


def handshakes(raw: RawServer) -> int:
    return sum(1 for r in raw.seen if r.message.get("method") in ("server/discover",))


def test_live_badge_and_its_headers(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service() as base:
        first = badge(base, raw.url("/mcp"))
        second = badge(base, raw.url("/mcp"))
        not_modified = httpx2.get(
            f"{base}/badge/mcp?url={quote(raw.url('/mcp'), safe='')}", headers={"If-None-Match": first.headers["etag"]}
        )
    assert first.status_code == 200 and first.headers["content-type"] == "image/svg+xml; charset=utf-8"
    assert "live · checked " + time.strftime("%Y-%m-%d", time.gmtime()) in first.text
    assert 'aria-label="MCP: live · checked' in first.text
    assert first.headers["x-badge-state"] == "ok"
    assert first.headers["cache-control"] == "max-age=300, s-maxage=300"
    assert first.headers["x-content-type-options"] == "nosniff"
    assert (
        "script" not in first.headers["content-security-policy"]
        and "default-src 'none'" in first.headers["content-security-policy"]
    )
    assert first.headers["etag"].startswith('"') and "last-modified" in first.headers
    assert second.text == first.text and handshakes(raw) == 1  # the second came from the cache
    assert not_modified.status_code == 304 and not_modified.content == b""


def test_states(service: Service, raw: RawServer) -> None:
    @raw.route("/auth")
    def protected(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": "Bearer"})

    @raw.route("/page")
    def page(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "text/html"}, b"<html>hi</html>")

    ca = trustme.CA()  # a certificate nobody trusts: the TLS state
    tls_server = RawServer(ssl_context=server_context(ca, "localhost"))
    tls_server.start()
    tls_server.routes["/mcp"] = MiniMcp()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    with service() as base:
        states = {
            name: badge(base, url)
            for name, url in {
                "auth": raw.url("/auth"),
                "not_mcp": raw.url("/page"),
                "unreachable": f"http://127.0.0.1:{closed_port}/mcp",
                "refused": "https://169.254.169.254/latest",
                "tls": tls_server.url("/mcp", host="localhost"),
            }.items()
        }
        endpoint = {name: badge(base, url, ".json").json()["isError"] for name, url in [
            ("auth", raw.url("/auth")), ("unreachable", f"http://127.0.0.1:{closed_port}/mcp"),
            ("refused", "https://169.254.169.254/latest"),
        ]}  # fmt: skip
    tls_server.stop()
    assert endpoint == {"auth": False, "unreachable": True, "refused": True}  # shields' isError
    for name, response in states.items():
        assert response.status_code == 200 and response.headers["x-badge-state"] == name, name
    assert "auth required" in states["auth"].text and "#d8b800" in states["auth"].text
    assert "not MCP" in states["not_mcp"].text
    assert "unreachable" in states["unreachable"].text and "#939393" in states["unreachable"].text
    assert "invalid URL" in states["refused"].text
    assert "TLS error" in states["tls"].text and "#dd4343" in states["tls"].text
    assert states["refused"].headers["cache-control"] == "max-age=60, s-maxage=60"


def test_png_and_endpoint_json(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service() as base:
        png = badge(base, raw.url("/mcp"), ".png")
        endpoint = badge(base, raw.url("/mcp"), ".json")
        square = badge(base, raw.url("/mcp"), style="for-the-badge")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png" and png.content.startswith(b"\x89PNG")
    document = endpoint.json()
    assert document["schemaVersion"] == 1 and document["label"] == "MCP" and document["color"] == "brightgreen"
    assert document["message"].startswith("live · checked ")
    assert (document["isError"], document["cacheSeconds"]) == (False, 300)
    assert "LIVE · CHECKED" in square.text and 'height="28"' in square.text
    assert handshakes(raw) == 1


def test_regression_a_badge_fetched_without_an_origin_carries_the_cors_headers_a_shared_cache_hands_on(
    service: Service, raw: RawServer
) -> None:
    """A CDN that kept the copy an image request fetched (no ``Origin``) serves it to a page's
    ``fetch()`` too: every badge, miss or hit, SVG, PNG, JSON or uptime, 200 or 304, says ``*`` itself."""
    raw.routes["/mcp"] = MiniMcp()
    with service() as base:
        answers = [badge(base, raw.url("/mcp"), kind) for kind in ("", ".png", ".json", "", ".json")]
        answers.append(badge(base, "http://[::1", ""))  # (a refused URL's grey badge)
        answers.append(httpx2.get(f"{base}/badge/mcp/uptime?url={quote(raw.url('/mcp'), safe='')}"))
        tag = answers[3].headers["etag"]
        answers.append(
            httpx2.get(f"{base}/badge/mcp?url={quote(raw.url('/mcp'), safe='')}", headers={"If-None-Match": tag})
        )
    assert answers[-1].status_code == 304
    for answer in answers:
        assert answer.headers.get_list("access-control-allow-origin") == ["*"]
        assert "x-badge-state" in answer.headers["access-control-expose-headers"].lower()


def test_cache_misses_are_limited_hits_are_not(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service(badge_rate_limit="1/minute") as base:
        first = badge(base, raw.url("/mcp"))
        limited = badge(base, raw.url("/mcp?other=1"))
        hits = [badge(base, raw.url("/mcp")) for _ in range(5)]
    assert first.headers["x-badge-state"] == "ok"
    assert (limited.status_code, limited.headers["x-badge-state"]) == (200, "rate_limited")
    assert "rate limited" in limited.text and limited.headers["cache-control"] == "max-age=60, s-maxage=60"
    assert all(h.headers["x-badge-state"] == "ok" for h in hits)


def test_stale_badge_is_served_while_one_refresh_runs(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    _seed(shared, raw.url("/mcp"), STALE_UNREACHABLE | {"fresh_until": time.time() - 1})  # past its time
    with service(**shared) as base:
        stale = badge(base, raw.url("/mcp"))
        deadline = time.monotonic() + 5
        while (fresh := badge(base, raw.url("/mcp"))).headers["x-badge-state"] != "ok":
            assert time.monotonic() < deadline, "the refresh never landed"
            time.sleep(0.05)
    assert stale.headers["x-badge-state"] == "unreachable"  # served at once, from the stale entry
    assert "live · checked" in fresh.text
    assert handshakes(raw) == 1  # one refresh


def test_one_probe_for_300_concurrent_misses_across_instances(service: Service, raw: RawServer) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            time.sleep(0.5)
        inner(request, conn)

    shared = {
        "redis_url": shared_redis_url(),
        "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:",
        "redis_timeout_s": 3.0,
        "badge_rate_limit": "1000/minute",
    }
    with service(**shared) as first, service(**shared) as second, service(**shared) as third:

        async def burst() -> list[httpx2.Response]:
            responses: list[httpx2.Response] = []
            async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=100)) as client:

                async def one(i: int) -> None:
                    base = (first, second, third)[i % 3]
                    responses.append(await client.get(f"{base}/badge/mcp", params={"url": raw.url("/mcp")}))

                async with anyio.create_task_group() as group:
                    for i in range(300):
                        group.start_soon(one, i)
            return responses

        responses = anyio.run(burst)
    assert len(responses) == 300 and all(r.status_code == 200 for r in responses)
    assert {r.headers["x-badge-state"] for r in responses} == {"ok"}
    assert handshakes(raw) == 1


def test_a_cached_hit_answered_at_the_edge_is_the_route_s_answer(service: Service, raw: RawServer) -> None:
    """Hits without an ``Origin`` skip the framework (app.http.badges.hits); with one they take the
    route and get CORS headers. Everything else must be byte for byte the same, 304s included (the
    request id too: a trusted proxy gives the same one to both)."""
    raw.routes["/mcp"] = MiniMcp()
    cors = {"access-control-allow-origin", "access-control-expose-headers", "vary", "access-control-allow-credentials"}
    cors.add("date")  # (uvicorn's, and the two answers may straddle a second)
    given = {"X-Request-Id": "edge-and-route-1"}
    with service(trusted_proxies=["127.0.0.1/32"]) as base:
        for kind, params in (("", {}), ("", {"style": "for-the-badge"}), (".json", {})):
            badge(base, raw.url("/mcp"), kind, **params)  # the miss fills the cache
            query = "&".join([f"url={quote(raw.url('/mcp'), safe='')}"] + [f"{k}={v}" for k, v in params.items()])
            edge = httpx2.get(f"{base}/badge/mcp{kind}?{query}", headers=given)
            routed = httpx2.get(f"{base}/badge/mcp{kind}?{query}", headers=given | {"Origin": "https://example.org"})
            for name in ("access-control-allow-origin", "access-control-expose-headers"):
                assert edge.headers.get_list(name) == routed.headers.get_list(name)
            assert routed.headers["access-control-allow-origin"] == "*"
            assert edge.content == routed.content and edge.status_code == routed.status_code == 200
            assert [(k, v) for k, v in edge.headers.items() if k not in cors] == [
                (k, v) for k, v in routed.headers.items() if k not in cors
            ]
            assert edge.headers["x-request-id"] == "edge-and-route-1"
            etag = given | {"If-None-Match": edge.headers["etag"]}
            edge_304 = httpx2.get(f"{base}/badge/mcp{kind}?{query}", headers=etag)
            routed_304 = httpx2.get(f"{base}/badge/mcp{kind}?{query}", headers=etag | {"Origin": "https://example.org"})
            assert edge_304.status_code == routed_304.status_code == 304 and edge_304.content == b""
            assert [(k, v) for k, v in edge_304.headers.items() if k not in cors] == [
                (k, v) for k, v in routed_304.headers.items() if k not in cors
            ]
    assert handshakes(raw) == 1


def test_the_access_log_line_of_a_badge_hit_answered_at_the_edge(
    service: Service, raw: RawServer, caplog: pytest.LogCaptureFixture
) -> None:
    import json
    import logging

    raw.routes["/mcp"] = MiniMcp()
    caplog.set_level(logging.INFO, logger="mcp_sonde.access")
    with service() as base:
        badge(base, raw.url("/mcp?key=s3cret"))
        badge(base, raw.url("/mcp?key=s3cret"))
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "mcp_sonde.access"]
    assert [(line["method"], line["path"], line["status"]) for line in lines] == [("GET", "/badge/mcp", 200)] * 2
    assert all(isinstance(line["ms"], float) and line["client"] == "127.0.0.1" for line in lines)
    assert "s3cret" not in caplog.text


STALE_UNREACHABLE: dict[str, object] = {
    "state": "unreachable",
    "message": "unreachable",
    "color": "lightgrey",
    # an hour old, whenever the tests run (a fixed date turned the entry "aged" two days later)
    "modified": formatdate(time.time() - 3600, usegmt=True),
}


def _seed(shared: dict[str, str], url: str, entry: dict[str, object]) -> None:
    """Write a badge cache entry for ``url`` into the shared Redis the service will use."""
    import json

    from app.guard import check_url
    from app.store import RedisStore, key

    async def seed() -> None:
        store = RedisStore(shared["redis_url"], namespace=shared["redis_namespace"])
        target = check_url(url, allow_private=True)
        await store.set(key("badge", target.url), json.dumps(entry).encode(), 3600)
        await store.aclose()

    anyio.run(seed)


@pytest.mark.parametrize(
    "corrupt",
    [{"state": 5}, {"message": ["a"]}, {"modified": "Mon\r\nX-Injected: 1"}, {"fresh_until": "nan"}, {"color": None}],
)
def test_a_corrupted_cache_entry_is_a_miss_probed_again_not_a_500(
    service: Service, raw: RawServer, corrupt: dict[str, object]
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    entry: dict[str, object] = {
        "state": "ok",
        "message": "live",
        "color": "brightgreen",
        "modified": "Mon, 30 Nov 2026 00:00:00 GMT",
        "fresh_until": time.time() + 600,
    }
    _seed(shared, raw.url("/mcp"), entry | corrupt)
    with service(**shared) as base:
        answers = [badge(base, raw.url("/mcp")), badge(base, raw.url("/mcp"))]
    assert [(a.status_code, a.headers["x-badge-state"]) for a in answers] == [(200, "ok"), (200, "ok")]
    assert "x-injected" not in answers[0].headers and handshakes(raw) == 1  # probed once, then cached


def test_repeated_if_none_match_lines_are_one_list_on_both_paths(service: Service, raw: RawServer) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with service() as base:
        etag = badge(base, raw.url("/mcp")).headers["etag"]
        url = f"{base}/badge/mcp?url={quote(raw.url('/mcp'), safe='')}"
        for lines in (
            [("If-None-Match", etag), ("If-None-Match", '"x"')],
            [("If-None-Match", '"x"'), ("If-None-Match", etag)],
        ):
            edge = httpx2.get(url, headers=lines)
            routed = httpx2.get(url, headers=[*lines, ("Origin", "https://example.org")])
            assert edge.status_code == routed.status_code == 304, lines


def test_a_stale_badge_hit_by_many_starts_one_refresh(service: Service, raw: RawServer) -> None:
    inner = MiniMcp()

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> None:
        if request.message.get("method") == "server/discover":
            time.sleep(0.3)
        inner(request, conn)

    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    _seed(shared, raw.url("/mcp"), STALE_UNREACHABLE | {"fresh_until": time.time() - 1})
    with service(**shared) as base:

        async def hits() -> list[str]:
            async with httpx2.AsyncClient(timeout=30) as client:
                url = f"{base}/badge/mcp"
                answers = []
                for _ in range(15):  # 1.5 s of hits: before, during and just after the refresh
                    batch = [client.get(url, params={"url": raw.url("/mcp")}) for _ in range(20)]
                    answers += [r.headers["x-badge-state"] for r in await _gather(batch)]
                    await anyio.sleep(0.1)
                return answers

        states = anyio.run(hits)
    assert states[0] == "unreachable" and states[-1] == "ok"
    assert handshakes(raw) == 1


async def _gather(requests: list[Coroutine[Any, Any, httpx2.Response]]) -> list[httpx2.Response]:
    import asyncio

    return list(await asyncio.gather(*requests))


def test_a_refused_stale_refresh_is_one_log_line_not_a_traceback(
    service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    """The host of a cached badge now resolves to the metadata address: every stale hit is served,
    and the refresh that is refused logs one line with its reason."""
    import ipaddress
    import logging

    from tests.servers.network import FixedResolver

    url = "https://stale.example.com/mcp"
    resolver = FixedResolver({"stale.example.com": [ipaddress.ip_address("169.254.169.254")]})
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    _seed(shared, url, STALE_UNREACHABLE | {"fresh_until": time.time() - 1})
    caplog.set_level(logging.INFO, logger="mcp_sonde")
    with service(resolver=resolver, **shared) as base:
        states = []
        for _ in range(5):
            states.append(badge(base, url).headers["x-badge-state"])
            time.sleep(0.1)
    assert states == ["unreachable"] * 5  # the stale badge is served
    refusals = [r for r in caplog.records if "badge refresh" in r.getMessage()]
    assert refusals and all(r.exc_info is None for r in refusals)
    assert all("address_" in r.getMessage() or "refused" in r.getMessage() for r in refusals), refusals
    assert len(resolver.queries) <= len(refusals)


def test_stale_hits_on_two_instances_make_one_refresh_and_one_lookup(service: Service, raw: RawServer) -> None:
    """200 stale hits spread over two instances sharing Redis: one refresh, one host lookup."""
    import ipaddress

    from tests.servers.network import FixedResolver

    raw.routes["/mcp"] = MiniMcp()
    url = f"http://badge-host.test:{raw.port}/mcp"
    resolver = FixedResolver({"badge-host.test": [ipaddress.ip_address("127.0.0.1")]})
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    _seed(shared, url, STALE_UNREACHABLE | {"fresh_until": time.time() - 1})
    with service(resolver=resolver, **shared) as one, service(resolver=resolver, **shared) as two:

        async def hits() -> list[str]:
            async with httpx2.AsyncClient(timeout=30) as client:
                answers: list[str] = []
                for _ in range(10):
                    batch = [client.get(f"{base}/badge/mcp", params={"url": url}) for base in (one, two) * 10]
                    answers += [r.headers["x-badge-state"] for r in await _gather(batch)]
                    await anyio.sleep(0.05)
                return answers

        states = anyio.run(hits)
        deadline = time.monotonic() + 5
        while badge(one, url).headers["x-badge-state"] != "ok":
            assert time.monotonic() < deadline, "the refresh never landed"
            time.sleep(0.05)
    assert len(states) == 200 and "unreachable" in states[:20]  # the stale badge was served meanwhile
    assert resolver.queries == ["badge-host.test"] and handshakes(raw) == 1


def test_a_result_older_than_twice_its_ttl_shows_its_age_in_grey(service: Service) -> None:
    """A green entry whose refreshes keep failing is never shown green past twice the TTL."""
    import ipaddress

    from tests.servers.network import FixedResolver

    url = "https://aged.example.com/mcp"
    resolver = FixedResolver({"aged.example.com": [ipaddress.ip_address("10.0.0.1")]})  # refused now
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    checked = time.time() - 3 * 600
    entry = {"state": "ok", "message": "live · checked 2026-11-01", "color": "brightgreen", "checked": checked}
    _seed(shared, url, entry | {"modified": "Sun, 01 Nov 2026 00:00:00 GMT", "fresh_until": checked + 600})
    with service(resolver=resolver, badge_ttl_s=600, allow_private=False, **shared) as base:
        svg, endpoint = badge(base, url), badge(base, url, ".json")
    day = time.strftime("%Y-%m-%d", time.gmtime(checked))
    assert svg.status_code == 200 and svg.headers["x-badge-state"] == "aged"
    assert f"last checked {day}" in svg.text and "#939393" in svg.text and "live" not in svg.text
    assert endpoint.json() | {"cacheSeconds": 0} == {
        "schemaVersion": 1,
        "label": "MCP",
        "message": f"last checked {day}",
        "color": "lightgrey",
        "isError": False,
        "cacheSeconds": 0,
    }


def test_last_modified_is_never_later_than_date(service: Service, raw: RawServer) -> None:
    """Neither a fresh probe (the server's Date clock ticks once a second) nor an entry written by
    an instance whose clock runs ahead gives a Last-Modified later than Date."""
    from email.utils import parsedate_to_datetime

    raw.routes["/mcp"] = MiniMcp()
    ahead = f"{raw.url('/mcp')}?ahead=1"
    shared = {"redis_url": shared_redis_url(), "redis_namespace": f"test-{uuid.uuid4().hex[:12]}:"}
    future = time.time() + 3600
    entry = {"state": "ok", "message": "live", "color": "brightgreen", "checked": future}
    _seed(shared, ahead, entry | {"modified": "Mon, 30 Nov 2026 00:00:00 GMT", "fresh_until": future})
    with service(**shared) as base:
        answers = [badge(base, raw.url(f"/mcp?n={n}")) for n in range(5)] + [badge(base, ahead), badge(base, ahead)]
    for answer in answers:
        modified = parsedate_to_datetime(answer.headers["last-modified"])
        assert modified <= parsedate_to_datetime(answer.headers["date"]), answer.headers


def test_importing_the_app_does_not_load_cairo() -> None:
    import subprocess
    import sys

    code = "import sys, app.http.app; print(sorted(m for m in sys.modules if m.startswith(('cairo', 'badges.png'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


#: Make cairocffi fail as its dlopen does on a machine without the system's cairo library.
NO_CAIRO = """
import importlib.abc
class NoCairo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "cairocffi" or name.startswith("cairocffi."):
            raise OSError("no library called \\"cairo-2\\" was found")
        return None
sys.meta_path.insert(0, NoCairo())
"""


def test_without_cairo_serve_starts_and_only_the_png_badge_is_refused(raw: RawServer) -> None:
    from tests.servers.sonde import sonde

    raw.routes["/mcp"] = MiniMcp()
    with sonde("--allow-private", preamble=NO_CAIRO) as served:
        pngs = [httpx2.get(f"{served.base}/badge/mcp.png", params={"url": raw.url("/mcp")}) for _ in range(3)]
        svg = badge(served.base, raw.url("/mcp"))
        shields = badge(served.base, raw.url("/mcp"), ".json")
        health = httpx2.get(f"{served.base}/healthz")
    assert served.returncode == 0
    for png in pngs:
        assert png.status_code == 503 and png.json()["reason"] == "png_unavailable"
    assert svg.status_code == 200 and svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.headers["x-badge-state"] == "ok" and shields.json()["message"].startswith("live")
    assert health.status_code == 200
    said = [r for r in served.records() if "PNG" in r["message"] or "cairo" in r["message"]]
    assert len(said) == 1 and said[0]["level"] == "ERROR" and "OSError" in said[0]["message"], said
    assert handshakes(raw) == 1  # the PNG requests probed nothing


def test_stale_badges_of_slow_names_starve_every_other_badge_refresh(
    service: Service, raw: RawServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Policy (README, badges): a stale badge is served while one refresh runs, and a client holds
    at most CLIENT_SHARE lookup threads. Every refresh runs as one client, ``badge-refresh``
    (app/http/badges/route.py REFRESH_CLIENT), so all refreshes of all badges share one client's
    share. Anyone whose badges went stale and whose names now resolve slowly (their own DNS)
    views those badges (cached hits: never limited) and holds that whole share; every other
    badge's refresh is then refused (client_lookups_busy), tried again only every 20 s, and the
    badges turn grey ``aged`` after 2 TTLs. Nothing is charged and no limit applies."""
    import logging

    import app.guard.resolver as resolver_module
    from tests.servers.raw_mcp import MiniMcp

    shares = LookupShares(total=8, paid_reserve=2, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    real = socket.getaddrinfo
    slow, release = threading.Event(), threading.Event()

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".flip.test"):  # the attacker's names: fast at first, then hanging
            if slow.is_set():
                release.wait(20)
                raise socket.gaierror(socket.EAI_AGAIN, "timed out")
            return loopback_addrinfo(port)
        if host.endswith(".fast.test"):
            return loopback_addrinfo(port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    raw.routes["/mcp"] = MiniMcp()
    victim = f"http://victim.fast.test:{raw.port}/mcp"
    attacker = [f"http://a{n}.flip.test:{raw.port}/mcp" for n in range(2)]
    caplog.set_level(logging.INFO, logger="mcp_sonde.badge")
    try:
        with service(badge_ttl_s=10, dns_timeout_s=0.5, badge_rate_limit="100/minute") as base:

            def view(url: str) -> str:
                return httpx2.get(f"{base}/badge/mcp", params={"url": url}, timeout=30).headers["x-badge-state"]

            assert [view(u) for u in [victim, *attacker]] == ["ok"] * 3
            time.sleep(10.5)  # every badge is stale now
            slow.set()
            for url in attacker:
                view(url)  # a cached hit: starts a refresh whose lookup hangs
            time.sleep(0.3)
            view(victim)  # starts the victim's refresh
            time.sleep(1.5)
    finally:
        release.set()
    refusals = [r.getMessage() for r in caplog.records if "badge refresh" in r.getMessage()]
    assert not any("client_lookups_busy" in m for m in refusals), refusals


def test_badge_miss_behind_a_full_host_queue_answers_within_the_light_budget(service: Service, raw: RawServer) -> None:
    """Misses for many paths of one silent host: each answers in about the light-probe budget, not
    the host queue's budget plus a probe (``busy`` while queued; the probe fills the cache later)."""

    def silent(request: object, sock: socket.socket) -> bool:
        time.sleep(4)
        return True

    for n in range(8):
        raw.routes[f"/s{n}"] = silent
    elapsed: list[tuple[float, str]] = []

    async def one(base: str, n: int) -> None:
        async with httpx2.AsyncClient(timeout=30) as client:
            started = time.monotonic()
            url = quote(raw.url(f"/s{n}"), safe="")
            response = await client.get(f"{base}/badge/mcp?url={url}")
            elapsed.append((time.monotonic() - started, response.headers["x-badge-state"]))

    async def all_of(base: str) -> None:
        async with anyio.create_task_group() as group:
            for n in range(8):
                group.start_soon(one, base, n)

    with service(light_probe_timeout_s=1.0, queue_budget_s=10.0, host_start_interval_s=1.0) as base:
        anyio.run(all_of, base)
    assert len(elapsed) == 8
    assert max(seconds for seconds, _state in elapsed) < 2.5, elapsed  # the queue alone could hold one for 10 s
    assert {state for _s, state in elapsed} <= {"busy", "timeout", "unreachable"}


def test_badge_style_of_any_length_is_drawn_as_flat_and_shares_one_drawing(service: Service) -> None:
    from app.http.badges import drawing

    drawing.drawn.cache_clear()
    with service() as base:
        flat = httpx2.get(f"{base}/badge/mcp?url=ftp%3A%2F%2Fx%2F")
        answers = [httpx2.get(f"{base}/badge/mcp?url=ftp%3A%2F%2Fx%2F&style={n:08d}{'x' * 20_000}") for n in range(30)]
    assert all(a.status_code == 200 and a.content == flat.content for a in answers)
    assert drawing.drawn.cache_info().currsize == 1  # unknown styles are not cache keys


def test_badge_if_none_match_uses_weak_comparison_and_lists() -> None:
    from app.http.badges.drawing import not_modified

    etag = '"abc"'
    assert not_modified('"abc"', etag) and not_modified('W/"abc"', etag)
    assert not_modified('"x", W/"abc"', etag) and not_modified(" * ", etag)
    assert not not_modified('"abcd"', etag) and not not_modified(None, etag) and not not_modified('"x"', etag)
