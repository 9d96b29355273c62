"""Form checks of :func:`app.guard.check_url`: what is refused (and why), what is accepted."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from app.errors import TargetRefused
from app.guard import MAX_URL_LENGTH, REFUSAL_REASONS, TargetUrl, check_url
from app.guard.url import scheme_refusal

_BASE = "https://example.com/"
LONG_URL = _BASE + "a" * (MAX_URL_LENGTH + 1 - len(_BASE))
LONGEST_URL = _BASE + "a" * (MAX_URL_LENGTH - len(_BASE))
LONG_DEV_URL = "http://127.0.0.1:8000/" + "a" * MAX_URL_LENGTH

REFUSED: list[object] = [
    # --- scheme: only https -------------------------------------------------------------
    pytest.param("http://example.com/mcp", "scheme_not_https", id="scheme-http"),
    pytest.param("HTTP://example.com/mcp", "scheme_not_https", id="scheme-http-upper"),
    pytest.param("ftp://example.com/mcp", "scheme_not_https", id="scheme-ftp"),
    pytest.param("file:///etc/passwd", "scheme_not_https", id="scheme-file"),
    pytest.param("gopher://example.com/_GET%20/", "scheme_not_https", id="scheme-gopher"),
    pytest.param("javascript:alert(1)", "scheme_not_https", id="scheme-javascript"),
    pytest.param("data:text/plain,hello", "scheme_not_https", id="scheme-data"),
    pytest.param("ws://example.com/mcp", "scheme_not_https", id="scheme-ws"),
    pytest.param("wss://example.com/mcp", "scheme_not_https", id="scheme-wss"),
    pytest.param("//example.com/mcp", "scheme_not_https", id="scheme-relative"),
    pytest.param("example.com/mcp", "scheme_not_https", id="scheme-missing"),
    # --- port: only 443 -----------------------------------------------------------------
    pytest.param("https://example.com:80/mcp", "port_not_allowed", id="port-80"),
    pytest.param("https://example.com:8443/mcp", "port_not_allowed", id="port-8443"),
    pytest.param("https://example.com:0/mcp", "port_not_allowed", id="port-0"),
    pytest.param("https://example.com:22/mcp", "port_not_allowed", id="port-22"),
    pytest.param("https://example.com:65536/mcp", "url_malformed", id="port-65536"),
    pytest.param("https://example.com:99999999/mcp", "url_malformed", id="port-huge"),
    pytest.param("https://example.com:abc/mcp", "url_malformed", id="port-alpha"),
    pytest.param("https://example.com:-1/mcp", "url_malformed", id="port-negative"),
    pytest.param("https://example.com:443:443/mcp", "url_malformed", id="port-twice"),
    # --- user info ----------------------------------------------------------------------
    pytest.param("https://user@example.com/mcp", "userinfo_present", id="userinfo-user"),
    pytest.param("https://user:pass@example.com/mcp", "userinfo_present", id="userinfo-user-pass"),
    pytest.param("https://user%40evil.com@example.com/mcp", "userinfo_present", id="userinfo-encoded-at"),
    pytest.param("https://@example.com/mcp", "userinfo_present", id="userinfo-empty"),
    pytest.param("https://:@example.com/mcp", "userinfo_present", id="userinfo-empty-colon"),
    pytest.param("https://example.com:443@127.0.0.1/mcp", "userinfo_present", id="userinfo-host-port-as-user"),
    pytest.param("https://evil.com\\@127.0.0.1/mcp", "url_malformed", id="userinfo-backslash-at"),
    pytest.param("https:\\\\evil.com/mcp", "url_malformed", id="backslash-slashes"),
    # --- missing host -------------------------------------------------------------------
    pytest.param("https:///mcp", "host_missing", id="host-missing-path"),
    pytest.param("https://", "host_missing", id="host-missing-bare"),
    pytest.param("https://:443/mcp", "host_missing", id="host-missing-port-only"),
    pytest.param("https:?q=1", "host_missing", id="host-missing-query-only"),
    # --- IP literals in every spelling --------------------------------------------------
    pytest.param("https://127.0.0.1/mcp", "host_ip_literal", id="ip-dotted"),
    pytest.param("https://2130706433/mcp", "host_ip_literal", id="ip-decimal"),
    pytest.param("https://0177.0.0.1/mcp", "host_ip_literal", id="ip-octal"),
    pytest.param("https://0x7f000001/mcp", "host_ip_literal", id="ip-hex"),
    pytest.param("https://0x7f.0.0.1/mcp", "host_ip_literal", id="ip-hex-first-octet"),
    pytest.param("https://0X7F.1/mcp", "host_ip_literal", id="ip-hex-upper-short"),
    pytest.param("https://127.1/mcp", "host_ip_literal", id="ip-short-127.1"),
    pytest.param("https://10.1/mcp", "host_ip_literal", id="ip-short-10.1"),
    pytest.param("https://0/mcp", "host_ip_literal", id="ip-zero"),
    pytest.param("https://127.0.0.1./mcp", "host_ip_literal", id="ip-trailing-dot"),
    pytest.param("https://[::1]/mcp", "host_ip_literal", id="ip-v6-loopback"),
    pytest.param("https://[::1]:443/mcp", "host_ip_literal", id="ip-v6-loopback-port"),
    pytest.param("https://[::ffff:127.0.0.1]/mcp", "host_ip_literal", id="ip-v6-mapped-dotted"),
    pytest.param("https://[::ffff:7f00:1]/mcp", "host_ip_literal", id="ip-v6-mapped-hex"),
    pytest.param("https://[fe80::1%25eth0]/mcp", "url_malformed", id="ip-v6-zone-id"),
    pytest.param("https://[0:0:0:0:0:0:0:1]/mcp", "host_ip_literal", id="ip-v6-long-form"),
    pytest.param("https://[127.0.0.1]/mcp", "url_malformed", id="ip-v4-in-brackets"),
    pytest.param("https://169.254.169.254/latest/meta-data/", "host_ip_literal", id="ip-metadata"),
    pytest.param("https://１２７．０．０．１/mcp", "host_ip_literal", id="ip-fullwidth"),
    pytest.param("https://127。0。0。1/mcp", "host_ip_literal", id="ip-ideographic-dots"),
    pytest.param("https://𝟏𝟐𝟕.𝟎.𝟎.𝟏/mcp", "host_ip_literal", id="ip-math-bold-digits"),
    pytest.param("https://%31%32%37.0.0.1/mcp", "host_ip_literal", id="ip-percent-encoded"),
    pytest.param("https://8.8.8.8/mcp", "host_ip_literal", id="ip-public"),
    pytest.param("https://foo.0x1/mcp", "host_ip_literal", id="ip-ends-in-hex-number"),
    # --- template placeholders ----------------------------------------------------------
    pytest.param("https://example.com/servers/{id}/mcp", "placeholder_present", id="placeholder-braces"),
    pytest.param("https://example.com/servers/<name>/mcp", "placeholder_present", id="placeholder-angle"),
    pytest.param("https://example.com/mcp?token=${TOKEN}", "placeholder_present", id="placeholder-dollar"),
    pytest.param("https://example.com/servers/%7Bid%7D/mcp", "placeholder_present", id="placeholder-encoded"),
    pytest.param("https://example.com/mcp?t=%24%7BTOKEN%7D", "placeholder_present", id="placeholder-encoded-dollar"),
    pytest.param("https://{tenant}.example.com/mcp", "placeholder_present", id="placeholder-in-host"),
    # --- length -------------------------------------------------------------------------
    pytest.param(LONG_URL, "url_too_long", id="too-long-2049"),
    # --- IDNA failures ------------------------------------------------------------------
    pytest.param("https://xn--zz.com/mcp", "host_idna_invalid", id="idna-bad-punycode"),
    pytest.param("https://xn--/mcp", "host_idna_invalid", id="idna-empty-punycode"),
    pytest.param("https://under_score.example.com/mcp", "host_idna_invalid", id="idna-underscore"),
    pytest.param("https://a..b/mcp", "host_idna_invalid", id="idna-empty-label"),
    pytest.param("https://ho%73t.example.com/mcp", "host_idna_invalid", id="idna-percent-in-host"),
    pytest.param("https://127.0.0.1%2f/mcp", "host_idna_invalid", id="idna-encoded-slash"),
    pytest.param("https://-lead.example.com/mcp", "host_idna_invalid", id="idna-leading-hyphen"),
    pytest.param("https://localhost.．/mcp", "host_idna_invalid", id="idna-dot-then-fullwidth-dot"),
    # --- special-use and single-label names ---------------------------------------------
    pytest.param("https://localhost/mcp", "host_not_public_name", id="name-localhost"),
    pytest.param("https://LOCALHOST./mcp", "host_not_public_name", id="name-localhost-upper-dot"),
    pytest.param("https://ｌｏｃａｌｈｏｓｔ/mcp", "host_not_public_name", id="name-localhost-fullwidth"),
    pytest.param("https://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/mcp", "host_not_public_name", id="name-localhost-circled"),
    pytest.param("https://foo.localhost/mcp", "host_not_public_name", id="name-sub-localhost"),
    pytest.param("https://printer.local/mcp", "host_not_public_name", id="name-mdns-local"),
    pytest.param("https://metadata.google.internal/mcp", "host_not_public_name", id="name-internal"),
    pytest.param("https://x.home.arpa/mcp", "host_not_public_name", id="name-home-arpa"),
    pytest.param("https://1.0.0.127.in-addr.arpa/mcp", "host_not_public_name", id="name-in-addr-arpa"),
    pytest.param("https://abc.onion/mcp", "host_not_public_name", id="name-onion"),
    pytest.param("https://intranet/mcp", "host_not_public_name", id="name-single-label"),
    pytest.param("https://intranet./mcp", "host_not_public_name", id="name-single-label-dot"),
    pytest.param("https://foo.invalid/mcp", "host_not_public_name", id="name-invalid"),
    pytest.param("https://foo.test/mcp", "host_not_public_name", id="name-test"),
    # A trailing root dot spelt as a second ASCII dot or as U+3002 / U+FF0E / U+FF61 (which
    # UTS #46 maps to ".") must not hide a special-use or single-label name.
    pytest.param("https://localhost../mcp", "host_idna_invalid", id="name-localhost-two-dots"),
    pytest.param("https://localhost。/mcp", "host_not_public_name", id="name-localhost-ideographic-dot"),
    pytest.param("https://printer.local../mcp", "host_idna_invalid", id="name-local-two-dots"),
    pytest.param("https://metadata.google.internal｡/mcp", "host_not_public_name", id="name-internal-halfwidth-dot"),
    pytest.param("https://intranet．/mcp", "host_not_public_name", id="name-single-label-fullwidth-dot"),
    pytest.param("https://example.com../mcp", "host_idna_invalid", id="idna-trailing-empty-label"),
    # --- whitespace and control characters ----------------------------------------------
    pytest.param("https://example.com /mcp", "url_malformed", id="ws-space-after-host"),
    pytest.param("https://exa mple.com/mcp", "url_malformed", id="ws-space-in-host"),
    pytest.param(" https://example.com/mcp", "url_malformed", id="ws-leading-space"),
    pytest.param("https://example.com/mcp ", "url_malformed", id="ws-trailing-space"),
    pytest.param("https://example.com/mcp\n", "url_malformed", id="ctl-newline"),
    pytest.param("https://example.com/mcp\r\nX-Injected: 1", "url_malformed", id="ctl-crlf-injection"),
    pytest.param("https://example.com/\tmcp", "url_malformed", id="ctl-tab"),
    pytest.param("https://exam\nple.com/mcp", "url_malformed", id="ctl-newline-in-host"),
    pytest.param("https://example.com/mcp\x00", "url_malformed", id="ctl-nul"),
    pytest.param("https://example.com/mcp\x7f", "url_malformed", id="ctl-del"),
    pytest.param("https://example.com/mcp\u2028", "url_malformed", id="ctl-line-separator"),
    pytest.param("https://example.com/\u00a0mcp", "url_malformed", id="ws-nbsp"),
    pytest.param("https://ex\u200bample.com/mcp", "url_malformed", id="ctl-zero-width-space"),
    pytest.param("https://ex\u00adample.com/mcp", "url_malformed", id="ctl-soft-hyphen"),
    pytest.param("", "url_malformed", id="empty"),
]

ACCEPTED: list[object] = [
    # url, normalised url, host, port, target
    pytest.param("https://example.com/mcp", "https://example.com/mcp", "example.com", 443, "/mcp", id="plain"),
    pytest.param(
        "https://MCP.Example.COM/Path/To",
        "https://mcp.example.com/Path/To",
        "mcp.example.com",
        443,
        "/Path/To",
        id="uppercase-host",
    ),
    pytest.param(
        "HTTPS://example.com/mcp", "https://example.com/mcp", "example.com", 443, "/mcp", id="uppercase-scheme"
    ),
    pytest.param("https://bücher.de/mcp", "https://xn--bcher-kva.de/mcp", "xn--bcher-kva.de", 443, "/mcp", id="idn"),
    pytest.param(
        "https://xn--bcher-kva.de/mcp", "https://xn--bcher-kva.de/mcp", "xn--bcher-kva.de", 443, "/mcp", id="a-label"
    ),
    pytest.param("https://faß.de/", "https://xn--fa-hia.de/", "xn--fa-hia.de", 443, "/", id="idn-nontransitional"),
    pytest.param("https://例え.jp/", "https://xn--r8jz45g.jp/", "xn--r8jz45g.jp", 443, "/", id="idn-japanese"),
    pytest.param("https://example.com:443/mcp", "https://example.com/mcp", "example.com", 443, "/mcp", id="port-443"),
    pytest.param("https://example.com:/mcp", "https://example.com/mcp", "example.com", 443, "/mcp", id="port-empty"),
    pytest.param(
        "https://example.com/mcp#section", "https://example.com/mcp", "example.com", 443, "/mcp", id="fragment"
    ),
    pytest.param(
        "https://example.com/mcp?x=1&y=two",
        "https://example.com/mcp?x=1&y=two",
        "example.com",
        443,
        "/mcp?x=1&y=two",
        id="query",
    ),
    pytest.param("https://example.com", "https://example.com/", "example.com", 443, "/", id="empty-path"),
    pytest.param(
        "https://example.com?x=1", "https://example.com/?x=1", "example.com", 443, "/?x=1", id="query-no-path"
    ),
    pytest.param("https://example.com./mcp", "https://example.com/mcp", "example.com", 443, "/mcp", id="trailing-dot"),
    pytest.param(
        "https://Bücher.DE:443/a?b=c#d",
        "https://xn--bcher-kva.de/a?b=c",
        "xn--bcher-kva.de",
        443,
        "/a?b=c",
        id="idn-port-query-fragment",
    ),
    pytest.param(
        "https://example.com/a%20b/%7E",
        "https://example.com/a%20b/%7E",
        "example.com",
        443,
        "/a%20b/%7E",
        id="percent-encoded-path-kept",
    ),
    pytest.param(
        "https://localhost.example.com/mcp",
        "https://localhost.example.com/mcp",
        "localhost.example.com",
        443,
        "/mcp",
        id="special-label-not-last",
    ),
    pytest.param(LONGEST_URL, LONGEST_URL, "example.com", 443, LONGEST_URL[len("https://example.com") :], id="2048"),
    # U+3002 IDEOGRAPHIC FULL STOP maps to "." (UTS #46): a trailing one is a trailing root dot.
    pytest.param(
        "https://example.com。/mcp",
        "https://example.com/mcp",
        "example.com",
        443,
        "/mcp",
        id="trailing-ideographic-dot",
    ),
]


@pytest.mark.parametrize(("url", "reason"), REFUSED)
def test_refused(url: str, reason: str, network_calls: list[str]) -> None:
    with pytest.raises(TargetRefused) as info:
        check_url(url)
    assert info.value.reason == reason
    if reason == "scheme_not_https":  # (it says what is checked here, and may add a "did you mean")
        assert info.value.message.startswith(scheme_refusal("", allow_private=False).split(" The URL")[0])
    else:
        assert info.value.message == REFUSAL_REASONS[reason]
    assert network_calls == []


def test_refused_table_is_big_enough() -> None:
    assert len(REFUSED) >= 45


@pytest.mark.parametrize(("url", "expected_url", "host", "port", "target"), ACCEPTED)
def test_accepted(url: str, expected_url: str, host: str, port: int, target: str, network_calls: list[str]) -> None:
    checked = check_url(url)
    assert checked.url == expected_url
    assert checked.host == host
    assert checked.port == port
    assert checked.target == target
    assert checked.scheme == "https"
    assert checked.ip_literal is None
    assert checked.origin == ("https", host, 443)
    # Normalisation is idempotent: the normalised URL checks to the same result.
    assert check_url(checked.url) == checked
    assert network_calls == []


#: Every spelling of the IPv6 loopback is this one host (RFC 5952 form).
LOOPBACK_V6 = TargetUrl(
    scheme="http", host="::1", port=9, target="/x", url="http://[::1]:9/x", ip_literal=ipaddress.IPv6Address("::1")
)

DEV_ACCEPTED: list[object] = [
    pytest.param(
        "http://127.0.0.1:8000/mcp",
        TargetUrl(
            scheme="http",
            host="127.0.0.1",
            port=8000,
            target="/mcp",
            url="http://127.0.0.1:8000/mcp",
            ip_literal=ipaddress.IPv4Address("127.0.0.1"),
        ),
        id="http-loopback-v4",
    ),
    *(
        pytest.param(spelling, LOOPBACK_V6, id=name)
        for spelling, name in [
            ("http://[::1]:9/x", "http-loopback-v6"),
            ("http://[0:0:0:0:0:0:0:1]:9/x", "http-loopback-v6-long-spelling-is-one-host"),
            ("http://[0:0::1]:9/x", "http-loopback-v6-short-spelling-is-one-host"),
        ]
    ),
    pytest.param(
        "https://localhost:8443/mcp",
        TargetUrl(scheme="https", host="localhost", port=8443, target="/mcp", url="https://localhost:8443/mcp"),
        id="https-localhost-port",
    ),
    pytest.param(
        "http://intranet/mcp",
        TargetUrl(scheme="http", host="intranet", port=80, target="/mcp", url="http://intranet/mcp"),
        id="http-single-label-default-port",
    ),
]


@pytest.mark.parametrize(("url", "expected"), DEV_ACCEPTED)
def test_allow_private_accepts(url: str, expected: TargetUrl, network_calls: list[str]) -> None:
    assert check_url(url, allow_private=True) == expected
    assert network_calls == []


DEV_REFUSED: list[object] = [
    pytest.param("http://user@127.0.0.1:8000/mcp", "userinfo_present", id="userinfo-user"),
    pytest.param("http://user:pass@[::1]:9/x", "userinfo_present", id="userinfo-user-pass-v6"),
    pytest.param("http://user%40x@localhost:8000/mcp", "userinfo_present", id="userinfo-encoded-at"),
    pytest.param("http://127.0.0.1:8000/servers/{id}", "placeholder_present", id="placeholder-braces"),
    pytest.param("http://127.0.0.1:8000/servers/<name>", "placeholder_present", id="placeholder-angle"),
    pytest.param("http://127.0.0.1:8000/mcp?t=${TOKEN}", "placeholder_present", id="placeholder-dollar"),
    pytest.param("http://127.0.0.1:8000/servers/%7Bid%7D", "placeholder_present", id="placeholder-encoded"),
    pytest.param(LONG_DEV_URL, "url_too_long", id="too-long"),
    pytest.param(LONG_URL, "url_too_long", id="too-long-https"),
    pytest.param("ftp://127.0.0.1/mcp", "scheme_not_https", id="scheme-ftp"),
    pytest.param("ws://127.0.0.1:8000/mcp", "scheme_not_https", id="scheme-ws"),
    pytest.param("http://127.0.0.1:0/mcp", "url_malformed", id="port-0"),
    pytest.param("http://127.0.0.1:65536/mcp", "url_malformed", id="port-65536"),
    pytest.param("http://evil.com\\@127.0.0.1/mcp", "url_malformed", id="backslash-at"),
    pytest.param("http://127.0.0.1:8000/mcp\n", "url_malformed", id="newline"),
]


@pytest.mark.parametrize(("url", "reason"), DEV_REFUSED)
def test_allow_private_still_refuses(url: str, reason: str, network_calls: list[str]) -> None:
    with pytest.raises(TargetRefused) as info:
        check_url(url, allow_private=True)
    assert info.value.reason == reason
    assert network_calls == []


def test_network_calls_fixture_records_and_blocks(network_calls: list[str]) -> None:
    with pytest.raises(OSError):
        socket.getaddrinfo("localhost", 443)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", 9))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(OSError):
        sock.connect(("127.0.0.1", 9))
    assert len(network_calls) == 3
