"""The category rule: a table of outcomes with their reasons, word splitting and the YAML."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest
import yaml

from app.suite import category as category_module
from app.suite.category import MAX_NAME_CHARS, MAX_NAMES, Category, categorise, parse_rules, rules, words

TOPICS = {"travel", "food_and_delivery", "real_estate", "health", "maps_and_transport", "finance", "shopping", "media"}
OTHER = ["echo", "ping", "now", "add_numbers", "random_word", "sum", "upper_case", "get_time", "whoami"]


def _others(count: int) -> list[str]:
    return [f"{OTHER[index % len(OTHER)]}_{index}" for index in range(count)]


# (names, expected (topic, keywords, tools, total) or None, why)
CASES: list[tuple[list[str], tuple[str, tuple[str, ...], int, int] | None, str]] = [
    (
        ["search_flights", "book_hotel", "list_airports", *_others(9)],
        ("travel", ("airport", "flight", "hotel"), 3, 12),
        "exactly three tools and exactly a quarter (3 of 12): assigned",
    ),
    (
        ["search_flights", "book_hotel", "list_airports", *_others(10)],
        None,
        "three tools but under a quarter (3 of 13): none",
    ),
    (
        ["get_flight", "get_hotel"],
        None,
        "two tools and all of them: under the minimum of three",
    ),
    (
        ["flight_status", "hotel_rooms", "trip_plan", "cruise_deals", "stock_quote", "bank_rates", "echo", "ping"],
        ("travel", ("cruise", "flight", "hotel", "trip"), 4, 8),
        "4 against 2 is twice as many: assigned (cruise_deals also names shopping, 1 tool)",
    ),
    (
        ["flight_status", "hotel_rooms", "trip_plan", "tour_guide", "stock_quote", "bank_rates", "crypto_price"],
        None,
        "4 against 3 is not twice as many: none",
    ),
    (
        ["get_flight", "get_hotel", "find_airport", "get_stock", "get_bank", "get_loan"],
        None,
        "a tie of 3 against 3: none",
    ),
    (
        ["search", "get_data", "list_tools", "fetch_info", "create_item", "update_by_id", "delete", "query"],
        None,
        "only generic words: no topic at all",
    ),
    (
        ["search_flights", "search_hotels", "search_airports", "search", "search_data", "search_info"],
        ("travel", ("airport", "flight", "hotel"), 3, 6),
        "generic 'search' dropped, the keywords still count, the generic tools count in the total",
    ),
    (
        ["list_buses", "list_trains", "list_ferries_x", "maps", "routes"],
        ("maps_and_transport", ("bus", "map", "route", "train"), 4, 5),
        "plurals: buses (+es), trains, maps, routes (+s); 'ferries' is not a simple plural",
    ),
    (
        ["searchFlights", "bookHotelRoom", "getAirportInfo", "HTTPClient"],
        ("travel", ("airport", "flight", "hotel"), 3, 4),
        "camelCase and acronyms split: HTTPClient is http + client",
    ),
    (
        ["FLIGHT_STATUS", "hotel-booking", "airport.lookup", "visa check", "flight2go"],
        ("travel", ("airport", "flight", "hotel", "visa"), 5, 5),
        "upper case, '-', '.', spaces and digits separate words",
    ),
    (
        ["mapping", "mapper", "remap", "hotelier", "flighty"],
        None,
        "keywords match whole words only",
    ),
    (
        [],
        None,
        "no tools: none",
    ),
    (
        ["get_property_details", "list_properties", "search_rentals", "mortgage_calculator"],
        ("real_estate", ("mortgage", "properties", "property", "rental"), 4, 4),
        "irregular plural 'properties' is its own keyword; mortgage also names finance (1 tool)",
    ),
    (
        ["find_restaurants", "get_menu", "order_pizza", "track_delivery", "hotel_restaurant"],
        ("food_and_delivery", ("delivery", "menu", "pizza", "restaurant"), 5, 5),
        "a tool may name two topics and counts for each (hotel_restaurant: food 5, travel 1)",
    ),
    (
        ["search_patients", "get_medication", "list_symptoms", "book_appointment"],
        ("health", ("medication", "patient", "symptom"), 3, 4),
        "health",
    ),
    (
        ["get_stock_price", "get_crypto_price", "list_transactions", "get_balance"],
        ("finance", ("crypto", "stock", "transaction"), 3, 4),
        "finance",
    ),
    (
        ["search_products", "add_to_cart", "checkout", "apply_coupon"],
        ("shopping", ("cart", "checkout", "coupon", "product"), 4, 4),
        "shopping",
    ),
    (
        ["search_movies", "get_tv_show", "list_podcast_episodes", "play_song"],
        ("media", ("episode", "movie", "podcast", "song", "tv"), 4, 4),
        "media",
    ),
    (
        ["ｓｅａｒｃｈ＿ｆｌｉｇｈｔｓ", "ｈｏｔｅｌ", "ﬂight_info", "airport"],
        None,
        "no compatibility folding: full-width letters and the fl ligature are other words (1 of 4)",
    ),
    (
        ["flight\u202e", "\x00hotel\x1b[31m", "airport\u200b\u200b", "<script>alert(1)</script>"],
        ("travel", ("airport", "flight", "hotel"), 3, 4),
        "hostile characters are separators, nothing more",
    ),
]


@pytest.mark.parametrize(("names", "expected", "why"), CASES, ids=[case[2] for case in CASES])
def test_rule_table(names: list[str], expected: tuple[str, tuple[str, ...], int, int] | None, why: str) -> None:
    result = categorise(names)
    if expected is None:
        assert result is None, why
    else:
        topic, keywords, tools, total = expected
        assert result == Category(topic=topic, words=keywords, tools=tools, total=total), why


def test_table_is_large_enough() -> None:
    assert len(CASES) >= 15


def test_every_topic_can_be_assigned() -> None:
    assigned = {case[1][0] for case in CASES if case[1] is not None}
    assert assigned == TOPICS


# --- Words -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("search_flights", ["search", "flights"]),
        ("searchFlights", ["search", "flights"]),
        ("SearchFlights", ["search", "flights"]),
        ("HTTPServer", ["http", "server"]),
        ("getURLForHotel", ["get", "url", "for", "hotel"]),
        ("flight2go", ["flight", "go"]),
        ("a.b-c d_e", ["a", "b", "c", "d", "e"]),
        ("réserver-hôtel", ["réserver", "hôtel"]),
        ("", []),
        ("123_456", []),
        ("___", []),
    ],
)
def test_words(name: str, expected: list[str]) -> None:
    assert words(name) == expected


def test_words_read_only_the_first_128_characters() -> None:
    assert words("x" * (MAX_NAME_CHARS - 1) + "_flight") == ["x" * (MAX_NAME_CHARS - 1)]
    assert categorise(["x" * MAX_NAME_CHARS + "_flight"] * 3) is None


# --- Hostile input ---------------------------------------------------------------------------


def test_only_the_first_thousand_names_are_read() -> None:
    names = _others(MAX_NAMES - 1) + ["flight", "hotel", "airport"] * 1000
    result = categorise(names)
    assert result is None  # 1 travel tool among the 1,000 read
    assert categorise(["flight"] * 5000) == Category(topic="travel", words=("flight",), tools=1000, total=1000)


def test_huge_names_and_lists_are_cheap() -> None:
    started = time.monotonic()
    assert categorise(["a" * 10_000_000, "Ab" * 1_000_000, "\u0301" * 1_000_000, *["flight"] * 1_000_000]) is not None
    assert time.monotonic() - started < 5


def test_names_that_are_not_strings_count_but_name_nothing() -> None:
    names: list[Any] = [None, 7, b"flight", "flight", "hotel", "airport"]
    assert categorise(names) == Category(topic="travel", words=("airport", "flight", "hotel"), tools=3, total=6)


def test_a_generator_is_read_lazily() -> None:
    def endless() -> Any:
        while True:
            yield "hotel"

    assert categorise(endless()) == Category(topic="travel", words=("hotel",), tools=1000, total=1000)


# --- The YAML --------------------------------------------------------------------------------


def _document() -> dict[str, Any]:
    from importlib import resources

    text = resources.files("app.suite").joinpath("categories.yaml").read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    assert isinstance(document, dict)
    return document


def test_packaged_lists() -> None:
    loaded = rules()
    assert loaded is rules()  # loaded once
    assert isinstance(loaded.version, int) and loaded.version >= 1
    assert set(loaded.topics) == TOPICS
    for word in ("search", "get", "list", "create", "update", "delete", "fetch", "find", "query", "set", "add"):
        assert word in loaded.generic
    for word in ("remove", "tool", "data", "info", "by", "id", "on"):
        assert word in loaded.generic


def test_packaged_keywords_are_single_words_and_never_generic() -> None:
    document = _document()
    generic = set(document["generic"])
    for topic, keywords in document["topics"].items():
        assert keywords == sorted(keywords), topic
        assert len(keywords) == len(set(keywords)), topic
        for keyword in keywords:
            assert words(keyword) == [keyword]
            assert keyword not in generic


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("version"), "exactly the keys"),
        (lambda d: d.update(version="1"), "version"),
        (lambda d: d.update(version=True), "version"),
        (lambda d: d["generic"].append(True), "not one lower-case word"),  # an unquoted YAML `on`
        (lambda d: d["topics"]["travel"].append("real_estate"), "not one lower-case word"),
        (lambda d: d["topics"]["travel"].append("Flight"), "not one lower-case word"),
        (lambda d: d["topics"]["travel"].append("search"), "both generic"),
        (lambda d: d["topics"].update({"Bad Topic": ["x"]}), "bad topic"),
        (lambda d: d["topics"].update(media=[]), "non-empty list"),
        (lambda d: d.update(topics={}), "non-empty mapping"),
    ],
)
def test_malformed_lists_are_refused(change: Any, message: str) -> None:
    document = copy.deepcopy(_document())
    change(document)
    with pytest.raises(ValueError, match=message):
        parse_rules(document)


def test_other_lists_can_be_used() -> None:
    custom = parse_rules({"version": 2, "generic": ["get"], "topics": {"weather": ["forecast", "rain"]}})
    names = ["get_forecast", "rain_today", "forecasts_week", "echo"]
    assert categorise(names, using=custom) == Category(topic="weather", words=("forecast", "rain"), tools=3, total=4)
    assert categorise(names) is None


def test_module_constants() -> None:
    assert (category_module.MIN_TOOLS, category_module.DOMINANCE, category_module.MIN_SHARE_DENOMINATOR) == (3, 2, 4)
    assert (MAX_NAMES, MAX_NAME_CHARS) == (1000, 128)
