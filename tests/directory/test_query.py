"""A search's parameters: each refusal has its reason key and names its parameter."""

from __future__ import annotations

import pytest

from app.directory.query import MAX_LIMIT, InvalidSearch, parse


@pytest.mark.parametrize(
    ("params", "reason", "parameter"),
    [
        ({"page": "2"}, "invalid_query", "page"),
        ({"q": "x" * 201}, "invalid_search", "q"),
        ({"q": "a b c d e f g h i"}, "invalid_search", "q"),
        ({"category": "gambling"}, "invalid_filter", "category"),
        ({"status": "up"}, "invalid_filter", "status"),
        ({"protocol_version": "latest"}, "invalid_filter", "protocol_version"),
        ({"transport": "stdio"}, "invalid_filter", "transport"),
        ({"auth": "maybe"}, "invalid_filter", "auth"),
        ({"changed_within": "7"}, "invalid_filter", "changed_within"),
        ({"changed_within": "0d"}, "invalid_filter", "changed_within"),
        ({"changed_within": "366d"}, "invalid_filter", "changed_within"),
        ({"changed_within": "７d"}, "invalid_filter", "changed_within"),
        ({"sort": "random"}, "invalid_sort", "sort"),
        ({"limit": "0"}, "invalid_query", "limit"),
        ({"limit": str(MAX_LIMIT + 1)}, "invalid_query", "limit"),
        ({"limit": "+5"}, "invalid_query", "limit"),
        ({"cursor": "garbage"}, "invalid_cursor", "cursor"),
        ({"cursor": "e30.AAAA"}, "invalid_cursor", "cursor"),
    ],
)
def test_a_bad_parameter_is_refused_with_its_reason(params: dict[str, str], reason: str, parameter: str) -> None:
    with pytest.raises(InvalidSearch) as refused:
        parse(params)
    assert (refused.value.reason, refused.value.parameter) == (reason, parameter)


def test_a_parameter_given_twice_is_refused() -> None:
    with pytest.raises(InvalidSearch) as refused:
        parse({"q": "a"}, names=["q", "q"])
    assert refused.value.reason == "invalid_query"


def test_defaults_and_normalised_words() -> None:
    search = parse({"q": "  Weather  weather FORECAST ", "changed_within": "30d", "limit": "100"})
    assert (search.words, search.sort, search.limit, search.changed_within_days) == (
        ("weather", "forecast"),
        "name",
        100,
        30,
    )
    assert search.filters() == {"q": "weather forecast", "changed_within": "30d"}


@pytest.mark.parametrize("token", ["", " ", ".", "e30.", ".AAAA", "é.AAAA", "a" * 5000])
def test_an_empty_or_malformed_cursor_is_refused_not_read_as_the_first_page(token: str) -> None:
    with pytest.raises(InvalidSearch) as refused:
        parse({"cursor": token})
    assert (refused.value.reason, refused.value.parameter) == ("invalid_cursor", "cursor")
