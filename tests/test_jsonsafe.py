"""Depth-bounded JSON parsing (:mod:`app.jsonsafe`), alone and under the probe."""

from __future__ import annotations

import socket
import sys

import pytest

from app import jsonsafe
from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send

pytestmark = pytest.mark.anyio


async def test_deep_json_with_a_raised_recursion_limit(raw: RawServer, dev_settings: Settings) -> None:
    """Deeply nested JSON must not reach the C decoder even when some library raised the recursion limit."""

    @raw.route("/mcp")
    def deep(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "application/json"}, b"[" * 100_000 + b"]" * 100_000)  # under the cap

    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1_000_000)
    try:
        result = await probe(raw.url("/mcp"), settings=dev_settings)
    finally:
        sys.setrecursionlimit(previous)
    assert (result.status, result.reason) == ("not_mcp", "invalid_json")


def test_jsonsafe_depth_limit() -> None:
    from app import jsonsafe

    assert jsonsafe.loads(b'{"a": [[["x"]]], "s": "[[[[[[[["}') == {"a": [[["x"]]], "s": "[[[[[[[["}
    assert jsonsafe.loads("[" * 64 + "]" * 64) is not None
    with pytest.raises(jsonsafe.TooDeep):
        jsonsafe.loads("[" * 65 + "]" * 65)
    with pytest.raises(ValueError):
        jsonsafe.loads(b"{nope")


def test_a_lone_surrogate_is_found_anywhere_in_a_value_keys_included() -> None:
    assert not jsonsafe.has_lone_surrogate({"a": ["b", 1, None, {"c": "d\U0001f600"}]})  # (a pair is text)
    assert jsonsafe.has_lone_surrogate({"a": ["b", {"c": "d\ud800"}]})
    assert jsonsafe.has_lone_surrogate({"\udfff": 1})
    assert jsonsafe.has_lone_surrogate(jsonsafe.loads(b'["\\ud83d"]'))
    assert not jsonsafe.has_lone_surrogate(jsonsafe.loads(b'["\\ud83d\\ude00"]'))
