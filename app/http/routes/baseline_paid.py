"""A baseline bought with an x402 payment of the price of one check.

Order, as a paid check's (:mod:`app.checking.flow`): the payment is verified and locked
(:meth:`~app.checking.services.Services.authorize`), bound through its payment identifier to
what it buys (:func:`paid_request`: the server and the run asked for, or the newest one when
none was named), so the identifier reused for another request is 409
``payment_identifier_conflict``. The approval is then written in one transaction that commits
only once the payment is settled (:meth:`app.history.store.SqlHistory.approve` with a
confirmation): a settlement refused or of unknown outcome leaves nothing approved, and a
database that does not answer leaves nothing charged (503 ``history_unavailable``, the lock
released). A payment that already bought something is 402 ``payment_already_used``; the same
payment with the same payment identifier sent again for the same request gets the answer it
bought, with no second approval and no second charge. The one window left: a commit that fails
after the settlement went through (the payment is spent, the answer 503).

Every 402 of the route is the x402 ``PaymentRequired`` document of this resource
(:func:`app.payment.payment_required` with the baseline's resource) with ``host_proof``, how
to approve without paying.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from starlette.responses import Response
from x402.http.utils import encode_payment_required_header
from x402.schemas import SettleResponse

from app.baselines.store import HOST_PROOF, Baseline, BaselineHeld
from app.checking.errors import ApiError, from_payment
from app.checking.services import Services
from app.errors import SondeError
from app.history.records import Toolset
from app.http.bodies.baseline import PROOF_HEADER, resource, view
from app.http.routes.paths import unavailable
from app.payment import Payment, PaymentGate, payment_required


def paid_request(server_id: str, run_id: str | None) -> bytes:
    """What a paid approval is for, as bound to its payment identifier (the run as asked: ``None``
    is the newest, so the same request sent again is the same request)."""
    return json.dumps({"approve_baseline": server_id, "run_id": run_id}).encode()


def offer(services: Services, server_id: str, instructions: dict[str, Any], exc: ApiError) -> ApiError:
    """A 402 of this route: the ``PaymentRequired`` document of the baseline resource, with ``host_proof``."""
    settings = services.settings
    if exc.status_code != 402:
        if "PAYMENT-REQUIRED" in exc.headers:  # (invalid_payment: the document names this resource too)
            document = payment_required(settings, exc.reason, resource(settings, server_id))
            exc.headers = exc.headers | {"PAYMENT-REQUIRED": encode_payment_required_header(document)}
        return exc
    message = exc.message
    if exc.reason == "payment_required":
        how = (
            f"prove control of the host instead: place host_proof.document at {instructions['url']} and send "
            f"this request again with {PROOF_HEADER}: host"
        )
        message = (
            f"approving a baseline costs USD {settings.price_usd} (x402: PAYMENT-SIGNATURE); or {how}"
            if services.payments.enabled
            else f"paid approvals are not configured on this instance (accepts is empty); {how}"
        )
    document = payment_required(settings, exc.reason, resource(settings, server_id))
    body = document.model_dump(mode="json", by_alias=True, exclude_none=True)
    body |= {"message": message, "host_proof": instructions}
    headers = exc.headers | {"PAYMENT-REQUIRED": encode_payment_required_header(document), "Cache-Control": "no-store"}
    return ApiError(exc.reason, message, 402, headers=headers, body=body)


async def approve_paid(
    services: Services,
    server_id: str,
    run_id: str | None,
    toolset: Toolset,
    instructions: dict[str, Any],
    client: str,
    payment: str | None,
) -> Response:
    """Approve ``toolset`` (read by the run ``toolset.run_id``; ``run_id`` as asked) for a payment.

    Raises:
        ApiError: 402 (with ``host_proof``) without a payment or for a refused one; 400, 409 or
            503 for payment faults; 404 ``run_not_found``; 503 ``history_unavailable``.
    """
    await _not_held(services, server_id)
    if payment is None:
        raise offer(services, server_id, instructions, from_payment(services.payments.required("payment_required", "")))
    try:
        sold = resource(services.settings, server_id)
        paid = await services.authorize(payment, False, client, paid_request(server_id, run_id), resource=sold)
    except ApiError as exc:
        _raise_offered(services, server_id, instructions, exc)
    assert isinstance(paid, Payment)  # (a payment was given: never a free-pool draw)
    settled = settling = False
    try:
        if paid.replay is not None:  # the same payment and identifier again: the answer it bought
            settled = True
            headers = PaymentGate.response_header(paid.replay.receipt)
            return Response(paid.replay.payload, media_type="application/json", headers=headers)
        answer, receipts = b"", list[SettleResponse]()

        async def confirm(baseline: Baseline) -> None:
            nonlocal answer, settling
            answer = json.dumps(view(server_id, baseline)).encode()
            settling = True
            receipts.append(await services.settle(paid, answer))

        assert toolset.run_id is not None
        try:
            approved = await services.baselines.approve(server_id, toolset.run_id, "payment", confirm)
        except BaselineHeld as exc:  # the host approved meanwhile: nothing was settled
            raise ApiError(exc.reason, exc.message) from exc
        except SondeError:
            raise
        except Exception as exc:  # any driver or network fault: the database does not answer
            raise unavailable(exc) from exc
        if approved is None:  # pruned since it was looked up: nothing was settled
            raise ApiError("run_not_found", "the run is no longer kept")
        settled = True
        return Response(answer, media_type="application/json", headers=PaymentGate.response_header(receipts[0]))
    except ApiError as exc:
        _raise_offered(services, server_id, instructions, exc)
    finally:
        if not settled:
            await services.payments.release(paid)
            if not settling:  # (a settlement's own outcome is counted by Services.settle)
                services.metrics.payments.labels(outcome="released").inc()


async def _not_held(services: Services, server_id: str) -> None:
    """Refuse, before any payment is taken, to buy an approval over the host's own.

    Raises:
        ApiError: 409 ``baseline_held``; 503 ``history_unavailable``.
    """
    try:
        current = await services.baselines.baseline(server_id)
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if current is not None and current.approved_by == HOST_PROOF:
        held = BaselineHeld()
        raise ApiError(held.reason, held.message)


def _raise_offered(services: Services, server_id: str, instructions: dict[str, Any], exc: ApiError) -> NoReturn:
    offered = offer(services, server_id, instructions, exc)
    if offered is exc:
        raise exc
    raise offered from exc
