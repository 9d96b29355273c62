"""Test networking: resolvers with fixed answers and a backend that plays a public network on loopback.

Tests never send traffic off this machine. To exercise the production rules (https on port
443 to a public address), :class:`LoopbackNat` maps chosen public ``(address, port)`` pairs to
loopback servers, the way a NAT would, and refuses every other dial without sending a packet.
The guard still sees the public address from the resolver, exactly as in production.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
from pathlib import Path
from typing import Any

import httpx2
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.guard import IPAddress
from app.net.dial import SocketDialler

PUBLIC = ipaddress.ip_address("93.184.215.14")


def loopback_addrinfo(port: Any) -> list[Any]:
    """What ``socket.getaddrinfo`` answers for a name that resolves to 127.0.0.1 alone."""
    return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", int(port or 0)))]


class FixedResolver:
    """A :class:`app.guard.Resolver` with fixed answers; records every query."""

    def __init__(self, answers: dict[str, list[IPAddress]]) -> None:
        self.answers = answers
        self.queries: list[str] = []

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        self.queries.append(host)
        return self.answers[host]


class LoopbackNat(SocketDialler):
    """Dials ``(public address, port)`` pairs from ``routes`` on loopback; refuses all else."""

    def __init__(self, routes: dict[tuple[str, int], int]) -> None:
        self.routes = routes
        self.dialled: list[tuple[str, int]] = []

    async def connect_tcp(self, address: str, port: int, timeout: float = 5.0) -> socket.socket:  # noqa: ASYNC109
        self.dialled.append((address, port))
        local_port = self.routes.get((address, port))
        if local_port is None:
            raise httpx2.ConnectError("refused by the test network: no route")
        return await super().connect_tcp("127.0.0.1", local_port, timeout)


def server_context(ca: trustme.CA, *names: str, **validity: datetime.datetime) -> ssl.SSLContext:
    """A server TLS context with a leaf for ``names`` issued by ``ca`` (``not_before``/``not_after`` optional)."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names, **validity).configure_cert(context)  # type: ignore[arg-type]
    return context


def self_signed_der(name: str, directory: Path, not_after_year: int | None = None) -> bytes:
    """A DER certificate for ``name`` that signs itself (see :func:`self_signed_context`)."""
    self_signed_context(name, directory, not_after_year)
    return x509.load_pem_x509_certificate((directory / "self.pem").read_bytes()).public_bytes(
        serialization.Encoding.DER
    )


def self_signed_context(name: str, directory: Path, not_after_year: int | None = None) -> ssl.SSLContext:
    """A server TLS context whose certificate for ``name`` signs itself."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(
            datetime.datetime(not_after_year, 1, 1, tzinfo=datetime.UTC)
            if not_after_year
            else now + datetime.timedelta(days=30)
        )
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "self.pem", directory / "self.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_path, key_path)
    return context
