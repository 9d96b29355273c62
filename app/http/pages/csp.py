"""The Content Security Policy (CSP Level 3, W3C) and the other security headers of every page.

Policy: nothing loads unless named. ``default-src 'none'``; scripts only with this answer's
nonce (``script-src 'nonce-…'``, section 6.1.1 and 7.2 of CSP3: a nonce admits a ``<script
src>`` from our origin as well as inline code; we use only the former); styles only from our
own origin (``style-src 'self'``: no inline ``style`` attribute or element is needed); images
from our origin or ``data:``; forms post only to our origin (``form-action 'self'``); no
``<base>`` (``base-uri 'none'``); no page may frame ours (``frame-ancestors 'none'``, with
``X-Frame-Options: DENY`` for older browsers). The nonce is 128 random bits drawn per answer
(section 7.2: unguessable, never reused), base64url.
"""

from __future__ import annotations

import secrets
from typing import Final

#: Bytes of randomness in a nonce (128 bits, as CSP3 section 7.2 recommends at least).
NONCE_BYTES: Final = 16


def new_nonce() -> str:
    """A fresh nonce for one answer."""
    return secrets.token_urlsafe(NONCE_BYTES)


def policy(nonce: str) -> str:
    """The ``Content-Security-Policy`` value of a page rendered with ``nonce``."""
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'nonce-{nonce}'",
            "style-src 'self'",
            "img-src 'self' data:",
            "form-action 'self'",
            "base-uri 'none'",
            "frame-ancestors 'none'",
        )
    )


def page_headers(nonce: str) -> dict[str, str]:
    """The security headers of a page answer."""
    return {
        "Content-Security-Policy": policy(nonce),
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",
    }
