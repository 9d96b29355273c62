"""A monitor's token: what its owner reads, stops and changes it with.

Policy: the token is 32 random bytes (``secrets.token_urlsafe``, 256 bits), shown once at
creation and kept only as its SHA-256: with that much entropy a plain hash is as hard to
reverse as the token is to guess, and a database leak gives no token. Tokens are compared as
digests with :func:`hmac.compare_digest` (constant time). The monitor's webhook secret is
derived, never stored (:mod:`app.webhooks.secrets`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


def new_token() -> str:
    """A fresh monitor token."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What is stored of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, digest: str) -> bool:
    """Whether ``token`` is the one whose digest is ``digest`` (constant time)."""
    return hmac.compare_digest(token_digest(token).encode(), digest.encode())
