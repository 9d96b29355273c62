"""The opt-out list: what an item covers, and the list in the database on both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from app.optout import OptOut, OptOutInvalid, OptOutList, matches, normalise, opted_out

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ("Example.COM.", ("host", "example.com")),
        ("  mcp.example.com ", ("host", "mcp.example.com")),
        ("bücher.example", ("host", "xn--bcher-kva.example")),
        ("HTTPS://Example.com:443/mcp?key=secret", ("url", "https://example.com/mcp")),
        ("https://example.com", ("url", "https://example.com/")),
    ],
)
def test_items_are_normalised_as_the_guard_does(item: str, expected: tuple[str, str]) -> None:
    assert normalise(item) == expected


@pytest.mark.parametrize("item", ["", "example.com/mcp", "example.com:8443", "user@example.com", "a..b", "x" * 3000])
def test_an_item_that_is_neither_a_host_nor_a_url_is_refused(item: str) -> None:
    with pytest.raises(OptOutInvalid) as caught:
        normalise(item)
    assert caught.value.reason == "optout_invalid"


NOW = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("url", "covered"),
    [
        ("https://example.com/mcp", True),  # the host itself
        ("https://mcp.example.com/x", True),  # a subdomain
        ("https://a.b.EXAMPLE.com./x", True),
        ("https://notexample.com/mcp", False),  # not a subdomain: a different name
        ("https://example.com.evil.test/mcp", False),
        ("https://other.test/mcp", True),  # the URL item, exactly (its query aside)
        ("https://other.test/mcp?k=1", True),
        ("https://other.test/mcp/more", False),
        ("https://www.other.test/mcp", False),
    ],
)
def test_a_host_covers_its_subdomains_and_a_url_only_itself(url: str, covered: bool) -> None:
    items = [OptOut("host", "example.com", NOW), OptOut("url", "https://other.test/mcp", NOW)]
    assert matches(url, items) is covered


async def test_the_list_in_the_database(engine: AsyncEngine) -> None:
    listed = OptOutList(engine)
    made, new = await listed.add("Example.com")
    assert new and made.kind == "host" and made.value == "example.com"
    assert (await listed.add("example.com."))[1] is False  # (the same host, once)
    await listed.add("https://other.test/mcp")
    assert [(i.kind, i.value) for i in await listed.items()] == [
        ("host", "example.com"),
        ("url", "https://other.test/mcp"),
    ]
    assert await opted_out(engine, "https://mcp.example.com/mcp")
    assert await opted_out(listed, "https://other.test/mcp")
    assert not await opted_out(engine, "https://elsewhere.test/mcp")
    assert await listed.remove("EXAMPLE.com") and not await listed.remove("example.com")
    assert not await opted_out(engine, "https://mcp.example.com/mcp")


@pytest.mark.parametrize(
    "url",
    [
        "https://example.com/x/../mcp",  # (the HTTP client sends /mcp: dot segments are removed before sending)
        "https://example.com/./mcp",
        "https://example.com/../../mcp",
        "https://example.com/%6Dcp",  # (%6D is "m": the same path, RFC 3986 section 6.2.2.2)
        "https://example.com/%6dcp",
        "https://Example.COM.:443/a/./../mcp#fragment",
        "https://example.com/mcp/",  # (a trailing slash, empty segments: routed alike by servers)
        "https://example.com//mcp",
        "https://example.com/mcp//",
        "https://example.com/mcp/.",
        "https://EXAMPLE.com:443//./mcp/?q=1",
    ],
)
def test_a_url_opt_out_covers_every_spelling_of_its_path(url: str) -> None:
    items = [OptOut(*normalise("https://example.com/mcp"), NOW)]
    assert matches(url, items)
    assert not matches("https://example.com/mcp/other", items) and not matches("https://example.com/%2Fmcp", items)


def test_a_url_item_is_kept_with_its_path_in_normal_form() -> None:
    assert normalise("https://example.com/a/b/../%6Dcp") == ("url", "https://example.com/a/mcp")


def test_a_url_opt_out_given_with_a_trailing_slash_covers_the_path_without_it() -> None:
    items = [OptOut(*normalise("https://example.com//mcp/"), NOW)]
    assert items[0].value == "https://example.com/mcp"
    assert matches("https://example.com/mcp", items) and not matches("https://example.com/mcpx", items)
    assert normalise("https://example.com/") == ("url", "https://example.com/")


@pytest.mark.parametrize("item", ["com", "CO.UK.", "github.io", "xn--p1ai"])
def test_an_opt_out_of_a_public_suffix_is_refused(item: str) -> None:
    with pytest.raises(OptOutInvalid) as caught:
        normalise(item)
    assert caught.value.reason == "optout_invalid" and "public suffix" in caught.value.message
    assert normalise(f"https://{item.rstrip('.')}/mcp")[0] == "url"  # (one endpoint on it is taken)
    assert normalise(f"someone.{item.rstrip('.')}")[0] == "host"
