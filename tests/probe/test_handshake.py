"""The handshake (:mod:`app.probe.handshake`): the protocol version a server answers."""

from __future__ import annotations

import pytest

from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer
from tests.servers.raw_mcp import MiniMcp

pytestmark = pytest.mark.anyio


def _initialize_answer(server_info: dict[str, str], version: str = "2025-11-25") -> MiniMcp:
    class Answer(MiniMcp):
        def _result(self, method: object) -> dict[str, object]:
            result = super()._result(method)
            if method == "initialize":
                result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": server_info}
            return result

    return Answer()


async def test_protocol_version_with_trailing_newline(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = _initialize_answer({"name": "nl"}, version="2025-11-25\n")
    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.status == "ok"
    assert result.protocol_version == "2025-11-25"
    later = [r for r in raw.requests_to("/mcp") if r.message.get("method") == "tools/list"]
    assert later and "mcp-protocol-version" not in later[0].headers  # not a valid token: not echoed
