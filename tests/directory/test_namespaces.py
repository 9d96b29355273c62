"""How a registry namespace is verified, worded as what it shows and what it does not."""

from __future__ import annotations

from app.directory.namespaces import domain_of, verification


def test_github_namespaces_show_an_account_not_the_endpoint() -> None:
    told = verification("io.github.alice/weather", "weather.example.com")
    assert (told.kind, told.subject, told.namespace) == ("github", "alice", "io.github.alice")
    assert "alice" in told.shows and "weather.example.com" in told.does_not_show


def test_a_reverse_domain_matches_the_host_or_not() -> None:
    assert verification("com.example/weather", "mcp.example.com").kind == "domain_matching"
    assert verification("com.example/weather", "example.com").kind == "domain_matching"
    other = verification("com.example/weather", "mcp.notexample.com")
    assert other.kind == "domain_other" and "mcp.notexample.com" in other.does_not_show
    assert domain_of("com.example.team") == "team.example.com"


def test_other_namespaces_are_unverified() -> None:
    for name in ("weather", "io.github./x", "-bad.label/x", "1.2/x"):
        assert verification(name, "a.example.com").kind == "unverified", name
