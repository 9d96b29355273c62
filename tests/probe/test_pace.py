"""The probe and its caller's pace (:mod:`app.net.pace`): asked before the first connection to
each host, told once its first request is on the wire, and obeyed when it refuses."""

from __future__ import annotations

import socket

import pytest

from app.net.pace import PaceRefused
from app.probe.runner import observe
from app.settings import Settings
from tests.servers.raw import RawServer, challenging
from tests.servers.raw_mcp import MiniMcp
from tests.servers.raw_sse import MiniSse

pytestmark = pytest.mark.anyio


class Recording:
    """A pace that lets every contact through and notes, for each call, what the server had seen."""

    def __init__(self, raw: RawServer, refuse: frozenset[str] = frozenset()) -> None:
        self.raw = raw
        self.refuse = refuse
        self.calls: list[tuple[str, str, int, int]] = []  # (call, host, connections, requests) at the call

    def sequence(self) -> list[tuple[str, str]]:
        """The calls made, each with its host."""
        return [(call, host) for call, host, _c, _r in self.calls]

    def _note(self, call: str, host: str) -> None:
        self.calls.append((call, host, self.raw.connections, len(self.raw.seen)))

    async def dialling(self, host: str) -> None:
        self._note("dialling", host)
        if host in self.refuse:
            raise PaceRefused("target_busy", "no turn")

    async def contacted(self, host: str) -> None:
        self._note("contacted", host)


async def test_the_first_connection_waits_for_the_pace_and_the_first_request_is_told(
    raw: RawServer, dev_settings: Settings
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    pace = Recording(raw)
    observation = await observe(raw.url("/mcp"), settings=dev_settings, pace=pace)
    assert observation.result.status == "ok"
    # asked before the connection and again once it was made (held for TLS and the first write), then told
    assert pace.sequence() == [("dialling", "127.0.0.1"), ("dialling", "127.0.0.1"), ("contacted", "127.0.0.1")]
    assert pace.calls[0][2:] == (0, 0)  # (the first ask: before the server saw any connection)
    assert len(raw.seen) > 1  # (the later requests were within the turn: not asked again)


async def test_a_second_connection_to_a_contacted_host_is_within_its_turn(
    raw: RawServer, sse: MiniSse, dev_settings: Settings
) -> None:
    pace = Recording(raw)
    observation = await observe(raw.url("/sse"), settings=dev_settings, pace=pace)
    assert observation.result.transport == "sse" and observation.result.status == "ok"
    assert raw.connections >= 2  # the event stream and the POSTs
    assert [call for call, *_ in pace.calls] == ["dialling", "dialling", "contacted"]


async def test_a_refused_probed_host_is_never_contacted(raw: RawServer, dev_settings: Settings) -> None:
    raw.routes["/mcp"] = MiniMcp()
    with pytest.raises(PaceRefused) as caught:
        await observe(raw.url("/mcp"), settings=dev_settings, pace=Recording(raw, frozenset({"127.0.0.1"})))
    assert caught.value.reason == "target_busy"
    assert raw.connections == 0


async def test_a_refused_further_host_is_reported_and_not_fetched(raw: RawServer, dev_settings: Settings) -> None:
    hint = raw.url("/meta", host="localhost")

    raw.routes["/mcp"] = challenging(hint)
    pace = Recording(raw, frozenset({"localhost"}))
    observation = await observe(raw.url("/mcp"), settings=dev_settings, pace=pace)
    result = observation.result
    assert result.status == "auth" and result.auth is not None
    assert (result.auth.lookups[0].url, result.auth.lookups[0].refused) == (hint, "target_busy")
    assert raw.requests_to("/meta") == []
    assert ("dialling", "localhost") in pace.sequence()


async def test_a_first_try_that_fails_is_a_contact_too(raw: RawServer, dev_settings: Settings) -> None:
    """A refused connect is what the host saw of the probe: its turn is held from then, as after a request."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    pace = Recording(raw)
    observation = await observe(f"http://127.0.0.1:{port}/mcp", settings=dev_settings, pace=pace)
    assert observation.result.status == "unreachable"
    assert pace.sequence() == [
        ("dialling", "127.0.0.1"),
        ("contacted", "127.0.0.1"),
    ]


async def test_a_connection_made_before_the_pace_refused_is_closed_not_left_open(dev_settings: Settings) -> None:
    """The pace may refuse when asked again once connected (its turn went meanwhile): the probe must
    not leave that connection open for the garbage collector to close."""
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    seen: list[bytes | None] = []

    def serve() -> None:
        conn, _ = listener.accept()
        conn.settimeout(3.0)
        try:
            seen.append(conn.recv(1))  # b"": closed by the probe; a timeout: left open
        except TimeoutError:
            seen.append(None)
        finally:
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    class SecondRefused:
        asked = 0

        async def dialling(self, host: str) -> None:
            self.asked += 1
            if self.asked == 2:
                raise PaceRefused("target_busy", "the turn went while connecting")

        async def contacted(self, host: str) -> None:
            return None

    port = listener.getsockname()[1]
    with pytest.raises(PaceRefused):
        await observe(f"http://127.0.0.1:{port}/mcp", settings=dev_settings, pace=SecondRefused())
    thread.join(5)
    listener.close()
    assert seen == [b""]
