"""A refused scheme says what this instance checks, and a URL without a scheme or with a mistyped
one gets a "did you mean" (it was told "Only https URLs are probed" even where http is allowed)."""

from __future__ import annotations

import pytest

from app.errors import TargetRefused
from app.guard import check_url


def refusal(url: str, allow_private: bool) -> str:
    with pytest.raises(TargetRefused) as caught:
        check_url(url, allow_private=allow_private)
    assert caught.value.reason == "scheme_not_https"  # (the stable key is the same everywhere)
    return caught.value.message


@pytest.mark.parametrize("allow_private", [False, True])
def test_a_mistyped_scheme_gets_a_did_you_mean(allow_private: bool) -> None:
    for typed in ("htps", "htttps", "hhtp", "HTPS"):
        assert refusal(f"{typed}://mcp.example.com/mcp", allow_private).endswith(
            "Did you mean https://mcp.example.com/mcp?"
        )


@pytest.mark.parametrize("url", ["mcp.example.com/mcp", "localhost:8080/mcp", "//mcp.example.com/mcp"])
def test_a_url_without_a_scheme_gets_a_did_you_mean(url: str) -> None:
    message = refusal(url, allow_private=True)
    assert message.endswith(f"did you mean https://{url.lstrip('/')}?")


def test_the_refusal_says_what_this_instance_checks() -> None:
    assert refusal("ftp://mcp.example.com/", allow_private=True) == "Only http and https URLs are checked here."
    production = refusal("ftp://mcp.example.com/", allow_private=False)
    assert production == "Only https URLs on the default port (443) are checked here."
    assert "http and https" not in refusal("http://mcp.example.com/", allow_private=False)


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/plain,hello", "mailto:ops@example.com"])
def test_regression_a_url_of_another_scheme_gets_no_https_did_you_mean(url: str) -> None:
    assert refusal(url, allow_private=True) == "Only http and https URLs are checked here."
