"""The badge fast path's query parsing (app/http/badges/hits.py)."""

from __future__ import annotations

from app.http.badges import hits


def test_a_long_or_hostile_query_string_is_never_remembered() -> None:
    hits._remembered.cache_clear()
    hostile = b"url=x&" + b"&".join(b"i.%d=" % n for n in range(10_000))  # (about 64 kB of distinct fields)
    assert hits._query(hostile) == {"url": "x"}
    assert hits._remembered.cache_info().currsize == 0


def test_a_short_query_keeps_only_the_fields_a_badge_reads() -> None:
    hits._remembered.cache_clear()
    query = hits._query(b"url=https%3A%2F%2Fa.example%2Fmcp&style=flat&junk=1&url=https%3A%2F%2Fb.example%2Fmcp")
    assert dict(query) == {"url": "https://b.example/mcp", "style": "flat"}  # (the last of a repeated name)
    assert (
        hits._query(b"url=https%3A%2F%2Fa.example%2Fmcp&style=flat&junk=1&url=https%3A%2F%2Fb.example%2Fmcp") is query
    )
    assert hits._remembered.cache_info().currsize == 1
