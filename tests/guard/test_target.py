"""Address checks of :func:`app.guard.resolve_target`, and the system resolver."""

from __future__ import annotations

import ipaddress
import socket
import time

import pytest

from app.errors import TargetRefused
from app.guard import IPAddress, ResolutionFailed, Resolver, SystemResolver, check_url, resolve_target
from app.probe import probe
from app.settings import Settings
from tests.servers.raw import RawServer, Request, send


class FixedResolver:
    """A :class:`Resolver` that answers fixed addresses (or raises) and counts its calls."""

    def __init__(self, *answer: str, failure: ResolutionFailed | None = None) -> None:
        self.answer: list[IPAddress] = [ipaddress.ip_address(a) for a in answer]
        self.failure = failure
        self.calls: list[tuple[str, int]] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.calls.append((host, port))
        if self.failure is not None:
            raise self.failure
        return list(self.answer)


def _as_resolver(resolver: FixedResolver) -> Resolver:
    # mypy checks here that FixedResolver satisfies the Resolver protocol.
    return resolver


@pytest.mark.anyio
async def test_all_public_answer_passes(network_calls: list[str]) -> None:
    url = check_url("https://mcp.example.com/mcp")
    resolver = FixedResolver("8.8.8.8", "2606:4700:4700::1111", "1.1.1.1")
    resolved = await resolve_target(url, resolver=_as_resolver(resolver))
    assert resolved.url == url
    assert resolved.addresses == (
        ipaddress.IPv4Address("8.8.8.8"),
        ipaddress.IPv6Address("2606:4700:4700::1111"),
        ipaddress.IPv4Address("1.1.1.1"),
    )
    assert resolver.calls == [("mcp.example.com", 443)]
    assert network_calls == []


@pytest.mark.anyio
async def test_mixed_public_and_private_answer_is_refused(network_calls: list[str]) -> None:
    url = check_url("https://mcp.example.com/mcp")
    resolver = FixedResolver("8.8.8.8", "10.0.0.5", "2606:4700:4700::1111")
    with pytest.raises(TargetRefused) as info:
        await resolve_target(url, resolver=resolver)
    assert info.value.reason == "address_not_public"
    assert "private" in info.value.message
    assert resolver.calls == [("mcp.example.com", 443)]
    assert network_calls == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(("127.0.0.1",), id="loopback"),
        pytest.param(("::1",), id="v6-loopback"),
        pytest.param(("169.254.169.254",), id="metadata"),
        pytest.param(("::ffff:127.0.0.1",), id="v4-mapped-loopback"),
        pytest.param(("64:ff9b::a9fe:a9fe",), id="nat64-metadata"),
        pytest.param(("2606:4700:4700::1111", "fd00::1"), id="public-and-ula"),
        pytest.param(("1.1.1.1", "0.0.0.0"), id="public-and-unspecified"),
    ],
)
async def test_any_non_public_address_is_refused(answer: tuple[str, ...], network_calls: list[str]) -> None:
    resolver = FixedResolver(*answer)
    with pytest.raises(TargetRefused) as info:
        await resolve_target(check_url("https://mcp.example.com/mcp"), resolver=resolver)
    assert info.value.reason == "address_not_public"
    assert len(resolver.calls) == 1
    assert network_calls == []


@pytest.mark.anyio
async def test_allow_private_lets_loopback_pass(network_calls: list[str]) -> None:
    url = check_url("http://localhost:8000/mcp", allow_private=True)
    resolver = FixedResolver("127.0.0.1", "::1")
    resolved = await resolve_target(url, resolver=resolver, allow_private=True)
    assert resolved.addresses == (ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1"))
    assert resolver.calls == [("localhost", 8000)]
    assert network_calls == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "address"),
    [
        pytest.param("http://127.0.0.1:8000/mcp", "127.0.0.1", id="v4"),
        pytest.param("http://[::1]:9/x", "::1", id="v6"),
    ],
)
async def test_ip_literal_under_allow_private_skips_the_resolver(
    url: str, address: str, network_calls: list[str]
) -> None:
    resolver = FixedResolver("8.8.8.8")
    resolved = await resolve_target(check_url(url, allow_private=True), resolver=resolver, allow_private=True)
    assert resolved.addresses == (ipaddress.ip_address(address),)
    assert resolver.calls == []
    assert network_calls == []


@pytest.mark.anyio
async def test_ip_literal_is_still_checked_without_allow_private(network_calls: list[str]) -> None:
    resolver = FixedResolver("8.8.8.8")
    url = check_url("http://127.0.0.1:8000/mcp", allow_private=True)
    with pytest.raises(TargetRefused) as info:
        await resolve_target(url, resolver=resolver)
    assert info.value.reason == "address_not_public"
    assert resolver.calls == []
    assert network_calls == []


@pytest.mark.anyio
async def test_resolution_failure_propagates(network_calls: list[str]) -> None:
    resolver = FixedResolver(failure=ResolutionFailed("dns_nxdomain", "the host name does not exist"))
    with pytest.raises(ResolutionFailed) as info:
        await resolve_target(check_url("https://mcp.example.com/mcp"), resolver=resolver)
    assert info.value.reason == "dns_nxdomain"
    assert resolver.calls == [("mcp.example.com", 443)]
    assert network_calls == []


@pytest.mark.anyio
async def test_system_resolver_localhost_is_loopback() -> None:
    addresses = await SystemResolver().resolve("localhost", 443)
    assert addresses
    assert all(address.is_loopback for address in addresses)
    assert len(set(addresses)) == len(addresses)


@pytest.mark.anyio
async def test_system_resolver_refuses_to_pass_localhost_through_resolve_target() -> None:
    with pytest.raises(TargetRefused) as info:
        await resolve_target(check_url("https://localhost/", allow_private=True), resolver=SystemResolver())
    assert info.value.reason == "address_not_public"
    assert "loopback" in info.value.message


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), "dns_nxdomain"),
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), "dns_timeout"),
        (socket.gaierror(socket.EAI_FAIL, "Non-recoverable failure in name resolution"), "dns_failure"),
    ],
)
async def test_system_resolver_maps_resolver_errors(
    monkeypatch: pytest.MonkeyPatch, error: socket.gaierror, reason: str
) -> None:
    # The system resolver is replaced so that no DNS query leaves this machine.
    def failing_getaddrinfo(*args: object, **kwargs: object) -> list[object]:
        raise error

    monkeypatch.setattr(socket, "getaddrinfo", failing_getaddrinfo)
    with pytest.raises(ResolutionFailed) as info:
        await SystemResolver().resolve("mcp-sonde-guard-test.invalid", 443)
    assert info.value.reason == reason


@pytest.mark.anyio
async def test_system_resolver_times_out(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_getaddrinfo(*args: object, **kwargs: object) -> list[object]:
        time.sleep(1.0)
        return []

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)
    started = time.monotonic()
    with pytest.raises(ResolutionFailed) as info:
        await SystemResolver(timeout_s=0.2).resolve("slow.example.com", 443)
    assert info.value.reason == "dns_timeout"
    assert time.monotonic() - started < 0.9


@pytest.mark.anyio
async def test_empty_resolver_answer_is_dns_no_records() -> None:
    class Empty:
        async def resolve(self, host: str, port: int) -> list[IPAddress]:
            return []

    result = await probe("https://empty.example.com/mcp", settings=Settings(), resolver=Empty())
    assert (result.status, result.reason) == ("dns", "dns_no_records")


@pytest.mark.anyio
async def test_development_switch_still_refuses_link_local(raw: RawServer, dev_settings: Settings) -> None:
    @raw.route("/mcp")
    def protected(request: Request, conn: socket.socket) -> None:
        send(conn, 401, {"www-authenticate": 'Bearer resource_metadata="http://169.254.169.254/latest/meta-data"'})

    result = await probe(raw.url("/mcp"), settings=dev_settings)
    assert result.auth is not None
    assert result.auth.lookups[0].refused == "address_not_public"
