"""Paid checks: one payment buys one check, and nothing is charged for a check not served.

Policy (x402 v2, scheme ``exact`` with EIP-3009):

1. Decode ``PAYMENT-SIGNATURE`` (malformed: 400 ``invalid_payment``; a malformed
   ``payment-identifier``: 400 ``invalid_payment_identifier``); it must be for what the route
   it is presented to sells, else 402 ``payment_mismatch``: its ``accepted`` equals one of the
   route's requirements (scheme, network, asset, amount, ``payTo``), its ``resource`` is the
   route's resource (the URL its ``PaymentRequired`` names: a check, one server's baseline, a
   monitor block), and the EIP-3009 authorization itself (the part the payer signed) moves
   exactly that amount to that ``payTo``; network and asset are bound by the signature's
   EIP-712 domain, which the facilitator checks against our requirement. So a payment made
   for one thing does not buy another, even at the same price. A payment with an id is looked up
   first (:mod:`app.payment.identifier`): its served answer again, or 409
   ``payment_identifier_conflict`` for another payment under the same id.
2. Verify with the facilitator against *our* requirement (not the client's copy). Invalid:
   402 with the facilitator's reason. Facilitator down: 503, nothing charged; a facilitator
   whose ``/supported`` lacks the option: 503 ``facilitator_unsupported``
   (:mod:`app.payment.supported`).
3. Lock the authorization in the store, keyed on network, asset, payer and EIP-3009 nonce,
   never on the signature (ECDSA signatures are malleable: a second valid signature for the
   same authorization exists). A lock held by a check in progress: 409 ``payment_in_use``; by
   a settled check: 402 ``payment_already_used``. Nothing is probed for either.
4. After the probe, settle. Success: ``PAYMENT-RESPONSE`` on the 200, and the lock stays
   (marked settled) until the authorization could no longer be valid. A refusal: the result is
   withheld (402 ``settlement_failed`` with ``PAYMENT-RESPONSE`` ``success: false``) and the
   lock released. An *unknown* outcome (the facilitator failed, timed out, or answered
   ``settlement_pending`` after it may have broadcast) is tried once more; if still unknown, the
   lock keeps the result (503 ``settlement_unknown``), and the same payment sent again settles
   again and receives that result, without a new probe. A retry that finds the authorization
   already used on chain counts as paid: EIP-3009 lets it move funds only to our ``payTo``.
5. A check not served (our 4xx/5xx, 429, a probe that failed through our fault) releases the
   lock and is never settled, so the same authorization can be used again.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from dataclasses import dataclass

from pydantic import ValidationError
from x402.http.utils import encode_payment_required_header, encode_payment_response_header
from x402.schemas import PaymentPayload, PaymentRequirements, ResourceInfo, SettleResponse

from app import jsonsafe
from app.payment.errors import FacilitatorUnavailable, PaymentError
from app.payment.facilitator import Facilitator
from app.payment.identifier import (
    Answer,
    Claim,
    Identifiers,
    InvalidPaymentIdentifier,
    PaymentIdentifierBusy,
    PaymentIdentifierConflict,
    answer_ttl,
    fingerprint,
    identifier_of,
)
from app.payment.requirements import matching_requirement, payment_required, payment_requirements, resource_info
from app.payment.supported import FacilitatorUnsupported, SupportCheck
from app.settings import Settings
from app.store import Store, StoreError, key

MAX_HEADER_BYTES = 16 * 1024
_IN_PROGRESS = b"in-progress"
logger = logging.getLogger("mcp_sonde.payment")
_SETTLED = b"settled"
_UNKNOWN = b"unknown\n"  # followed by the probe result, kept for the payer
_AUTHORIZATION_FIELDS = {
    "from": re.compile(r"0x[0-9a-fA-F]{40}"),
    "to": re.compile(r"0x[0-9a-fA-F]{40}"),
    "value": re.compile(r"[0-9]{1,78}"),
    "validAfter": re.compile(r"[0-9]{1,78}"),
    "validBefore": re.compile(r"[0-9]{1,78}"),
    "nonce": re.compile(r"0x[0-9a-fA-F]{64}"),
}
_SIGNATURE = re.compile(r"0x[0-9a-fA-F]{130,4096}")
_RECONCILABLE = ("settlement_pending", "nonce_already_used", "authorization is used")


@dataclass
class Payment:
    """A verified payment holding its lock, or the served answer of its payment identifier.

    Attributes:
        stored_result: the result kept after a settlement whose outcome was unknown.
        claim: this check holds the payment identifier (dropped unless the check is served).
        replay: the answer already served for this payment identifier (nothing is locked).
    """

    payload: PaymentPayload
    requirements: PaymentRequirements
    lock: str
    payer: str
    stored_result: bytes | None = None
    keep_lock: bool = False
    claim: Claim | None = None
    replay: Answer | None = None


class PaymentGate:
    """Verifies, locks and settles x402 payments for the check route (or another paid resource).

    Args:
        settings: price, networks, ``payTo``, timeouts.
        facilitator: verifies and settles.
        store: where authorization locks live (one authorization buys one thing, whichever
            gate took it: the lock's key names the authorization, not the resource).
        price_usd: the price of what this gate sells (default: a check's).
        resource: what this gate sells (default: the check); payment identifiers are kept per resource.
    """

    def __init__(
        self,
        settings: Settings,
        facilitator: Facilitator,
        store: Store,
        *,
        price_usd: str | None = None,
        resource: ResourceInfo | None = None,
    ) -> None:
        self.settings = settings
        self.facilitator = facilitator
        self.store = store
        self.price_usd = price_usd
        self.resource = resource
        self.requirements = payment_requirements(settings, price_usd)
        self.support = SupportCheck(facilitator, self.requirements, settings.facilitator_url)
        claim_ttl = self._lock_ttl
        wait = settings.queue_budget_s + settings.probe_timeout_s + 3 * settings.facilitator_timeout_s
        named = (resource or resource_info(settings)).url
        self.identifiers = Identifiers(store, named, claim_ttl, min(claim_ttl, wait))

    @property
    def enabled(self) -> bool:
        """Paid checks are on (a ``pay_to`` address is configured)."""
        return bool(self.requirements)

    def required(
        self, reason: str, message: str, status: int = 402, headers: dict[str, str] | None = None
    ) -> PaymentError:
        """A refusal that carries the x402 ``PaymentRequired`` document (``error`` = ``reason``)."""
        document = payment_required(self.settings, reason, self.resource, self.price_usd)
        body = document.model_dump(mode="json", by_alias=True, exclude_none=True)
        body["message"] = message
        extra = {"PAYMENT-REQUIRED": encode_payment_required_header(document), "Cache-Control": "no-store"}
        return PaymentError(reason, message, status, headers=extra | (headers or {}), document=body)

    def _decode(self, header: str) -> PaymentPayload:
        invalid = "PAYMENT-SIGNATURE is not a base64 x402 v2 PaymentPayload with an EIP-3009 authorization"
        if len(header) > MAX_HEADER_BYTES:
            raise self.required("invalid_payment", "the PAYMENT-SIGNATURE header is too large", 400)
        try:
            document: object = jsonsafe.loads(base64.b64decode(header.strip(), validate=True))
        except (binascii.Error, ValueError, RecursionError) as exc:
            raise self.required("invalid_payment", invalid, 400) from exc
        return self._validate(document)

    def _validate(self, document: object) -> PaymentPayload:
        """A decoded payment (header JSON, or an MCP ``_meta["x402/payment"]`` object) checked strictly."""
        invalid = "the payment is not an x402 v2 PaymentPayload with an EIP-3009 authorization"
        try:
            payload = PaymentPayload.model_validate(document)
            json.dumps(payload.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")  # no lone surrogates
        except (ValueError, RecursionError, ValidationError, UnicodeError) as exc:
            raise self.required("invalid_payment", invalid, 400) from exc
        if payload.x402_version != 2:
            raise self.required("invalid_payment", "only x402 version 2 is accepted", 400)
        # Exactly one spelling of everything the lock and the facilitator read: a nonce written
        # another way (no 0x, spaces) must not open a second lock for the same authorization.
        authorization = payload.payload.get("authorization")
        signature = payload.payload.get("signature")
        if (
            set(payload.payload) != {"authorization", "signature"}
            or not isinstance(authorization, dict)
            or set(authorization) != set(_AUTHORIZATION_FIELDS)
            or not all(
                isinstance(authorization[name], str) and pattern.fullmatch(authorization[name])
                for name, pattern in _AUTHORIZATION_FIELDS.items()
            )
            or not (isinstance(signature, str) and _SIGNATURE.fullmatch(signature))
        ):
            raise self.required("invalid_payment", invalid, 400)
        return payload

    async def begin(
        self, header: str | dict[str, object], request: bytes = b"", resource: ResourceInfo | None = None
    ) -> Payment:
        """Steps 1 to 3 of the module policy, for a ``PAYMENT-SIGNATURE`` header value or an
        already decoded payload (the MCP tool's ``_meta["x402/payment"]``).

        Args:
            header: the payment.
            request: what the check is for (its URL and options), bound to a payment identifier.
            resource: what the route sells, when it is not the gate's own resource (a baseline
                approval names its server).

        Raises:
            PaymentError: 400/402/409 (see the module docs), or 503 ``facilitator_unavailable`` /
                ``facilitator_unsupported``.
        """
        if not self.enabled:
            raise self.required("payment_required", "paid checks are not configured here; use the free pool")
        payload = self._decode(header) if isinstance(header, str) else self._validate(header)
        try:
            identifier = identifier_of(payload)
        except InvalidPaymentIdentifier as exc:
            raise self.required(exc.reason, exc.message, 400) from exc
        requirement = matching_requirement(payload, self.requirements)
        if requirement is None:
            raise self.required("payment_mismatch", "the payment does not match any accepted payment option")
        sold = resource or self.resource or resource_info(self.settings)
        if payload.resource is None or payload.resource.url != sold.url:
            raise self.required("payment_mismatch", f"the payment was not made for this resource ({sold.url})")
        authorization = payload.payload["authorization"]
        if authorization["value"] != requirement.amount or authorization["to"].lower() != requirement.pay_to.lower():
            raise self.required("payment_mismatch", "the signed authorization is not for this amount and payTo")
        payer, nonce = authorization["from"].lower(), authorization["nonce"].lower()
        lock = key("payment", requirement.network, requirement.asset.lower(), payer, nonce)
        if identifier is None:
            return await self._verify_and_lock(Payment(payload, requirement, lock, payer))
        try:
            held = await self.identifiers.claim(identifier, fingerprint(payload, request))
        except PaymentIdentifierConflict as exc:
            raise PaymentError(exc.reason, exc.message, 409) from exc
        except PaymentIdentifierBusy as exc:
            raise PaymentError(exc.reason, exc.message, 409, headers={"Retry-After": "2"}) from exc
        if isinstance(held, Answer):
            return Payment(payload, requirement, lock, payer, replay=held)
        try:
            return await self._verify_and_lock(Payment(payload, requirement, lock, payer, claim=held))
        except BaseException:
            await self.identifiers.drop(held)
            raise

    async def _verify_and_lock(self, payment: Payment) -> Payment:
        """Steps 2 and 3 for a decoded payment that matches ``payment.requirements``."""
        payload, requirement, lock = payment.payload, payment.requirements, payment.lock
        try:
            await self.support.refuse_unsupported(requirement)
        except FacilitatorUnsupported as exc:
            (kind,) = exc.missing
            message = f"the payment facilitator does not support {kind} at the moment; nothing was charged"
            raise PaymentError(exc.reason, message, 503, headers={"Retry-After": "60"}) from exc
        state = await self.store.get(lock)
        if state == _SETTLED:
            raise self.required("payment_already_used", "this payment has already bought a check")
        if state is not None and state.startswith(_UNKNOWN):
            # A settlement whose outcome was unknown: settle again and hand over the kept result.
            payment.stored_result = state[len(_UNKNOWN) :]
            return payment
        if state == _IN_PROGRESS:
            raise PaymentError("payment_in_use", "this payment is already buying a check", 409)
        try:
            verdict = await self.facilitator.verify(payload, requirement)
        except FacilitatorUnavailable as exc:
            raise PaymentError(exc.reason, "the payment facilitator is unavailable; nothing was charged", 503) from exc
        if not verdict.is_valid and _already_used(verdict.invalid_reason, verdict.invalid_message):
            # Settled already (by a copy sent at the same moment, or elsewhere): say so exactly.
            raise self.required("payment_already_used", "this payment has already bought a check")
        if not verdict.is_valid:
            reason = verdict.invalid_reason or "invalid_payment"
            raise self.required("payment_invalid", f"the facilitator refused the payment: {reason}"[:300])
        if not await self.store.set_nx(lock, _IN_PROGRESS, self._lock_ttl):
            state = await self.store.get(lock)
            if state == _SETTLED:
                raise self.required("payment_already_used", "this payment has already bought a check")
            raise PaymentError("payment_in_use", "this payment is already buying a check", 409)
        return payment

    async def settle(self, payment: Payment, result: bytes) -> SettleResponse:
        """Step 4: settle for ``result`` (the probe result JSON); on success mark the lock settled.

        Raises:
            PaymentError: 402 ``settlement_failed`` (with ``PAYMENT-RESPONSE``), or 503
                ``settlement_unknown`` (the result is kept for a retry with the same payment).
        """
        response: SettleResponse | None = None
        was_unknown = payment.stored_result is not None  # an earlier settlement may have gone through
        for _attempt in range(2):
            try:
                response = await self.facilitator.settle(payment.payload, payment.requirements)
            except FacilitatorUnavailable:
                response, was_unknown = None, True
                continue
            if response.success or not _unknown_outcome(response):
                break
            was_unknown = True
        if response is not None and response.success:
            await self._settled(payment, result, response)
            return response
        if response is not None and was_unknown and await self._used_on_chain(payment, response):
            receipt = SettleResponse(
                success=True, network=payment.requirements.network, payer=payment.payer, transaction=""
            )
            await self._settled(payment, result, receipt)
            return receipt
        if response is None or _unknown_outcome(response):
            payment.keep_lock = True
            try:
                await self.store.set(payment.lock, _UNKNOWN + result, self._settled_ttl)
            except StoreError:  # (the lock stays in progress until it expires; then the chain says "used")
                logger.error("an unknown settlement's result could not be kept: the shared store does not answer")
            message = "the settlement outcome is unknown; send the same payment again to receive the result"
            raise PaymentError("settlement_unknown", message, 503, headers={"Retry-After": "10"})
        headers = {"PAYMENT-RESPONSE": encode_payment_response_header(response)}
        raise self.required("settlement_failed", "settlement failed; the result is withheld", headers=headers)

    async def _used_on_chain(self, payment: Payment, response: SettleResponse) -> bool:
        """After an unknown outcome, whether the authorization was consumed (so our settlement went through).

        The settlement answer may say so; otherwise verification does: the facilitator's
        simulation reports an authorization already used.
        """
        if _already_used(response.error_reason, response.error_message):
            return True
        try:
            verdict = await self.facilitator.verify(payment.payload, payment.requirements)
        except FacilitatorUnavailable:
            return False
        return not verdict.is_valid and _already_used(verdict.invalid_reason, verdict.invalid_message)

    async def _settled(self, payment: Payment, result: bytes, receipt: SettleResponse) -> None:
        """Mark the lock settled and keep the answer for its payment identifier, as far as the
        store takes it: the money has moved, so the answer is served whatever the store does.
        A mark the store did not take leaves the lock in progress until it expires; after that
        the facilitator's verification says the authorization is used (never a second check)."""
        try:
            await self.store.set(payment.lock, _SETTLED, self._settled_ttl)
            await self._remember(payment, result, receipt)
        except StoreError:
            logger.error("a settled payment could not be marked: the shared store does not answer")

    async def _remember(self, payment: Payment, result: bytes, receipt: SettleResponse) -> None:
        """A served check with a payment identifier: keep its answer for the same payment again."""
        if payment.claim is not None:
            ttl = answer_ttl(self._settled_ttl, payment.payload.payload["authorization"]["validBefore"])
            await self.identifiers.record(payment.claim, Answer(result, receipt), ttl)
            payment.claim = None

    @property
    def _lock_ttl(self) -> float:
        """How long a check in progress holds its authorization (and its payment identifier)."""
        return self.settings.payment_timeout_s + self.settings.probe_timeout_s + 60

    @property
    def _settled_ttl(self) -> float:
        return self.settings.payment_timeout_s * 2 + 600

    async def release(self, payment: Payment) -> None:
        """Step 5: the check was not served; free the authorization (and its payment
        identifier) for another try."""
        if payment.claim is not None:
            await self.identifiers.drop(payment.claim)
            payment.claim = None
        if not payment.keep_lock and payment.replay is None:
            await self.store.delete_if_equal(payment.lock, _IN_PROGRESS)

    @staticmethod
    def response_header(response: SettleResponse) -> dict[str, str]:
        """``PAYMENT-RESPONSE`` for a successful settlement."""
        return {"PAYMENT-RESPONSE": encode_payment_response_header(response)}


def _unknown_outcome(response: SettleResponse) -> bool:
    """A failed settlement that may still have moved funds (pending, or broadcast before failing)."""
    reason = (response.error_reason or "") + " " + (response.error_message or "")
    return any(marker in reason for marker in _RECONCILABLE[:1])


def _already_used(reason: str | None, message: str | None) -> bool:
    text = f"{reason or ''} {message or ''}"
    return any(marker in text for marker in _RECONCILABLE[1:])
