"""Credential redaction finds a value in every form a server may echo it in, and leaves other text alone."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from app.suite.redaction import MARK, Secrets, scrubbed

TOKEN = "tok_9Qz7LmXw4Rv2Kp8N"
SECRETS = Secrets([("Authorization", f"Bearer {TOKEN}"), ("X-Api-Key", "k3y=V@lue/42")])


@pytest.mark.parametrize(
    "echo",
    [
        TOKEN,
        TOKEN.upper(),
        TOKEN.lower(),
        TOKEN[::-1],
        " ".join(TOKEN),
        "-".join(TOKEN[i : i + 2] for i in range(0, len(TOKEN), 2)),
        base64.b64encode(TOKEN.encode()).decode(),
        base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="),
        base64.b64encode(b"x" + TOKEN.encode()).decode(),  # another alignment
        base64.b64encode(b"xy" + TOKEN.encode()).decode(),
        TOKEN.encode().hex(),
        TOKEN.encode().hex().upper(),
        "0" + TOKEN.encode().hex(),  # odd alignment
        quote(TOKEN, safe=""),
        "".join(f"%{b:02X}" for b in TOKEN.encode()),  # every byte percent-encoded
        f"my version is {TOKEN[4:10]}",  # a run of six
        base64.b64encode(TOKEN[::-1].encode()).decode(),
        quote("k3y=V@lue/42", safe=""),
    ],
    ids=[
        "as-sent",
        "upper-cased",
        "lower-cased",
        "reversed",
        "spaced-out",
        "re-punctuated",
        "base64",
        "base64url-unpadded",
        "base64-offset-1",
        "base64-offset-2",
        "hex",
        "hex-upper",
        "hex-odd-offset",
        "percent-encoded",
        "percent-encoded-every-byte",
        "a-run-of-six",
        "base64-of-reversed",
        "other-header-percent-encoded",
    ],
)
def test_an_echoed_credential_is_found_in_every_form(echo: str) -> None:
    assert SECRETS.found_in(f"server says: {echo} (ok)")


def test_a_run_of_five_or_the_scheme_alone_is_not_a_credential() -> None:
    assert not SECRETS.found_in(f"a token like {TOKEN[3:8]} and a Bearer challenge")
    assert not SECRETS.found_in("Weather tools for the whole family, v2.3.1: forecast, radar, alerts")


def test_a_short_value_is_found_whole_and_a_very_short_one_not_at_all() -> None:
    short = Secrets([("X-Tenant", "ab12c"), ("X-Region", "eu")])
    assert short.found_in("tenant AB-12-C") and not short.found_in("tenant ab12 only")
    assert not Secrets([("X-Region", "eu")])


def test_a_string_holding_a_credential_is_replaced_whole_keys_included_but_not_our_members() -> None:
    document = {
        "status": "ok",
        "server": {"name": f"hello {TOKEN.upper()} friend", "version": "1.0"},
        "capabilities": {"experimental": {TOKEN[::-1]: {}}},
        "checks": [{"id": "tls", "state": "passed", "evidence": {"note": quote(TOKEN)}}],
    }
    cleaned, changed = scrubbed(document, SECRETS)
    assert changed
    assert cleaned["server"] == {"name": MARK, "version": "1.0"}
    assert cleaned["capabilities"] == {"experimental": {MARK: {}}}
    assert cleaned["checks"] == [{"id": "tls", "state": "passed", "evidence": {"note": MARK}}]
    assert cleaned["status"] == "ok"


def test_a_value_split_across_strings_is_caught_in_each_piece_of_six_or_more() -> None:
    """Regression: pieces under 12 characters across ``name`` and ``version`` got through."""
    document = {"server": {"name": TOKEN[:8], "version": TOKEN[8:]}}
    cleaned, _ = scrubbed(document, SECRETS)
    assert cleaned["server"] == {"name": MARK, "version": MARK}


def test_basic_credentials_are_looked_for_decoded_too() -> None:
    basic = Secrets([("Authorization", "Basic " + base64.b64encode(b"deploy-bot:Wq8rT2zX9p").decode())])
    assert basic.found_in("hello deploy-bot") and basic.found_in("pw Wq8rT2zX9p") and not basic.found_in("Basic")
