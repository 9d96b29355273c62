"""Paid checks with x402 v2: requirements, the facilitator client, and the payment gate."""

from __future__ import annotations

from app.payment.facilitator import Facilitator, FacilitatorUnavailable, HttpFacilitator
from app.payment.gate import Payment, PaymentGate
from app.payment.requirements import payment_required, payment_requirements

__all__ = [
    "Facilitator",
    "FacilitatorUnavailable",
    "HttpFacilitator",
    "Payment",
    "PaymentGate",
    "payment_required",
    "payment_requirements",
]
