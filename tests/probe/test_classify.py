"""Classifying answers (:mod:`app.probe.classify`): ``Retry-After``."""

from __future__ import annotations

import socket

import pytest

from app.probe import probe
from app.probe.classify import retry_after_seconds
from app.settings import Settings
from tests.servers.raw import RawServer, Request

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "value",
    [
        "²",
        "١٢",
        "9" * 5000,
        "Mon, 01 Jan 2020 00:00:00 +99999999999999999999",
        "01 Jan 99999999999999999999 00:00:00 GMT",
    ],
)
def test_retry_after_hostile_values_give_none(value: str) -> None:
    assert retry_after_seconds(value) is None


async def test_retry_after_non_ascii_digit_does_not_crash_the_probe(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def limited(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 429 X\r\ncontent-length: 0\r\nretry-after: \xb2\r\n\r\n")
        return False

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert (result.status, result.reason, result.retry_after) == ("client_error", "rate_limited", None)
