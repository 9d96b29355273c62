"""Fixtures of the check core's tests: names whose name server hangs, and the paid service on an
offline chain (:mod:`tests.payment.conftest`)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.payment.conftest import chain as chain
from tests.payment.conftest import facilitator_url as facilitator_url
from tests.payment.conftest import paid_service as paid_service
from tests.servers.network import loopback_addrinfo


@pytest.fixture
def slow_names(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """``*.fast.test`` resolves at once to 127.0.0.1; ``*.slow.test`` hangs (a name server that
    never answers) until the returned event is set. Nothing leaves the machine."""
    real = socket.getaddrinfo
    release = threading.Event()

    def fake(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host.endswith(".slow.test"):
            release.wait(20)
            raise socket.gaierror(socket.EAI_AGAIN, "timed out")
        if host.endswith(".fast.test"):
            return loopback_addrinfo(port)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    yield release
    release.set()
