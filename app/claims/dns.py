"""The DNS proof of a claim: a TXT record at ``_mcp-sonde.<host>``.

Policy (after the official MCP registry's DNS namespace verification, and the attribute=value
form of RFC 1464):

- The owner publishes a TXT record named ``_mcp-sonde.<host>`` (an underscored name, RFC 8552,
  so it cannot clash with a host of that name) whose text is ``mcp-sonde-claim=<challenge>``.
  Other TXT records at that name are ignored; a record split into several character-strings
  is read joined (RFC 7208 §3.3 reads SPF records so).
- It is looked up with the system's resolver (``/etc/resolv.conf``) or the nameservers an
  operator names (``claim_dns_servers``, ``address`` or ``address:port``): over UDP, over TCP
  when the answer is truncated, within :data:`LIFETIME_S` in all. Only the resolver is asked,
  never the claimed host, so there is no URL for the target guard to clear.
- The name does not exist, or has no TXT record: nothing is published (the nameserver
  answered, so a lapsed claim lapses). No answer in time, a server failure, no resolver
  configured: :class:`DnsUnanswered`, a fault on the way that says nothing of the claim.
- A host that is an IP address has no DNS name to hold the record: the DNS proof is refused
  (``claim_method_refused``) when the claim is opened.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import TYPE_CHECKING, Protocol

from app.errors import SondeError
from app.settings import nameserver

if TYPE_CHECKING:
    import dns.asyncresolver

LIFETIME_S = 5.0
PREFIX = "_mcp-sonde."
ATTRIBUTE = "mcp-sonde-claim="
#: At most this many TXT texts of the name are read, each at most this long.
MAX_TEXTS, MAX_TEXT = 50, 1024


class DnsUnanswered(SondeError):
    """No usable answer from the resolver (reason ``claim_dns_unanswered``)."""


class TxtLookup(Protocol):
    """Read the TXT records of a name."""

    async def texts(self, name: str) -> list[str]:
        """The texts of ``name``'s TXT records (each record's strings joined); ``[]`` when the name
        does not exist or has none.

        Raises:
            DnsUnanswered: no usable answer in time.
        """
        ...


def record_name(host: str) -> str:
    """The name whose TXT record proves a claim of ``host``."""
    return PREFIX + host.rstrip(".")


def record_text(challenge: str) -> str:
    """The text of the TXT record that proves a claim with ``challenge``."""
    return ATTRIBUTE + challenge


def has_name(host: str) -> bool:
    """Whether ``host`` is a DNS name (not an IP address), so it can hold the record."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return True
    return False


class DnsTxt:
    """:class:`TxtLookup` through dnspython's asynchronous stub resolver."""

    def __init__(self, servers: list[str] | None = None, lifetime_s: float = LIFETIME_S) -> None:
        self.servers = [nameserver(item) for item in servers or []]
        self.lifetime_s = lifetime_s

    def _resolver(self) -> dns.asyncresolver.Resolver:
        import dns.asyncresolver  # (imported when first used: start-up does not load it)
        import dns.nameserver

        resolver = dns.asyncresolver.Resolver(configure=not self.servers)
        if self.servers:
            resolver.nameservers = [dns.nameserver.Do53Nameserver(a, p) for a, p in self.servers]
        resolver.lifetime = self.lifetime_s
        resolver.timeout = self.lifetime_s / 2
        resolver.cache = None
        return resolver

    async def texts(self, name: str) -> list[str]:
        """See :class:`TxtLookup`."""
        import dns.exception
        import dns.resolver

        try:
            answer = await self._resolver().resolve(name, "TXT", raise_on_no_answer=False)
        except (dns.resolver.NXDOMAIN, dns.resolver.NoAnswer):
            return []
        except dns.resolver.NoResolverConfiguration:
            raise DnsUnanswered("claim_dns_unanswered", "no DNS resolver is configured") from None
        except dns.exception.Timeout:
            raise DnsUnanswered("claim_dns_unanswered", f"no DNS answer for {name} in time") from None
        except (dns.exception.DNSException, OSError, ValueError) as exc:
            message = f"the DNS lookup of {name} failed ({type(exc).__name__})"
            raise DnsUnanswered("claim_dns_unanswered", message) from None
        texts: list[str] = []
        for record in list(answer.rrset or [])[:MAX_TEXTS]:
            joined = b"".join(getattr(record, "strings", ()))[:MAX_TEXT]
            texts.append(joined.decode("utf-8", "replace"))
        return texts


def published(texts: list[str], challenge: str) -> bool:
    """Whether one of ``texts`` is exactly this challenge's record (compared in constant time)."""
    wanted = record_text(challenge).encode()
    return any(hmac.compare_digest(text.strip().encode(), wanted) for text in texts)
