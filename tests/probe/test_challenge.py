"""The strict reading of ``WWW-Authenticate`` (RFC 9110 sections 5.6, 11.2, 11.6.1; RFC 6750; RFC 9728)."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.probe.challenge import (
    ChallengeItem,
    challenge_params,
    judge_www_authenticate,
    parse_www_authenticate,
)

PROBLEMS = {
    "too_long",
    "bad_character",
    "empty",
    "empty_list_element",
    "bad_scheme",
    "bad_whitespace",
    "param_before_scheme",
    "param_after_token68",
    "param_without_value",
    "bad_param_value",
    "unterminated_quoted_string",
    "bad_token68",
    "missing_comma",
    "trailing_garbage",
    "duplicate_param",
    "realm_not_quoted",
    "resource_metadata_not_url",
    "bearer_without_params",
    "bearer_token68",
    "bearer_scope_invalid",
    "bearer_error_invalid",
    "bearer_error_description_invalid",
    "bearer_error_uri_invalid",
}
PRM = "https://resource.example.com/.well-known/oauth-protected-resource"


def c(scheme: str, token68: str | None = None, **params: str) -> ChallengeItem:
    return ChallengeItem(scheme=scheme, token68=token68, params=params)


TABLE: list[tuple[str, str, bool, list[str], list[ChallengeItem]]] = [
    # RFC 9110 section 11.6.1's own example: two challenges, an escaped quote.
    (
        "rfc9110-example",
        'Newauth realm="apps", type=1, title="Login to \\"apps\\"", Basic realm="simple"',
        True,
        [],
        [c("Newauth", realm="apps", type="1", title='Login to "apps"'), c("Basic", realm="simple")],
    ),
    ("rfc6750-realm", 'Bearer realm="example"', True, [], [c("Bearer", realm="example")]),
    (
        "rfc6750-expired",
        'Bearer realm="example", error="invalid_token", error_description="The access token expired"',
        True,
        [],
        [c("Bearer", realm="example", error="invalid_token", error_description="The access token expired")],
    ),
    ("rfc6750-scope", 'Bearer scope="openid profile email"', True, [], [c("Bearer", scope="openid profile email")]),
    (
        "rfc6750-scope-quoted-comma",
        'Bearer scope="urn:example:channel=HBO&urn:example:rating=G,PG-13"',
        True,
        [],
        [c("Bearer", scope="urn:example:channel=HBO&urn:example:rating=G,PG-13")],
    ),
    ("rfc9728-example", f'Bearer resource_metadata="{PRM}"', True, [], [c("Bearer", resource_metadata=PRM)]),
    (
        "several-challenges",
        f'Basic realm="a", Bearer realm="b", error="invalid_token", resource_metadata="{PRM}"',
        True,
        [],
        [c("Basic", realm="a"), c("Bearer", realm="b", error="invalid_token", resource_metadata=PRM)],
    ),
    (
        "dpop-with-metadata",
        f'DPoP algs="ES256 PS256", resource_metadata="{PRM}"',
        True,
        [],
        [c("DPoP", algs="ES256 PS256", resource_metadata=PRM)],
    ),
    ("token68", "Negotiate abc123==", True, [], [c("Negotiate", "abc123==")]),
    ("token68-base64-chars", "Negotiate YII+/w==", True, [], [c("Negotiate", "YII+/w==")]),
    (
        "token68-then-challenge",
        'Negotiate abc123==, Basic realm="x"',
        True,
        [],
        [c("Negotiate", "abc123=="), c("Basic", realm="x")],
    ),
    (
        "quoted-commas",
        'Basic realm="a, b", Bearer realm="c,d"',
        True,
        [],
        [c("Basic", realm="a, b"), c("Bearer", realm="c,d")],
    ),
    ("escaped-quotes", 'Newauth title="say \\"hi\\", \\\\ ok"', True, [], [c("Newauth", title='say "hi", \\ ok')]),
    (
        "ows-around-commas",
        'Basic realm="a" ,\tBearer realm="b"',
        True,
        [],
        [c("Basic", realm="a"), c("Bearer", realm="b")],
    ),
    ("lower-case-scheme", 'bearer realm="x"', True, [], [c("bearer", realm="x")]),
    ("upper-case-scheme", 'BEARER realm="x"', True, [], [c("BEARER", realm="x")]),
    ("mixed-case-bearer-rules", 'bEaReR scope="a  b"', False, ["bearer_scope_invalid"], [c("bEaReR", scope="a  b")]),
    ("upper-case-param-name", 'Bearer REALM="x"', True, [], [c("Bearer", realm="x")]),
    ("unknown-error-code", 'Bearer error="use_dpop_nonce"', True, [], [c("Bearer", error="use_dpop_nonce")]),
    (
        "http-metadata-is-for-the-guard",
        'Bearer resource_metadata="http://x.example/prm"',
        True,
        [],
        [c("Bearer", resource_metadata="http://x.example/prm")],
    ),
    (
        "error-uri",
        'Bearer error_uri="https://example.com/e"',
        True,
        [],
        [c("Bearer", error_uri="https://example.com/e")],
    ),
    ("non-ascii-in-quotes", 'Basic realm="café"', True, [], [c("Basic", realm="café")]),
    ("basic-token68-by-the-grammar", "Basic realm=", True, [], [c("Basic", "realm=")]),
    ("empty-list-elements", ', ,Bearer realm="x"', False, ["empty_list_element"], [c("Bearer", realm="x")]),
    ("trailing-comma", 'Bearer realm="x",', False, ["empty_list_element"], [c("Bearer", realm="x")]),
    ("param-before-scheme", 'realm="x", Bearer realm="y"', False, ["param_before_scheme"], [c("Bearer", realm="y")]),
    ("empty-token-value", "Bearer realm=", False, ["param_without_value"], [c("Bearer")]),
    ("value-then-comma", 'Bearer realm=, scope="a"', False, ["param_without_value"], [c("Bearer", scope="a")]),
    (
        "missing-comma",
        'Bearer realm="a" error="x"',
        False,
        ["missing_comma"],
        [c("Bearer", realm="a", error="x")],
    ),
    (
        "missing-comma-between-challenges",
        'Basic realm="a" Bearer realm="b"',
        False,
        ["missing_comma"],
        [c("Basic", realm="a"), c("Bearer", realm="b")],
    ),
    ("duplicate-param", 'Bearer realm="a", REALM="b"', False, ["duplicate_param"], [c("Bearer", realm="a")]),
    ("duplicate-scope", 'Bearer scope="a", scope="b"', False, ["duplicate_param"], [c("Bearer", scope="a")]),
    (
        "scope-with-quote",
        'Bearer scope="read\\"write"',
        False,
        ["bearer_scope_invalid"],
        [c("Bearer", scope='read"write')],
    ),
    ("scope-with-backslash", 'Bearer scope="a\\\\b"', False, ["bearer_scope_invalid"], [c("Bearer", scope="a\\b")]),
    ("scope-empty", 'Bearer scope=""', False, ["bearer_scope_invalid"], [c("Bearer", scope="")]),
    ("scope-leading-space", 'Bearer scope=" a"', False, ["bearer_scope_invalid"], [c("Bearer", scope="a")]),
    (
        "scope-non-ascii",
        'Bearer scope="lesen schreiben→"',
        False,
        ["bearer_scope_invalid"],
        [c("Bearer", scope="lesen schreiben→")],
    ),
    (
        "error-with-backslash",
        'Bearer error="bad\\\\one"',
        False,
        ["bearer_error_invalid"],
        [c("Bearer", error="bad\\one")],
    ),
    (
        "error-description-with-quote",
        'Bearer error="invalid_token", error_description="The \\"token\\" expired"',
        False,
        ["bearer_error_description_invalid"],
        [c("Bearer", error="invalid_token", error_description='The "token" expired')],
    ),
    (
        "error-uri-relative",
        'Bearer error_uri="/errors/1"',
        False,
        ["bearer_error_uri_invalid"],
        [c("Bearer", error_uri="/errors/1")],
    ),
    ("bare-bearer", "Bearer", False, ["bearer_without_params"], [c("Bearer")]),
    ("bearer-token68", "Bearer mF_9.B5f-4.1JqM", False, ["bearer_token68"], [c("Bearer", "mF_9.B5f-4.1JqM")]),
    ("bearer-token68-padded", "Bearer abc==", False, ["bearer_token68"], [c("Bearer", "abc==")]),
    ("realm-as-token", "Bearer realm=mcp", False, ["realm_not_quoted"], [c("Bearer", realm="mcp")]),
    (
        "unquoted-url",
        "Bearer resource_metadata=https://x.example/prm",
        False,
        ["bad_param_value"],
        [c("Bearer", resource_metadata="https://x.example/prm")],
    ),
    (
        "metadata-relative",
        'Bearer resource_metadata="/prm"',
        False,
        ["resource_metadata_not_url"],
        [c("Bearer", resource_metadata="/prm")],
    ),
    (
        "metadata-with-space",
        'Bearer resource_metadata="https://x/a b"',
        False,
        ["resource_metadata_not_url"],
        [c("Bearer", resource_metadata="https://x/a b")],
    ),
    (
        "bws-after-equals",
        f'Bearer resource_metadata= "{PRM}"',
        False,
        ["bad_whitespace"],
        [c("Bearer", resource_metadata=PRM)],
    ),
    ("bws-before-equals", 'Bearer realm ="x"', False, ["bad_whitespace"], [c("Bearer", realm="x")]),
    ("tab-after-scheme", 'Bearer\trealm="x"', False, ["bad_whitespace"], [c("Bearer", realm="x")]),
    (
        "unterminated",
        'Bearer realm="x, error=y',
        False,
        ["unterminated_quoted_string"],
        [c("Bearer", realm="x, error=y")],
    ),
    (
        "bad-token68",
        'Negotiate abc@def, Basic realm="x"',
        False,
        ["bad_token68"],
        [c("Negotiate"), c("Basic", realm="x")],
    ),
    ("param-after-token68", 'Negotiate abc==, realm="x"', False, ["param_after_token68"], [c("Negotiate", "abc==")]),
    ("bad-scheme", '"quoted", Bearer realm="x"', False, ["bad_scheme"], [c("Bearer", realm="x")]),
    (
        "trailing-garbage",
        'Basic realm="a";x, Bearer realm="b"',
        False,
        ["trailing_garbage"],
        [c("Basic", realm="a"), c("Bearer", realm="b")],
    ),
    ("control-character", 'Bearer realm="a\x00b"', False, ["bad_character"], [c("Bearer", realm="ab")]),
    ("empty", "", False, ["empty"], []),
    ("blank", " \t ", False, ["empty"], []),
    ("only-commas", ",,,", False, ["empty_list_element", "empty"], []),
]


@pytest.mark.parametrize(
    ("header", "well_formed", "problems", "challenges"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE]
)
def test_grammar_table(header: str, well_formed: bool, problems: list[str], challenges: list[ChallengeItem]) -> None:
    verdict = judge_www_authenticate(header)
    assert (verdict.well_formed, verdict.problems, verdict.challenges) == (well_formed, problems, challenges)
    assert set(problems) <= PROBLEMS


def test_the_table_is_wide() -> None:
    assert len(TABLE) >= 30
    assert len({t[0] for t in TABLE}) == len(TABLE)


def test_cut_at_2048_characters() -> None:
    verdict = judge_www_authenticate('Bearer realm="' + "x" * 3000 + '"')
    assert verdict.problems == ["too_long", "unterminated_quoted_string"]
    assert len(verdict.challenges[0].params["realm"]) <= 512


def test_at_most_8_challenges_and_16_params() -> None:
    verdict = judge_www_authenticate(", ".join(f's{i} realm="r"' for i in range(12)))
    assert verdict.well_formed and [item.scheme for item in verdict.challenges] == [f"s{i}" for i in range(8)]
    verdict = judge_www_authenticate("Newauth " + ", ".join(f'p{i}="v"' for i in range(20)))
    assert verdict.well_formed and list(verdict.challenges[0].params) == [f"p{i}" for i in range(16)]
    # The checks still cover what is not reported.
    assert judge_www_authenticate("A " + ", ".join(f"p{i}=v" for i in range(20)) + ", realm=x").problems == [
        "realm_not_quoted"
    ]


def test_parse_www_authenticate_carries_the_verdict() -> None:
    header = f'Basic realm="legacy", Bearer realm="mcp", error="invalid_token", resource_metadata="{PRM}"'
    parsed = parse_www_authenticate(header)
    assert (parsed.scheme, parsed.realm, parsed.resource_metadata) == ("Bearer", "mcp", PRM)
    assert (parsed.well_formed, parsed.problems) == (True, [])
    assert [item.scheme for item in parsed.challenges] == ["Basic", "Bearer"]
    lenient = parse_www_authenticate("Bearer resource_metadata=https://x.example/prm, scope=a")
    assert lenient.resource_metadata == "https://x.example/prm"  # the lenient reading is unchanged
    assert (lenient.well_formed, lenient.problems) == (False, ["bad_param_value"])
    assert challenge_params("Bearer resource_metadata=https://x.example/prm")["resource_metadata"] == (
        "https://x.example/prm"
    )
    empty = parse_www_authenticate("")
    assert (empty.scheme, empty.well_formed, empty.problems, empty.challenges) == (None, False, ["empty"], [])


HOSTILE = [
    "," * 100_000,
    '"' * 100_000,
    "\\" * 100_000,
    "=" * 100_000,
    "a " * 50_000,
    "a," * 50_000,
    "Bearer " + "a=b " * 30_000,
    'Bearer realm="' + "\\" * 100_000,
    "Bearer a=" + '"x"' * 30_000,
    "Negotiate " + "A" * 100_000 + "=",
    "\ud800\udfff" * 10_000 + "Bearer",
    "\x00\r\n\x1b[2J" * 10_000,
    "".join(chr(i) for i in range(0x11000)),
    "B x=y, " * 20_000,
    'Bearer realm="a' + ', x="' * 20_000,
]


@pytest.mark.parametrize("header", HOSTILE, ids=[f"hostile-{i}" for i in range(len(HOSTILE))])
def test_hostile_input_finishes_quickly(header: str) -> None:
    started = time.perf_counter()
    verdict = judge_www_authenticate(header)
    parsed = parse_www_authenticate(header)
    assert time.perf_counter() - started < 1.0
    assert verdict.well_formed is False and "too_long" in verdict.problems
    assert len(verdict.challenges) <= 8 and parsed.problems == verdict.problems
    assert len(parsed.model_dump_json()) < 64_000
    text = parsed.model_dump_json()
    assert "\x1b" not in text and "\\u0000" not in text and "\\ud800" not in text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('Bearer Basic realm=scope,"\\ \t=abc/+_-é\x00\ud800'), max_size=300))
def test_never_raises(header: str) -> None:
    verdict = judge_www_authenticate(header)
    assert verdict.well_formed == (not verdict.problems)
    assert set(verdict.problems) <= PROBLEMS and len(set(verdict.problems)) == len(verdict.problems)
    assert len(verdict.challenges) <= 8 and all(len(item.params) <= 16 for item in verdict.challenges)
    parse_www_authenticate(header).model_dump_json()
