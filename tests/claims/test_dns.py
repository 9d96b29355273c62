"""The DNS proof's lookup against a real nameserver on loopback (:mod:`tests.servers.dns`)."""

from __future__ import annotations

import socket

import pytest

from app.claims.dns import DnsTxt, DnsUnanswered, published, record_name, record_text
from app.claims.proof import ClaimRefused, verify_dns
from app.settings import nameserver
from tests.servers.dns import DnsServer, nameserver_on_loopback

__all__ = ["nameserver_on_loopback"]

pytestmark = pytest.mark.anyio
NAME = record_name("mcp.sonde-proof.net")


async def test_the_records_texts_are_read_each_records_strings_joined(nameserver_on_loopback: DnsServer) -> None:
    nameserver_on_loopback.publish(NAME, "v=other", ["mcp-sonde-claim=", "abc"])
    texts = await DnsTxt([nameserver_on_loopback.address]).texts(NAME)
    assert sorted(texts) == ["mcp-sonde-claim=abc", "v=other"]
    assert published(texts, "abc") and not published(texts, "ab") and not published(texts, "abcd")


async def test_a_name_that_does_not_exist_has_no_texts(nameserver_on_loopback: DnsServer) -> None:
    assert await DnsTxt([nameserver_on_loopback.address]).texts("_mcp-sonde.nowhere.example") == []


async def test_a_truncated_answer_is_asked_again_over_tcp(nameserver_on_loopback: DnsServer) -> None:
    nameserver_on_loopback.truncate = True
    nameserver_on_loopback.publish(NAME, record_text("xyz"))
    texts = await DnsTxt([nameserver_on_loopback.address]).texts(NAME)
    assert texts == ["mcp-sonde-claim=xyz"] and nameserver_on_loopback.asked["tcp"] >= 1


@pytest.mark.parametrize("fault", ["silent", "failing"])
async def test_a_nameserver_that_does_not_answer_or_fails_is_unanswered_not_absent(
    nameserver_on_loopback: DnsServer, fault: str
) -> None:
    getattr(nameserver_on_loopback, fault).add(NAME.lower())
    with pytest.raises(DnsUnanswered) as raised:
        await DnsTxt([nameserver_on_loopback.address], lifetime_s=1.0).texts(NAME)
    assert raised.value.reason == "claim_dns_unanswered"


async def test_the_proof_says_absent_wrong_and_unanswered_apart(nameserver_on_loopback: DnsServer) -> None:
    lookup = DnsTxt([nameserver_on_loopback.address], lifetime_s=1.0)
    reasons = []
    for step in ("absent", "wrong", "unanswered", "published"):
        if step == "wrong":
            nameserver_on_loopback.publish(NAME, record_text("someone-else"))
        if step == "unanswered":
            nameserver_on_loopback.silent.add(NAME.lower())
        if step == "published":
            nameserver_on_loopback.silent.clear()
            nameserver_on_loopback.publish(NAME, record_text("someone-else"), record_text("the-challenge"))
        try:
            await verify_dns("mcp.sonde-proof.net", "the-challenge", lookup)
        except ClaimRefused as exc:
            reasons.append((exc.reason, exc.gone))
        else:
            reasons.append(("holds", False))
    assert reasons == [
        ("claim_proof_not_found", True), ("claim_proof_invalid", True),
        ("claim_dns_unanswered", False), ("holds", False),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("item", "parsed"),
    [("10.0.0.53", ("10.0.0.53", 53)), ("127.0.0.1:5353", ("127.0.0.1", 5353)), ("[::1]:5300", ("::1", 5300)),
     ("2001:db8::53", ("2001:db8::53", 53))],
)  # fmt: skip
def test_a_nameserver_setting_is_an_address_with_an_optional_port(item: str, parsed: tuple[str, int]) -> None:
    assert nameserver(item) == parsed


@pytest.mark.parametrize("item", ["resolver.example", "127.0.0.1:0", "127.0.0.1:70000", "[::1]:x", ""])
def test_a_nameserver_setting_that_is_not_an_address_is_refused(item: str) -> None:
    with pytest.raises(ValueError):
        nameserver(item)


def test_a_port_taken_for_tcp_is_passed_over_for_one_free_on_both() -> None:
    """(Regression: the server bound UDP on a kernel-chosen port, then TCP on the same port,
    which another test's TCP socket could hold: ``Address already in use``.)"""
    taken: list[socket.socket] = []
    try:
        for _ in range(20):  # hold many TCP ports, so some UDP draws clash
            holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            holder.bind(("127.0.0.1", 0))
            holder.listen(1)
            taken.append(holder)
        server = DnsServer()
        try:
            assert server.port not in {s.getsockname()[1] for s in taken}
            assert server._tcp.getsockname()[1] == server._udp.getsockname()[1] == server.port
        finally:
            server._udp.close()
            server._tcp.close()
    finally:
        for holder in taken:
            holder.close()
