"""Address classification of :func:`app.guard.classify`."""

from __future__ import annotations

import ipaddress

import pytest

from app.guard import classify, is_public

NOT_PUBLIC: list[object] = [
    # --- IPv4 ---------------------------------------------------------------------------
    pytest.param("127.0.0.1", "loopback", id="v4-loopback"),
    pytest.param("127.255.255.254", "loopback", id="v4-loopback-top"),
    pytest.param("10.0.0.1", "private", id="v4-private-10"),
    pytest.param("10.255.255.255", "private", id="v4-private-10-top"),
    pytest.param("172.16.0.1", "private", id="v4-private-172.16"),
    pytest.param("172.31.255.255", "private", id="v4-private-172.31"),
    pytest.param("192.168.1.1", "private", id="v4-private-192.168"),
    pytest.param("169.254.169.254", "link_local", id="v4-link-local-metadata"),
    pytest.param("169.254.0.1", "link_local", id="v4-link-local"),
    pytest.param("100.64.0.1", "cgnat", id="v4-cgnat"),
    pytest.param("100.127.255.255", "cgnat", id="v4-cgnat-top"),
    pytest.param("0.0.0.0", "unspecified", id="v4-unspecified"),
    pytest.param("0.1.2.3", "unspecified", id="v4-this-network"),
    pytest.param("255.255.255.255", "reserved", id="v4-broadcast"),
    pytest.param("224.0.0.1", "multicast", id="v4-multicast"),
    pytest.param("239.255.255.250", "multicast", id="v4-multicast-ssdp"),
    pytest.param("240.0.0.1", "reserved", id="v4-reserved-240"),
    pytest.param("192.0.0.1", "reserved", id="v4-ietf-protocol"),
    pytest.param("192.88.99.1", "reserved", id="v4-6to4-relay-anycast"),
    pytest.param("192.0.2.1", "documentation", id="v4-test-net-1"),
    pytest.param("198.51.100.1", "documentation", id="v4-test-net-2"),
    pytest.param("203.0.113.1", "documentation", id="v4-test-net-3"),
    pytest.param("198.18.0.1", "benchmarking", id="v4-benchmarking"),
    pytest.param("198.19.255.255", "benchmarking", id="v4-benchmarking-top"),
    # --- IPv6 ---------------------------------------------------------------------------
    pytest.param("::", "unspecified", id="v6-unspecified"),
    pytest.param("::1", "loopback", id="v6-loopback"),
    pytest.param("ff02::1", "multicast", id="v6-multicast-link"),
    pytest.param("ff0e::1", "multicast", id="v6-multicast-global"),
    pytest.param("2001:db8::1", "documentation", id="v6-documentation"),
    pytest.param("3fff::1", "documentation", id="v6-documentation-3fff"),
    pytest.param("2001:2::1", "benchmarking", id="v6-benchmarking"),
    pytest.param("fd00::1", "unique_local", id="v6-ula-fd"),
    pytest.param("fc00::1", "unique_local", id="v6-ula-fc"),
    pytest.param("fe80::1", "link_local", id="v6-link-local"),
    pytest.param("fe80::1%eth0", "link_local", id="v6-link-local-scoped"),
    pytest.param("fec0::1", "site_local", id="v6-site-local"),
    pytest.param("100::1", "reserved", id="v6-discard"),
    pytest.param("64:ff9b:1::1", "private", id="v6-nat64-local-use"),
    pytest.param("4000::1", "reserved", id="v6-outside-2000::/3"),
    # --- IPv6 forms that embed an IPv4 address ------------------------------------------
    pytest.param("::ffff:127.0.0.1", "embedded_loopback", id="v4-mapped-loopback"),
    pytest.param("::ffff:10.0.0.1", "embedded_private", id="v4-mapped-private"),
    pytest.param("::ffff:169.254.169.254", "embedded_link_local", id="v4-mapped-metadata"),
    pytest.param("::ffff:100.64.0.1", "embedded_cgnat", id="v4-mapped-cgnat"),
    pytest.param("::127.0.0.1", "embedded_loopback", id="v4-compatible-loopback"),
    pytest.param("::8.8.8.8", "embedded_reserved", id="v4-compatible-public-deprecated"),
    pytest.param("2002:7f00:1::1", "embedded_loopback", id="6to4-loopback"),
    pytest.param("2002:a9fe:a9fe::1", "embedded_link_local", id="6to4-metadata"),
    pytest.param("2002:a00:1::1", "embedded_private", id="6to4-private"),
    pytest.param("64:ff9b::7f00:1", "embedded_loopback", id="nat64-loopback"),
    pytest.param("64:ff9b::a9fe:a9fe", "embedded_link_local", id="nat64-metadata"),
    pytest.param("64:ff9b::a00:1", "embedded_private", id="nat64-private"),
    # Teredo (RFC 4380): server 65.54.227.120, client 10.0.0.1 (stored bit-inverted).
    pytest.param("2001:0:4136:e378:8000:63bf:f5ff:fffe", "teredo", id="teredo-private-client"),
    # Teredo: server 65.54.227.120, client 127.0.0.1.
    pytest.param("2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo", id="teredo-loopback-client"),
    # Teredo: server 192.0.2.1 (documentation), client public 192.0.2.45 is documentation too.
    pytest.param("2001:0:c000:201:8000:63bf:3fff:fdd2", "teredo", id="teredo-doc-server"),
]

PUBLIC: list[object] = [
    pytest.param("8.8.8.8", id="v4-google-dns"),
    pytest.param("1.1.1.1", id="v4-cloudflare-dns"),
    pytest.param("172.32.0.1", id="v4-just-above-172.16/12"),
    pytest.param("100.128.0.1", id="v4-just-above-cgnat"),
    pytest.param("2606:4700:4700::1111", id="v6-cloudflare-dns"),
    pytest.param("2001:4860:4860::8888", id="v6-google-dns"),
    pytest.param("::ffff:8.8.8.8", id="v4-mapped-public"),
    pytest.param("64:ff9b::808:808", id="nat64-public"),
    pytest.param("2002:808:808::1", id="6to4-public"),
]


@pytest.mark.parametrize(("address", "kind"), NOT_PUBLIC)
def test_not_public(address: str, kind: str) -> None:
    ip = ipaddress.ip_address(address)
    assert classify(ip) == kind
    assert is_public(ip) is False


@pytest.mark.parametrize("address", PUBLIC)
def test_public(address: str) -> None:
    ip = ipaddress.ip_address(address)
    assert classify(ip) is None
    assert is_public(ip) is True


def test_table_is_big_enough() -> None:
    assert len(NOT_PUBLIC) + len(PUBLIC) >= 30


@pytest.mark.parametrize("address", ["2001:100::1", "2001:1ff::1", "2001:10::1", "2001:20::1"])
def test_ietf_protocol_assignments_are_not_public(address: str) -> None:
    assert classify(ipaddress.ip_address(address)) is not None


def test_ietf_globally_reachable_exceptions_stay_public() -> None:
    assert classify(ipaddress.ip_address("2001:4:112::1")) is None
