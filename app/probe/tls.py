"""Facts about the server's TLS certificate (RFC 5280 fields), verified or not.

Policy: every https probe reports the leaf certificate's validity dates, days left, issuer,
subject and the DNS names it covers. When verification fails, the probe opens one more TLS
connection to the same pinned address with verification off, only to read the certificate,
sends nothing over it, and closes it: the dates are reported although the status is ``tls``.
"""

from __future__ import annotations

import contextlib
import ssl
from datetime import UTC, datetime

import anyio
import httpx2
from cryptography import x509
from cryptography.x509.oid import NameOID
from pydantic import BaseModel, ConfigDict, Field

from app.net.dial import open_connection
from app.net.transport import PinnedBackend
from app.probe.text import clean_text


class TlsInfo(BaseModel):
    """The leaf certificate the server presented.

    Attributes:
        verified: the chain and host name verified against the trusted roots.
        not_before, not_after: validity, ISO 8601 UTC.
        days_left: whole days from the probe to ``not_after`` (negative once expired).
        issuer, subject: common names (or the full RFC 4514 string when there is none).
        names: DNS names of the subject alternative name extension (first 50).
    """

    model_config = ConfigDict(extra="forbid")
    verified: bool
    not_before: datetime | None = None
    not_after: datetime | None = None
    days_left: int | None = None
    issuer: str | None = None
    subject: str | None = None
    names: list[str] = Field(default_factory=list)


def _name(name: x509.Name) -> str | None:
    common = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    value = common[0].value if common else name.rfc4514_string()
    return clean_text(value if isinstance(value, str) else value.decode("utf-8", "replace"), 256)


def certificate_facts(der: bytes, *, verified: bool, now: datetime | None = None) -> TlsInfo:
    """Facts of a DER certificate; an unparsable one gives only ``verified``."""
    try:
        cert = x509.load_der_x509_certificate(der)
    except ValueError:
        return TlsInfo(verified=verified)
    info = TlsInfo(verified=verified)
    # Each field is read on its own: a certificate can hold dates Python cannot represent
    # (year 0) or malformed names, and what can be read is still reported.
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        info.names = [n for n in (clean_text(v, 253) for v in san.get_values_for_type(x509.DNSName)[:50]) if n]
    except (x509.ExtensionNotFound, ValueError):
        pass
    with contextlib.suppress(ValueError):
        info.not_before = cert.not_valid_before_utc
    try:
        info.not_after = cert.not_valid_after_utc
        info.days_left = (info.not_after - (now or datetime.now(UTC))).days
    except (ValueError, OverflowError):
        info.not_after = None
    for field, name in (("issuer", cert.issuer), ("subject", cert.subject)):
        with contextlib.suppress(ValueError):
            setattr(info, field, _name(name))
    return info


async def read_unverified_certificate(backend: PinnedBackend, host: str, port: int, timeout_s: float) -> bytes | None:
    """Connect through ``backend`` (pinned), complete a TLS handshake without verification, return the leaf DER."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with anyio.move_on_after(timeout_s):
        try:
            sock = await backend.connect_tcp(host, port, timeout_s)
            connection = await open_connection(sock, (context, host), timeout_s)
        except (httpx2.ConnectError, httpx2.ConnectTimeout, OSError):
            return None
        ssl_object = connection.ssl_object
        der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
        connection.close()
        return der if isinstance(der, bytes) else None
    return None
