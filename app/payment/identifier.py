"""The x402 ``payment-identifier`` extension: the client's idempotency key for one paid check.

Sources: the x402 extension specification ``payment-identifier`` (``specs/extensions/
payment_identifier.md``: idempotency behaviour, request binding, recovering a lost response)
and the ``x402`` package's ``x402.extensions.payment_identifier`` (the declaration, its JSON
Schema, the id rules: 16 to 128 characters of ``A-Z a-z 0-9 _ -``).

Policy:

1. Every ``PaymentRequired`` declares the extension, optional (``info.required`` false).
2. A payment may carry ``extensions["payment-identifier"].info.id``. The extension must be
   ``{"info": {"required": <bool>, "id"?: <id>}, ...}`` with a well-formed id, else 400
   ``invalid_payment_identifier`` and nothing is verified or charged. The id is matched whole
   (the package's ``^...$`` pattern lets a trailing newline through). The ``schema`` the client
   echoes is not evaluated: it is the client's copy, and running a JSON Schema someone else
   wrote is a way to burn our CPU.
3. The id is bound to the exact request: a SHA-256 over the canonical ``PaymentPayload`` JSON
   (sorted keys; the signature included) and the check request (URL, options, a digest of any
   credential headers). The lookup runs before verification, so it is unauthenticated; the
   spec asks for the exact payload for that reason.
4. Looked up before anything is verified:

   - a new id is claimed (``SET NX``) and the check goes on as usual;
   - the same id and fingerprint, served: the stored answer (result and ``PAYMENT-RESPONSE``),
     with no probe, no verification and no settlement;
   - the same id and fingerprint, in progress: the copy waits (bounded) for the first one's
     answer; if the first is not served, the copy goes on in its place; past the bound 409
     ``payment_in_use`` (retry later);
   - the same id with another fingerprint: 409 ``payment_identifier_conflict``; nothing is
     verified, probed or charged.
5. Keys are scoped to the paid resource (its public URL) and hashed (:func:`app.store.key`).
   A claim lives as long as a check may take; a served answer at least as long as the payment's
   lock (longer than its ``maxTimeoutSeconds`` window) and until the authorization's
   ``validBefore``, at most :data:`MAX_ANSWER_TTL_S`. A check that is not served drops the
   claim, so the same payment may be sent again.
6. These are state, not cache: the embedded store never evicts them before they expire (only
   badge keys are evictable), and with Redis every instance sees them.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import anyio
from x402.extensions.payment_identifier import (
    PAYMENT_ID_MAX_LENGTH,
    PAYMENT_ID_MIN_LENGTH,
    PAYMENT_IDENTIFIER,
    declare_payment_identifier_extension,
    validate_payment_identifier,
)
from x402.schemas import PaymentPayload, SettleResponse

from app.errors import SondeError
from app.store import Store, key

#: The id, matched whole (``re.fullmatch``).
ID_PATTERN = re.compile(rf"[A-Za-z0-9_-]{{{PAYMENT_ID_MIN_LENGTH},{PAYMENT_ID_MAX_LENGTH}}}")
#: The longest a served answer is kept for its id, seconds.
MAX_ANSWER_TTL_S = 24 * 3600.0
_PENDING = b"pending"
_SERVED = b"served"
_POLL_S = (0.05, 0.1, 0.2, 0.4, 0.5)


class InvalidPaymentIdentifier(SondeError):
    """The payment's ``payment-identifier`` extension is malformed (reason ``invalid_payment_identifier``)."""


class PaymentIdentifierConflict(SondeError):
    """The id was first used with another payment or request (reason ``payment_identifier_conflict``)."""


class PaymentIdentifierBusy(SondeError):
    """A check with this id and payment is still running (reason ``payment_in_use``)."""


def declaration() -> dict[str, Any]:
    """The ``extensions`` entry of our ``PaymentRequired`` (the package's, optional id)."""
    return {PAYMENT_IDENTIFIER: declare_payment_identifier_extension(required=False)}


def identifier_of(payload: PaymentPayload) -> str | None:
    """The payment's id, ``None`` when it carries none.

    Raises:
        InvalidPaymentIdentifier: the extension or its id is malformed (policy step 2).
    """
    extension = (payload.extensions or {}).get(PAYMENT_IDENTIFIER)
    if extension is None:
        return None
    if not isinstance(extension, dict):
        message = "the payment-identifier extension is not an object"
        raise InvalidPaymentIdentifier("invalid_payment_identifier", message)
    # The structure and id rules are the package's; the client's echoed schema is left out.
    result = validate_payment_identifier({"info": extension.get("info")})
    if not result.valid:
        message = "the payment-identifier extension is malformed: " + "; ".join(result.errors)
        raise InvalidPaymentIdentifier("invalid_payment_identifier", message[:300])
    identifier = extension["info"].get("id")
    if identifier is None:
        return None
    if not ID_PATTERN.fullmatch(identifier):
        raise InvalidPaymentIdentifier(
            "invalid_payment_identifier",
            f"a payment identifier is {PAYMENT_ID_MIN_LENGTH} to {PAYMENT_ID_MAX_LENGTH} characters of A-Z a-z 0-9 _ -",
        )
    return str(identifier)


def fingerprint(payload: PaymentPayload, request: bytes) -> str:
    """SHA-256 (hex) of the exact payload and the check request (policy step 3)."""
    document = payload.model_dump(mode="json", by_alias=True, exclude_none=True)
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    digest = hashlib.sha256()
    for part in (canonical, request):
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


@dataclass(frozen=True)
class Claim:
    """This check holds the id (``value`` is its claim, to drop only our own)."""

    key: str
    fingerprint: str
    value: bytes


@dataclass(frozen=True)
class Answer:
    """A served paid check, kept for its id."""

    payload: bytes
    receipt: SettleResponse


class Identifiers:
    """Claims and served answers per payment id, in the store (see the module policy).

    Args:
        store: shared (Redis) or in process.
        resource: the paid resource's public URL (keys are scoped to it).
        claim_ttl_s: how long a claim lives (as long as a check may take).
        wait_s: how long a copy waits for the first one's answer before 409 ``payment_in_use``.
    """

    def __init__(self, store: Store, resource: str, claim_ttl_s: float, wait_s: float) -> None:
        self.store = store
        self.resource = resource
        self.claim_ttl_s = claim_ttl_s
        self.wait_s = wait_s

    def _key(self, identifier: str) -> str:
        return key("payment-id", self.resource, identifier)

    async def claim(self, identifier: str, fingerprint: str) -> Claim | Answer:
        """Policy step 4: the stored answer for this id, or a claim on it for this check.

        Raises:
            PaymentIdentifierConflict: the id is bound to another fingerprint.
            PaymentIdentifierBusy: the first check with this id did not finish within ``wait_s``.
        """
        name = self._key(identifier)
        mine = Claim(name, fingerprint, b"\n".join((_PENDING, fingerprint.encode(), secrets.token_hex(8).encode())))
        deadline = time.monotonic() + self.wait_s
        for attempt in range(10_000):
            if await self.store.set_nx(name, mine.value, self.claim_ttl_s):
                return mine
            state = await self.store.get(name)
            if state is None:
                continue  # dropped or expired between the two calls: claim it again
            kind, bound, rest = [*state.split(b"\n", 2), b"", b""][:3]
            if bound != fingerprint.encode():
                raise PaymentIdentifierConflict(
                    "payment_identifier_conflict",
                    "this payment identifier was used with another payment or request; nothing was charged",
                )
            if kind == _SERVED:
                receipt_json, _, payload = rest.partition(b"\n")
                return Answer(payload, SettleResponse.model_validate_json(receipt_json))
            if time.monotonic() >= deadline:
                break
            await anyio.sleep(_POLL_S[min(attempt, len(_POLL_S) - 1)])
        raise PaymentIdentifierBusy("payment_in_use", "a check with this payment identifier is still running")

    async def record(self, claim: Claim, answer: Answer, ttl_s: float) -> None:
        """Keep the served answer for the claimed id (policy step 5)."""
        receipt = answer.receipt.model_dump_json(by_alias=True, exclude_none=True).encode()
        value = b"\n".join((_SERVED, claim.fingerprint.encode(), receipt, answer.payload))
        await self.store.set(claim.key, value, ttl_s)

    async def drop(self, claim: Claim) -> None:
        """The check was not served: free the id (only our own claim), even while being cancelled."""
        with anyio.CancelScope(shield=True):
            await self.store.delete_if_equal(claim.key, claim.value)


def answer_ttl(minimum_s: float, valid_before: str, now: float | None = None) -> float:
    """How long a served answer is kept: ``minimum_s``, or until ``valid_before`` (a decimal
    Unix time) when later, at most :data:`MAX_ANSWER_TTL_S`."""
    remaining = int(valid_before) - (time.time() if now is None else now) + 60
    return min(MAX_ANSWER_TTL_S, max(minimum_s, remaining))
