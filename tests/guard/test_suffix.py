"""Public suffixes (:mod:`app.guard.suffix`), from the packaged Public Suffix List."""

from __future__ import annotations

import pytest

from app.guard.suffix import is_public_suffix


@pytest.mark.parametrize("host", ["com", "co.uk", "github.io", "xn--p1ai", "s3.amazonaws.com"])
def test_public_suffixes_of_both_sections_and_the_default_rule(host: str) -> None:
    assert is_public_suffix(host)


@pytest.mark.parametrize(
    "host", ["example.com", "mcp.example.co.uk", "me.github.io", "127.0.0.1", "[::1]", "::1", "localhost", "intranet"]
)
def test_registrable_names_local_names_and_addresses_are_not_suffixes(host: str) -> None:
    assert not is_public_suffix(host)
