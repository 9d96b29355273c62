"""``/v1/monitors``: monitors bought with an x402 payment for a block of runs, read and stopped with their token.

``POST /v1/monitors`` order, as a paid baseline's (:mod:`app.http.routes.baseline_paid`): the
body (:mod:`app.http.bodies.monitors`), then both URLs through the target guard (form, one
lookup, every address public unless the development switch is on): a refused URL or webhook
is 422 with the guard's reason, before any payment is asked or taken (a webhook whose name
does not resolve is 422 ``webhook_unresolved``; a monitored URL that does not resolve now is
taken, its runs say ``dns``). Neither URL may be on the opt-out list (:mod:`app.optout`: an
opted-out host is never contacted, by a run or by a webhook): 422 ``opted_out``, before any
payment, rather than a block whose every run would be skipped. Then the payment for one
block (:mod:`app.monitors.pricing`): without one, 402 with the x402 ``PaymentRequired`` document of ``/v1/monitors`` and
``monitor_block`` (how many runs it buys); with one, it is verified and locked
(:meth:`~app.checking.services.Services.authorize` through the monitors' gate), the monitor is
written in a transaction that commits only once the payment is settled
(:meth:`app.monitors.store.MonitorStore.create`), and the answer is 201 with the monitor id,
its token and its webhook secret, each shown this once. A payment that already bought
something is 402 ``payment_already_used`` (one payment never makes two monitors: the
database refuses a second row for it too); the same payment with the same payment
identifier sent again gets the 201 it bought, without the token and secret (``null``:
nothing keeps them) and with no second monitor or charge.

``GET`` and ``DELETE /v1/monitors/{monitor_id}`` and ``GET .../deliveries`` take
``Authorization: Bearer <monitor token>``; an unknown id, a wrong token and no token are the
same ``404 monitor_not_found`` (compared in constant time). Every answer says
``Cache-Control: no-store``.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.attest.errors import NoSigningKey
from app.checking.errors import ApiError, from_payment
from app.checking.services import Services
from app.errors import SondeError, TargetRefused
from app.guard import ResolutionFailed, ResolverBusy, check_url, resolve_target
from app.guard.shares import LookupOwner, lookups_for
from app.http.bodies.monitors import MonitorRequest, delivery_view, monitor_view, read_monitor_request
from app.http.budget import budgeted
from app.http.routes.ops import services_of
from app.http.routes.paths import unavailable
from app.monitors.pricing import block_terms
from app.monitors.store import Monitor, PaymentSpent, new_monitor_id
from app.monitors.tokens import new_token, token_digest
from app.optout import matches
from app.payment import Payment, PaymentGate
from app.webhooks.secrets import as_whsec

NO_STORE = {"Cache-Control": "no-store"}
MONITOR_ID = re.compile(r"^mon_[0-9a-f]{24}$")
MAX_LIMIT = 100
DEFAULT_LIMIT = 20


async def create_monitor(request: Request) -> Response:
    """``POST /v1/monitors`` (see the module docs)."""
    services = services_of(request)
    return await budgeted(request, services, lambda client: _create(request, services, client))


async def _create(request: Request, services: Services, client: str) -> Response:
    settings = services.settings
    body = await read_monitor_request(
        request, settings.max_body_bytes, settings.body_timeout_s, settings.monitor_min_interval_s
    )
    url = await _guarded(services, client, body.url, "url")
    webhook = await _guarded(services, client, body.webhook, "webhook")
    await _not_opted_out(services, {"url": url, "webhook": webhook})
    try:
        services.attestor.ready()  # (every run is signed, and the webhook secret derives from the key)
    except NoSigningKey as exc:
        raise ApiError(exc.reason, exc.message) from exc
    gate = services.monitor_payments
    payment = request.headers.get("payment-signature")
    if not gate.enabled:
        message = "paid monitors are not configured on this instance (it takes no payments); nothing was charged"
        raise ApiError("payments_not_configured", message, headers=NO_STORE)
    if payment is None:
        terms = block_terms(settings)
        message = f"a monitor costs USD {terms['price_usd']} for {terms['runs']} runs (x402: PAYMENT-SIGNATURE)"
        raise offered(services, from_payment(gate.required("payment_required", message)))
    try:
        paid = await services.authorize(payment, False, client, bound(body), gate=gate)
    except ApiError as exc:
        raise offered(services, exc) from exc
    assert isinstance(paid, Payment)  # (a payment was given: never a free-pool draw)
    return await _bought(services, gate, paid, body, url, webhook)


async def _bought(
    services: Services, gate: PaymentGate, paid: Payment, body: MonitorRequest, url: str, webhook: str
) -> Response:
    """Write the monitor for ``paid`` and settle (see the module docs); the lock is released
    unless it was settled."""
    settled = settling = False
    try:
        if paid.replay is not None:  # the same payment and identifier again: the answer it bought
            settled = True
            headers = PaymentGate.response_header(paid.replay.receipt) | NO_STORE
            return Response(paid.replay.payload, 201, media_type="application/json", headers=headers)
        now = datetime.now(UTC)
        monitor_id, token = new_monitor_id(), new_token()
        try:
            keyid, key = services.webhook_secrets.new(monitor_id, now)
        except NoSigningKey as exc:
            raise ApiError(exc.reason, exc.message) from exc
        receipts = []
        spent = hashlib.sha256(paid.lock.encode()).hexdigest()  # (the authorization's key, as the lock names it)

        async def confirm(made: Monitor) -> None:
            nonlocal settling
            settling = True
            kept = answer(made, None, None, services.settings.public_base_url)  # (what a replay gets)
            receipts.append(await services.settle(paid, json.dumps(kept).encode(), gate=gate))

        try:
            made = await services.monitors.create(
                monitor_id=monitor_id, url=url, interval_s=body.interval_s, webhook_url=webhook,
                token_sha256=token_digest(token), secret_keyid=keyid, payment=spent,
                runs=services.settings.monitor_block_runs, now=now, confirm=confirm,
            )  # fmt: skip
        except PaymentSpent as exc:
            raise gate_refusal(gate, exc) from exc
        except SondeError:
            raise
        except Exception as exc:  # any driver or network fault: the database does not answer
            raise unavailable(exc) from exc
        settled = True
        shown = answer(made, token, as_whsec(key), services.settings.public_base_url)
        headers = PaymentGate.response_header(receipts[0]) | NO_STORE
        return JSONResponse(shown, 201, headers=headers)
    except ApiError as exc:
        raise offered(services, exc) from exc
    finally:
        if not settled:
            await gate.release(paid)
            if not settling:  # (a settlement's own outcome is counted by Services.settle)
                services.metrics.payments.labels(outcome="released").inc()


def answer(made: Monitor, token: str | None, secret: str | None, public_url: str) -> dict[str, Any]:
    """The 201 of a monitor made (``token`` and ``secret`` ``None``: as a replay shows it)."""
    view = monitor_view(made, [], public_url)
    return {
        "monitor_id": made.monitor_id,
        "token": token,
        "webhook_secret": secret,
        "shown_once": True,
        **{key: view[key] for key in ("url", "interval_s", "webhook", "state", "runs_bought", "runs_left")},
        "next_due_at": view["next_due_at"],
        "deliveries_url": view["deliveries_url"],
    }


def bound(body: MonitorRequest) -> bytes:
    """What a monitor's payment is for, as bound to its payment identifier."""
    return json.dumps({"monitor": body.url, "interval_s": body.interval_s, "webhook": body.webhook}).encode()


def gate_refusal(gate: PaymentGate, exc: PaymentSpent) -> ApiError:
    """402 ``payment_already_used``, as the gate says it."""
    return from_payment(gate.required(exc.reason, exc.message))


def offered(services: Services, exc: ApiError) -> ApiError:
    """``exc``, with the block's terms on a 402 (whose body is the monitors' ``PaymentRequired`` document)."""
    if exc.status_code == 402 and exc.body is not None:
        exc.body = exc.body | {"monitor_block": block_terms(services.settings)}
    exc.headers = exc.headers | NO_STORE
    return exc


async def _guarded(services: Services, client: str, url: str, member: str) -> str:
    """``url`` (the body's ``member``) normalised, once the target guard let it through.

    Raises:
        ApiError: 422 with the guard's reason, ``webhook_unresolved``; 429/503 when no lookup may be made.
    """
    allow_private = services.settings.allow_private
    try:
        target = check_url(url, allow_private=allow_private)
        with lookups_for(LookupOwner(client, paid=False)):
            await resolve_target(target, resolver=services.resolver, allow_private=allow_private)
    except TargetRefused as exc:
        raise ApiError(exc.reason, f"{member}: {exc.message}", 422) from exc
    except ResolutionFailed as exc:
        if member == "webhook":
            raise ApiError("webhook_unresolved", f"the webhook's host does not resolve ({exc.reason})") from exc
    except ResolverBusy as exc:
        raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
    except SondeError as exc:  # (this client's share of lookups is taken)
        raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
    return target.url


async def _not_opted_out(services: Services, urls: dict[str, str]) -> None:
    """Refuse a monitor that would contact an opted-out host or URL.

    Raises:
        ApiError: 422 ``opted_out``; 503 ``history_unavailable`` when the list cannot be read.
    """
    try:
        listed = await services.optouts.items()
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    for member, url in urls.items():
        if matches(url, listed):
            raise ApiError("opted_out", f"{member}: its owner asked not to be contacted (see /probe)", 422)


def _bearer(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _owned(request: Request, services: Services) -> Monitor:
    """The monitor of the path, for its token.

    Raises:
        ApiError: 404 ``monitor_not_found`` (unknown id, wrong or no token alike); 503 ``history_unavailable``.
    """
    monitor_id = request.path_params["monitor_id"]
    token = _bearer(request) or ""
    try:
        found = await services.monitors.get(monitor_id if MONITOR_ID.match(monitor_id) else "", token)
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if found is None:
        raise ApiError("monitor_not_found", "no monitor with this id answers to this token")
    return found


async def monitor(request: Request) -> Response:
    """``GET /v1/monitors/{monitor_id}``: state, runs left, last results, next due."""
    services = services_of(request)

    async def read(_client: str) -> Response:
        found = await _owned(request, services)
        try:
            runs = await services.monitors.runs(found.key)
        except Exception as exc:
            raise unavailable(exc) from exc
        return JSONResponse(monitor_view(found, runs, services.settings.public_base_url), headers=NO_STORE)

    return await budgeted(request, services, read)


async def delete_monitor(request: Request) -> Response:
    """``DELETE /v1/monitors/{monitor_id}``: no more runs; pending deliveries are failed."""
    services = services_of(request)

    async def stop(_client: str) -> Response:
        found = await _owned(request, services)
        try:
            stopped = await services.monitors.delete(found.monitor_id, _bearer(request) or "", datetime.now(UTC))
            runs = await services.monitors.runs(found.key)
        except Exception as exc:
            raise unavailable(exc) from exc
        assert stopped is not None
        return JSONResponse(monitor_view(stopped, runs, services.settings.public_base_url), headers=NO_STORE)

    return await budgeted(request, services, stop)


async def deliveries(request: Request) -> Response:
    """``GET /v1/monitors/{monitor_id}/deliveries``: the delivery log, newest first, a page at a time."""
    services = services_of(request)

    async def read(_client: str) -> Response:
        params = request.query_params
        if set(params) - {"limit", "before"}:
            raise ApiError("invalid_query", "this route takes limit and before only")
        raw = params.get("limit", str(DEFAULT_LIMIT))
        limit = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 5 else 0
        if not 1 <= limit <= MAX_LIMIT:
            raise ApiError("invalid_query", f"limit is a whole number from 1 to {MAX_LIMIT}")
        before = params.get("before")
        found = await _owned(request, services)
        try:
            page = await services.deliveries.log(found.key, limit, before)
        except Exception as exc:
            raise unavailable(exc) from exc
        if page is None:
            raise ApiError("invalid_query", "before is the delivery_id of one of this monitor's deliveries")
        following = page[-1].delivery_id if len(page) == limit else None
        body = {"monitor_id": found.monitor_id, "deliveries": [delivery_view(d) for d in page], "next": following}
        return JSONResponse(body, headers=NO_STORE)

    return await budgeted(request, services, read)
