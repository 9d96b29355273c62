"""Errors of paid checks, in x402 terms, for whatever transport carries the check.

Policy (x402 v2, "HTTP transport" and "MCP transport"): a refused payment is answered with a
status and, for payment answers, the ``PaymentRequired`` document (its ``error`` is our reason
key; over HTTP it is also the base64 ``PAYMENT-REQUIRED`` header). This layer says *what* to
answer; the service decides how (:func:`app.checking.errors.from_payment` turns a
:class:`PaymentError` into its API error), so nothing here imports the service.

::

    SondeError
    ├── PaymentError              a refused or failed paid check (reason, status, headers, document)
    └── FacilitatorUnavailable    the facilitator gave no usable answer (``facilitator_unavailable``)
"""

from __future__ import annotations

from typing import Any

from app.errors import SondeError


class PaymentError(SondeError):
    """A paid check refused or failed.

    Args:
        reason: stable key (listed in the service's ``API_REASONS``).
        message: for people; never parse it.
        status: the HTTP status of the answer.
        headers: response headers (``PAYMENT-REQUIRED``, ``PAYMENT-RESPONSE``, ``Retry-After``).
        document: the x402 ``PaymentRequired`` document (JSON, ``error`` = ``reason``), or
            ``None`` when the answer is a plain error.
    """

    def __init__(
        self,
        reason: str,
        message: str,
        status: int,
        headers: dict[str, str] | None = None,
        document: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(reason, message)
        self.status = status
        self.headers = headers or {}
        self.document = document


class FacilitatorUnavailable(SondeError):
    """The facilitator could not be reached or gave no usable answer (reason ``facilitator_unavailable``)."""
