"""Singleton and list fields that arrive on several lines (RFC 9110 section 5.3)."""

from __future__ import annotations

import httpx2

from app.net.fields import Conflict, conflicted, single_value, singleton


def test_a_singleton_on_two_lines_with_one_value_is_that_value() -> None:
    headers = httpx2.Headers([("Mcp-Session-Id", "abc"), ("mcp-session-id", " abc\t")])
    assert headers.get("mcp-session-id") == "abc,  abc\t"  # what combining the lines would make
    assert singleton(headers, "mcp-session-id") == "abc"
    assert single_value(headers, "Mcp-Session-Id") == "abc" and not conflicted(headers, "mcp-session-id")


def test_a_singleton_on_two_lines_with_different_values_is_a_conflict() -> None:
    headers = httpx2.Headers([("Location", "https://a.example/"), ("Location", "https://b.example/")])
    value = singleton(headers, "location")
    assert isinstance(value, Conflict) and value.values == ("https://a.example/", "https://b.example/")
    assert single_value(headers, "location") is None and conflicted(headers, "location")


def test_an_http_date_on_one_line_keeps_its_comma() -> None:
    headers = httpx2.Headers([("Retry-After", "Fri, 31 Dec 1999 23:59:59 GMT")] * 2)
    assert singleton(headers, "retry-after") == "Fri, 31 Dec 1999 23:59:59 GMT"


def test_an_absent_field_is_none() -> None:
    headers = httpx2.Headers([("WWW-Authenticate", 'Basic realm="a, b"'), ("www-authenticate", "Bearer")])
    assert singleton(headers, "content-type") is None and not conflicted(headers, "content-type")
