"""Credentials for a credentialed check: the headers a server owner sends to check behind sign-in.

Policy:
- ``Authorization`` and up to :data:`MAX_NAMED` other headers. Names are RFC 9110 section 5.1
  tokens; values are visible ASCII with inner spaces and tabs (RFC 9110 section 5.5 field
  values without obs-text), at most :data:`MAX_VALUE` characters: nothing that could split a
  request or smuggle a second header.
- Headers the probe sets itself (framing, content negotiation, MCP protocol headers), hop-by-hop
  headers and ``Origin`` (MCP servers answer 403 to an unexpected ``Origin``) are refused.
- A refusal names the header, never its value: values are secrets and appear in no error,
  log, result or stored record. The result lists header names only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from app.errors import SondeError

MAX_NAMED: Final = 8
MAX_VALUE: Final = 4096
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}")
_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")
FORBIDDEN: Final = frozenset(
    {
        "accept",
        "accept-encoding",
        "connection",
        "content-length",
        "content-type",
        "cookie2",
        "expect",
        "host",
        "keep-alive",
        "last-event-id",
        "mcp-method",
        "mcp-name",
        "mcp-protocol-version",
        "mcp-session-id",
        "origin",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "user-agent",
    }
)


class CredentialRefused(SondeError):
    """A credential header that may not be sent. Reasons: ``header_name_invalid``,
    ``header_not_allowed``, ``header_value_invalid``, ``header_duplicate``, ``too_many_headers``."""


@dataclass(frozen=True)
class Credentials:
    """Validated credential headers (see the module docs); ``repr`` never shows a value."""

    headers: tuple[tuple[str, str], ...]

    def __repr__(self) -> str:
        return f"Credentials(names={self.names()!r})"

    def names(self) -> list[str]:
        """The header names, as given (no values)."""
        return [name for name, _ in self.headers]

    def as_dict(self) -> dict[str, str]:
        """The headers to send."""
        return dict(self.headers)


def validate(headers: Mapping[str, object] | Iterable[tuple[object, object]]) -> Credentials:
    """Check credential headers (a mapping, or name-value pairs as given) against the module's policy.

    Raises:
        CredentialRefused: with a reason key; the message names the header, never its value.
    """
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    for name, value in headers.items() if isinstance(headers, Mapping) else headers:
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise CredentialRefused("header_name_invalid", "a header name must be an HTTP token of 1 to 64 characters")
        lower = name.lower()
        if lower in FORBIDDEN or lower.startswith(("sec-", "proxy-")):
            raise CredentialRefused("header_not_allowed", f"the header {name} may not be set on a check")
        if lower in seen:
            raise CredentialRefused("header_duplicate", f"the header {name} is given twice")
        if not isinstance(value, str) or len(value) > MAX_VALUE or not _VALUE.fullmatch(value):
            raise CredentialRefused(
                "header_value_invalid",
                f"the value of {name} must be 1 to {MAX_VALUE} visible ASCII characters (spaces inside allowed)",
            )
        seen.add(lower)
        kept.append((name, value))
    named = [n for n in seen if n != "authorization"]
    if len(named) > MAX_NAMED:
        raise CredentialRefused("too_many_headers", f"Authorization and at most {MAX_NAMED} other headers")
    return Credentials(tuple(kept))
