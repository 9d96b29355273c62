"""Paid checks with x402 v2: requirements, the facilitator client, and the payment gate."""

from __future__ import annotations

from app.payment.errors import FacilitatorUnavailable, PaymentError
from app.payment.facilitator import Facilitator, HttpFacilitator
from app.payment.gate import Payment, PaymentGate
from app.payment.requirements import payment_required, payment_requirements

__all__ = [
    "Facilitator",
    "FacilitatorUnavailable",
    "HttpFacilitator",
    "Payment",
    "PaymentError",
    "PaymentGate",
    "payment_required",
    "payment_requirements",
]
