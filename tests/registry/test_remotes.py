"""What the mirror keeps of a refused or skipped remote: never a credential it was listed with."""

from __future__ import annotations

import pytest

from app.registry.page import Remote
from app.registry.remotes import endpoint_of


@pytest.mark.parametrize(
    ("listed", "reason"),
    [
        ("https://alice:s3cr3t-key@mcp.example.com/mcp", "refused:userinfo_present"),
        ("https://s3cr3t-key@mcp.example.com/mcp?token=s3cr3t-key", "refused:userinfo_present"),
        ("https://alice:s3cr3t-key@{tenant}.example.com/mcp", "url_template"),
        ("http://alice:s3cr3t-key@mcp.example.com/mcp", "refused:scheme_not_https"),
    ],
)
def test_a_refused_remote_is_kept_without_its_user_info(listed: str, reason: str) -> None:
    endpoint = endpoint_of(Remote("streamable-http", listed, ()), allow_private=False)
    assert endpoint.skip_reason == reason
    assert "s3cr3t-key" not in endpoint.url and "s3cr3t-key" not in endpoint.server_id
    assert endpoint.url.endswith("example.com/mcp")


def test_a_remote_needing_headers_keeps_its_url_without_user_info() -> None:
    remote = Remote("sse", "https://alice:s3cr3t-key@mcp.example.com/sse", ("Authorization",))
    endpoint = endpoint_of(remote, allow_private=False)
    assert endpoint.skip_reason == "needs_headers" and "s3cr3t-key" not in endpoint.url
