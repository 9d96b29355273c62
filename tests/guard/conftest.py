"""Fixtures for the target guard tests."""

from __future__ import annotations

import socket
from typing import NoReturn

import pytest


@pytest.fixture
def network_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record (and refuse) every connect and name lookup made while the test runs.

    Patches ``socket.socket.connect``, ``socket.create_connection`` and ``socket.getaddrinfo``.
    Each patched call is appended to the returned list and then fails with ``OSError``, so no
    packet leaves the process even if the code under test tries.
    """
    calls: list[str] = []

    def fake_connect(self: socket.socket, address: object) -> NoReturn:
        calls.append(f"socket.socket.connect({address!r})")
        raise OSError("connect() is disabled in the guard tests")

    def fake_create_connection(*args: object, **kwargs: object) -> NoReturn:
        calls.append(f"socket.create_connection{args!r}")
        raise OSError("create_connection() is disabled in the guard tests")

    def fake_getaddrinfo(*args: object, **kwargs: object) -> NoReturn:
        calls.append(f"socket.getaddrinfo{args!r}")
        raise OSError("getaddrinfo() is disabled in the guard tests")

    monkeypatch.setattr(socket.socket, "connect", fake_connect)
    monkeypatch.setattr(socket, "create_connection", fake_create_connection)
    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    return calls
