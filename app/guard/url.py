"""Form checks on a target URL, made before any lookup or connection.

Policy: a production probe reaches only ``https://<public host name>[:443]/...``. Anything a
URL can use to point somewhere else (IP literals in any spelling, user info, odd ports,
special-use names, template placeholders) is refused here, with a stable reason key, before a
resolver or socket is touched. The address check that follows DNS lives in
:mod:`app.guard.target`.

IP literal spellings follow the WHATWG URL Standard's host parser (section 3.5, "ends in a
number" checker): a host whose last label is all digits or ``0x`` + hex digits is an IPv4
address in decimal, octal, hex or short form, so it is refused as a literal whatever it
spells. Host names are normalised with IDNA 2008 + UTS #46 (RFC 5891, UTS #46 non-transitional).

The development switch (``allow_private``) additionally permits ``http``, any port and IP
literals; it never permits user info, placeholders or over-long URLs.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from dataclasses import dataclass
from typing import Final
from urllib.parse import unquote, urlsplit, urlunsplit

import idna

from app.errors import TargetRefused

MAX_URL_LENGTH: Final = 2048

#: Every reason key this module and :mod:`app.guard.target` can refuse a URL with.
REFUSAL_REASONS: Final[dict[str, str]] = {
    "url_malformed": "The URL cannot be parsed, or holds whitespace, control characters or a backslash.",
    "url_too_long": f"The URL is longer than {MAX_URL_LENGTH} characters.",
    "scheme_not_https": "Only https URLs are probed.",
    "port_not_allowed": "Only the default https port (443) is probed.",
    "userinfo_present": "The URL holds user info (user:password@); credentials are never sent.",
    "host_missing": "The URL has no host name.",
    "host_ip_literal": "The host is an IP address literal (in any spelling); a host name is required.",
    "host_idna_invalid": "The host name does not survive IDNA (UTS #46) normalisation.",
    "host_not_public_name": "The host is a single-label or special-use name (localhost, .local, .internal, ...).",
    "placeholder_present": "The URL holds a template placeholder such as {name}, <name> or ${NAME}.",
    "address_not_public": "The host resolves to an address that is not public (loopback, private, ...).",
}

_PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\{[^{}]*\}|<[^<>]*>")
_FORBIDDEN_CHARS = re.compile(r"[\x00-\x20\x7f\\]")
_UNICODE_DOTS: Final = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})
_NUMERIC_LABEL = re.compile(r"^(?:[0-9]+|0[xX][0-9a-fA-F]*)$")
# RFC 6761 / RFC 6762 / RFC 8375 / RFC 7686 / RFC 9476 special-use names, plus names that are
# only meaningful inside private networks.
_SPECIAL_USE_SUFFIXES: Final = (
    "localhost",
    "local",
    "internal",
    "intranet",
    "lan",
    "home",
    "corp",
    "private",
    "home.arpa",
    "arpa",
    "onion",
    "invalid",
    "test",
    "example",
    "alt",
)


@dataclass(frozen=True, slots=True)
class TargetUrl:
    """A target URL that passed the form checks.

    Attributes:
        scheme: ``"https"`` (or ``"http"`` under the development switch).
        host: the host name in ASCII (IDNA A-labels), lower case, without a trailing dot;
            under the development switch it may also be an IP address (IPv6 without brackets).
        port: the effective port (443 for https unless the development switch allowed another).
        target: path and query as sent on the request line (``"/"`` when the URL had no path).
        url: the normalised URL: lower-case scheme and host, default port and fragment dropped.
        ip_literal: the host parsed as an IP address, when it is one (development switch only).
    """

    scheme: str
    host: str
    port: int
    target: str
    url: str
    ip_literal: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None

    @property
    def origin(self) -> tuple[str, str, int]:
        """``(scheme, host, port)``: the origin, for same-origin comparisons (RFC 6454)."""
        return (self.scheme, self.host, self.port)


def _other_scheme(url: str) -> bool:
    """Whether ``url`` begins with a scheme of its own and no ``//`` (``javascript:``, ``data:``):
    a name (RFC 3986 section 3.1) and a colon not followed by a port's digit (``localhost:8080/mcp``
    is a host and a port). Plain string tests: no pattern compiled at import, before a check's
    first packet."""
    name, colon, after = url.partition(":")
    scheme_like = (
        name[:1].isascii() and name[:1].isalpha() and all(c.isascii() and (c.isalnum() or c in "+.-") for c in name)
    )
    return bool(colon) and scheme_like and not after[:1].isdigit()


def scheme_refusal(url: str, allow_private: bool) -> str:
    """The message of a refused scheme: what is checked here, and a "did you mean" for a URL
    without a scheme (``mcp.example.com/mcp``) or with a mistyped one (``htps://``)."""
    checked = "http and https URLs" if allow_private else "https URLs on the default port (443)"
    message = f"Only {checked} are checked here."
    if "://" in url:
        scheme, rest = url.split("://", 1)
        if difflib.get_close_matches(scheme.lower(), ("https", "http"), n=1, cutoff=0.6):
            return f"{message} Did you mean https://{rest[:200]}?"
        return message
    if _other_scheme(url) and not url.lower().startswith(("https:", "http:")):
        return message  # (javascript:, data:, mailto: ...: another scheme, not a host name)
    rest = (url.split(":", 1)[1] if url.lower().startswith(("https:", "http:")) else url).lstrip("/")
    return f"{message} The URL does not begin with a scheme and //: did you mean https://{rest[:200]}?"


def _refuse(reason: str) -> TargetRefused:
    return TargetRefused(reason, REFUSAL_REASONS[reason])


def _is_numeric_host(host: str) -> bool:
    labels = host.split(".")
    if labels and labels[-1] == "" and len(labels) > 1:
        labels = labels[:-1]
    return bool(labels) and bool(_NUMERIC_LABEL.match(labels[-1]))


def _has_placeholder(url: str) -> bool:
    return bool(_PLACEHOLDER.search(url) or _PLACEHOLDER.search(unquote(url)))


def _normalise_host(raw_host: str) -> str:
    # UTS #46 maps these full stops to "." anyway; map them first so the root-dot rule below
    # sees every spelling of a trailing dot (``localhost。`` is ``localhost.``).
    host = raw_host.translate(_UNICODE_DOTS)
    host = host[:-1] if host.endswith(".") else host
    if not host or "%" in host or ".." in host or host.endswith(".") or host.startswith("."):
        raise _refuse("host_idna_invalid")
    try:
        ascii_host = idna.encode(host, uts46=True, transitional=False, std3_rules=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError) as exc:
        raise _refuse("host_idna_invalid") from exc
    return ascii_host.lower()


def _parse_ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_url(url: str, *, allow_private: bool = False) -> TargetUrl:
    """Check the form of a target URL and normalise it.

    Args:
        url: the URL as the user gave it.
        allow_private: the development switch (http, any port, IP literals allowed).

    Returns:
        The normalised :class:`TargetUrl`.

    Raises:
        TargetRefused: with one of the reason keys of :data:`REFUSAL_REASONS`.
    """
    if not isinstance(url, str) or not url:
        raise _refuse("url_malformed")
    if len(url) > MAX_URL_LENGTH:
        raise _refuse("url_too_long")
    if _has_placeholder(url):
        raise _refuse("placeholder_present")
    if _FORBIDDEN_CHARS.search(url) or not url.isprintable():
        raise _refuse("url_malformed")
    try:
        parts = urlsplit(url)
        raw_port = parts.port
    except ValueError as exc:
        raise _refuse("url_malformed") from exc

    scheme = parts.scheme.lower()
    allowed_schemes = ("https", "http") if allow_private else ("https",)
    if scheme not in allowed_schemes:
        raise TargetRefused("scheme_not_https", scheme_refusal(url, allow_private))
    if "@" in parts.netloc:
        raise _refuse("userinfo_present")
    bracketed = parts.netloc.startswith("[")
    raw_host = parts.hostname or ""
    if not raw_host:
        raise _refuse("host_missing")

    default_port = 443 if scheme == "https" else 80
    port = raw_port if raw_port is not None else default_port
    if port != 443 and not allow_private:
        raise _refuse("port_not_allowed")
    if port == 0:
        raise _refuse("url_malformed")

    ip_literal: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    if bracketed:
        ip_literal = _parse_ip_literal(raw_host.split("%", 1)[0])
        if ip_literal is None or "%" in raw_host:
            raise _refuse("url_malformed")
        if not allow_private:
            raise _refuse("host_ip_literal")
        host = str(ip_literal)  # (one spelling, RFC 5952: every spelling of an address is one host)
    else:
        if _is_numeric_host(raw_host) or _parse_ip_literal(raw_host) is not None:
            ip_literal = _parse_ip_literal(raw_host)
            if not allow_private or ip_literal is None:
                raise _refuse("host_ip_literal")
            host = str(ip_literal)
        else:
            host = _normalise_host(raw_host)
            # Full-width digits and dots normalise to ASCII ones: check the spelling again.
            if _is_numeric_host(host):
                raise _refuse("host_ip_literal")
            if not allow_private and _is_special_use(host):
                raise _refuse("host_not_public_name")

    path = parts.path or "/"
    target = path + (f"?{parts.query}" if parts.query else "")
    host_in_url = f"[{host}]" if ":" in host else host
    netloc = host_in_url if port == default_port else f"{host_in_url}:{port}"
    return TargetUrl(
        scheme=scheme, host=host, port=port, target=target, url=f"{scheme}://{netloc}{target}", ip_literal=ip_literal
    )


def _is_special_use(host: str) -> bool:
    if "." not in host:
        return True
    return any(host == suffix or host.endswith("." + suffix) for suffix in _SPECIAL_USE_SUFFIXES)


def without_query(url: str) -> str:
    """``url`` without its query string: what stored and signed records name (a query often
    carries an API key)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")) if parts.query else url
