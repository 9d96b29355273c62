"""The one rooted error hierarchy of mcp-sonde.

Every error carries a stable, machine-readable ``reason`` key. The message is for people and
may change; code and API clients must branch on ``reason`` only.

::

    SondeError
    ├── TargetRefused        the target URL may not be probed (bad form, or not a public host)
    └── PaymentError, ...    a paid check refused or failed (see :mod:`app.payment.errors`)

Faults of the probed server are *not* exceptions: they are normal probe results with a status
class (see :mod:`app.probe.reasons`).
"""

from __future__ import annotations


class SondeError(Exception):
    """Root of all mcp-sonde errors.

    Args:
        reason: stable machine-readable key (snake_case).
        message: human-readable explanation; never parse it.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"{type(self).__name__}(reason={self.reason!r}, message={self.message!r})"


class TargetRefused(SondeError):
    """The URL is refused before any connection is made.

    Raised by :func:`app.guard.check_url` (form) and :func:`app.guard.resolve_target`
    (address). The reason keys are listed in :data:`app.guard.url.REFUSAL_REASONS`.
    """
