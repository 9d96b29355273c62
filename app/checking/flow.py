"""One paid or free check, whatever carried the request: the HTTP route and the MCP tool.

Order: target guard (refusals cost nothing), payment (an x402 ``PaymentPayload`` or a
free-pool draw), probe, settlement. A draw is given back and a payment's lock released
whenever the check is not served; a payment is settled only for a served result, so a
replayed payment never buys a second check (see :mod:`app.payment.gate`). A payment whose
``payment-identifier`` already bought this check gets that answer again, without a probe or a
settlement (:mod:`app.payment.identifier`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio.to_thread
from x402.schemas import ResourceInfo, SettleResponse

from app.attest.errors import NoSigningKey
from app.attest.signer import Attestation
from app.baselines.request import BaselineRequest
from app.canonical import safe_copy
from app.checking import comparison
from app.checking.errors import ApiError
from app.checking.freepool import Draw
from app.checking.links import answer_links
from app.checking.recorder import private, run_of
from app.checking.runner import CheckMode, TargetBusy
from app.checking.services import Services
from app.checking.tracing import CheckSpan
from app.errors import TargetRefused
from app.guard import ResolutionFailed, ResolvedTarget, ResolverBusy, TargetUrl, check_url, resolve_target
from app.guard.shares import LookupOwner, lookups_for
from app.history.records import Run, server_id_of
from app.payment import Payment, PaymentGate
from app.probe import ProbeFailed, ProbeResult
from app.probe.credentials import Credentials
from app.suite.full import unresolved_check
from app.suite.model import CheckResult

#: Results up to this many bytes are signed on the event loop (see :func:`signed`).
INLINE_SIGN_BYTES = 64 * 1024


@dataclass(frozen=True)
class Served:
    """A served check.

    Attributes:
        payload: the :class:`~app.probe.ProbeResult` as JSON bytes.
        receipt: the facilitator's settlement, for a paid check.
        pool_remaining: checks left in the client's free-pool share, for a free one.
    """

    payload: bytes
    receipt: SettleResponse | None = None
    pool_remaining: int | None = None

    def headers(self) -> dict[str, str]:
        """The HTTP headers telling how the check was paid."""
        if self.receipt is not None:
            return PaymentGate.response_header(self.receipt)
        if self.pool_remaining is not None:
            return {"X-Free-Pool-Remaining": str(self.pool_remaining)}
        return {}


async def run_check(
    services: Services,
    url: str,
    *,
    client: str,
    payment: str | dict[str, object] | None,
    free: bool,
    credentials: Credentials | None = None,
    include_tools: bool = False,
    baseline: BaselineRequest | None = None,
    resource: ResourceInfo | None = None,
) -> Served:
    """Run one check of ``url``.

    Args:
        services: the app's collaborators.
        url: the MCP endpoint, as the client sent it.
        client: the client's rate key (free-pool shares are per client).
        payment: a ``PAYMENT-SIGNATURE`` header value or a decoded ``PaymentPayload``.
        free: the client asked for a free-pool draw (ignored when ``payment`` is given).
        credentials: headers for a credentialed check (never shared, cached or logged).
        include_tools: keep the cleaned tool definitions in the served result.
        baseline: what to compare the tool list with (else the server's approved baseline, if any).
        resource: the x402 resource the caller's route sells, when it is not the HTTP route's
            (the MCP tool's): a payment is accepted only for it.

    Raises:
        ApiError: 422 for a refused URL, 402/400/409 for payment faults, 429 ``target_busy``,
            404 ``baseline_not_found``, 503 ``resolver_busy`` / ``facilitator_unavailable`` /
            ``history_unavailable``, 500 ``probe_internal_error``.
    """
    with services.tracing.check(light=False) as span:
        return await _run(services, url, span, client, payment, free, credentials, include_tools, baseline, resource)


async def _run(
    services: Services,
    url: str,
    span: CheckSpan,
    client: str,
    payment: str | dict[str, object] | None,
    free: bool,
    credentials: Credentials | None,
    include_tools: bool,
    baseline: BaselineRequest | None,
    resource: ResourceInfo | None,
) -> Served:
    settings = services.settings
    try:
        target = check_url(url, allow_private=settings.allow_private)
    except TargetRefused as exc:
        raise ApiError(exc.reason, exc.message, 422) from exc
    span.target(target.host)
    try:
        services.attestor.ready()  # every served check is signed: refuse before anything is charged
    except NoSigningKey as exc:
        raise ApiError(exc.reason, exc.message) from exc
    compare = await comparison.find(services, target.url, baseline)  # (a named one that is missing: 404, free)
    # A payment is verified before the lookup, so only a payment the facilitator accepted uses
    # the lookup threads kept for paid checks; a free draw is taken after it, so a refused
    # address costs none. Whatever is not served is released or given back below.
    paid_with: Draw | Payment | None = None
    if payment is not None:
        request = check_request(url, credentials, include_tools, payment, baseline)
        paid_with = await services.authorize(payment, free, client, request, resource=resource)
    served = settled = settling = False
    try:
        if isinstance(paid_with, Payment) and paid_with.replay is not None:
            # The same payment identifier and payment again: the answer it already bought.
            settled = served = True
            return Served(paid_with.replay.payload, receipt=paid_with.replay.receipt)
        if isinstance(paid_with, Payment) and paid_with.stored_result is not None:
            # The same payment again, after a settlement whose outcome was unknown.
            settling = True
            receipt = await services.settle(paid_with, paid_with.stored_result)
            settled = served = True
            return Served(paid_with.stored_result, receipt=receipt)
        resolved = await _resolve(services, target, client, paid=paid_with is not None)
        if paid_with is None:
            paid_with = await services.authorize(None, free, client)
        try:
            if isinstance(resolved, ResolutionFailed):
                result: ProbeResult = unresolved_check(target, resolved, credentials)
                services.metrics.probes.labels(status=result.status).inc()
            else:
                mode = CheckMode(include_tools=include_tools, credentials=credentials)
                result = await services.checks.check(resolved, mode, client=client, paid=isinstance(paid_with, Payment))
        except TargetBusy as exc:
            services.metrics.limits_hit.labels(limit="target_busy").inc()
            raise ApiError("target_busy", exc.message, headers={"Retry-After": str(exc.retry_after)}) from exc
        except ProbeFailed as exc:
            raise ApiError("probe_internal_error", exc.message) from exc
        span.result(result.status, result.reason)
        result = await compare.apply(result)
        payload, attestation = await signed(services, result, include_tools)
        if kept_in_history(result) and not services.recorder.has_room():
            raise ApiError("history_unavailable", "served checks cannot be kept now (the outbox is full or failing)")
        if not chargeable(result):
            # Our lookup gave no definitive answer: served, but not charged (a draw is given back).
            await kept(services, result, attestation)
            return Served(payload)
        served = True
        if isinstance(paid_with, Payment):
            settling = True
            receipt = await services.settle(paid_with, payload)
            settled = True
            await kept(services, result, attestation)
            return Served(payload, receipt=receipt)
        await kept(services, result, attestation)
        return Served(payload, pool_remaining=paid_with.remaining)
    finally:
        if isinstance(paid_with, Payment) and not settled:
            await services.payments.release(paid_with)
            if not settling:  # (a settlement's own outcome is counted by Services.settle)
                services.metrics.payments.labels(outcome="released").inc()
        elif isinstance(paid_with, Draw) and not served:
            await services.free_pool.give_back(paid_with)
            services.metrics.pool_draws.labels(outcome="returned").inc()


async def _resolve(
    services: Services, target: TargetUrl, client: str, *, paid: bool
) -> ResolvedTarget | ResolutionFailed:
    """Resolve and check the target's host on the client's lookup share (a failed lookup is a result).

    Raises:
        ApiError: 422 for an address that may not be probed, 429/503 when no lookup thread may be taken.
    """
    settings = services.settings
    asked = time.monotonic()
    try:
        with lookups_for(LookupOwner(client, paid=paid)):
            return await resolve_target(target, resolver=services.resolver, allow_private=settings.allow_private)
    except TargetRefused as exc:
        raise ApiError(exc.reason, exc.message, 422) from exc
    except ResolutionFailed as failure:
        return failure  # a normal result with status dns; nothing to connect to
    except ResolverBusy as exc:
        raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
    finally:
        services.metrics.lookup_wait.observe(time.monotonic() - asked)


async def kept(
    services: Services, result: ProbeResult, attestation: Attestation, run_id: str | None = None
) -> Run | None:
    """Keep a served check: its envelope for ``GET /v1/attestations/{id}``, and the run for the
    history, queued (:mod:`app.checking.recorder`), unless it was a private one
    (:func:`app.checking.recorder.private`). ``run_id``: the run's id when the caller chose one
    (a scheduled job's), else the attestation's. Returns the run, when it goes to the history.

    A credentialed check's envelope is in its answer only: it is not kept for reading by id,
    since what the caller's credentials showed is theirs alone; its summary, names and counts
    only, is kept for the owner of the host (:mod:`app.claims.credentialed`)."""
    if isinstance(result, CheckResult) and result.credentialed:
        await services.credentialed.add(result, urlsplit(result.url).hostname or "")
    else:
        await services.attestations.put(attestation)
    run = history_run(result, attestation, run_id)
    if run is not None:
        services.recorder.submit(run)
    return run


def kept_in_history(result: ProbeResult) -> bool:
    """Whether the history keeps a served ``result``: a full check, and not a private one."""
    return isinstance(result, CheckResult) and not private(result)


def history_run(result: ProbeResult, attestation: Attestation, run_id: str | None = None) -> Run | None:
    """The history's run of a served check, or ``None`` for one the history never keeps (private)."""
    if not kept_in_history(result):
        return None
    assert isinstance(result, CheckResult)  # (kept_in_history says so)
    stored = result.model_dump_json(exclude={"attestation", "attestation_id", "tool_definitions"}).encode()
    return run_of(result, stored, attestation.id, attestation.envelope_json, run_id)


async def signed(services: Services, result: ProbeResult, include_tools: bool) -> tuple[bytes, Attestation]:
    """The served bytes of a full check, with its ``attestation`` (the DSSE envelope) and ``attestation_id``.

    The statement's ``result_sha256`` is of the result exactly as served without those two
    members, so a reader can re-derive it from the answer (docs/attestations.md). A result of a
    few kB signs in a fraction of a millisecond; one over :data:`INLINE_SIGN_BYTES` (a large
    tool list: the canonical form of the whole result costs tens of ms per MB) is signed on a
    worker thread, off the event loop.

    Raises:
        ApiError: 503 ``signing_key_unavailable`` (the key was revoked or expired meanwhile).
    """
    if not isinstance(result, CheckResult):  # (a full check always is one)
        raise ApiError("probe_internal_error", "a full check produced no check result")
    unsigned = {"attestation", "attestation_id"} | (set() if include_tools else {"tool_definitions"})
    raw = with_links(services, result, result.model_dump_json(exclude=unsigned).encode())
    try:
        if len(raw) <= INLINE_SIGN_BYTES:
            return sign_answer(services, result, raw)
        return await anyio.to_thread.run_sync(sign_answer, services, result, raw)
    except NoSigningKey as exc:
        raise ApiError(exc.reason, exc.message) from exc


def sign_answer(services: Services, result: CheckResult, raw: bytes) -> tuple[bytes, Attestation]:
    """Sign ``result``, whose unsigned answer is ``raw``; the answer with the envelope spliced in.

    Raises:
        NoSigningKey: no key may sign now.
    """
    attestation = services.attestor.attest(result, raw)
    if attestation.result_sha256 is None:
        # What the server sent has no canonical form (an integer beyond I-JSON in its
        # capabilities, names equal after NFC, ...): the answer is served with those values
        # made canonical (safe_copy), so the statement always signs a digest of the answer.
        raw = json.dumps(safe_copy(json.loads(raw)), ensure_ascii=False, separators=(",", ":")).encode()
        attestation = services.attestor.attest(result, raw)
    tail = b',"attestation_id":"' + attestation.id.encode() + b'","attestation":' + attestation.envelope_json + b"}"
    return raw[:-1] + tail, attestation


def with_links(services: Services, result: CheckResult, raw: bytes) -> bytes:
    """``raw`` (a result's JSON object) with ``server_id`` and ``links`` (:mod:`app.checking.links`)
    after its members: signed with them, so what an answer points to is part of what it proves."""
    led = {"server_id": server_id_of(result.url), "links": answer_links(services.settings.public_base_url, result.url)}
    members = json.dumps(led, ensure_ascii=False, separators=(",", ":")).encode()
    return raw[:-1] + b"," + members[1:]


def check_request(
    url: str,
    credentials: Credentials | None,
    include_tools: bool,
    payment: str | dict[str, object],
    baseline: BaselineRequest | None = None,
) -> bytes:
    """What a paid check is for, as bound to its payment identifier: the URL, the options, the
    baseline's digest, and a digest of the credential headers (never the values themselves),
    keyed by the payment (whose random nonce no store holds), so a weak credential cannot be
    guessed back from the digest."""
    headers = sorted((name.lower(), value) for name, value in (credentials.headers if credentials else ()))
    key = (payment if isinstance(payment, str) else json.dumps(payment, sort_keys=True)).encode()
    secret = hmac.new(key, json.dumps(headers).encode(), hashlib.sha256).hexdigest() if headers else ""
    compared = hashlib.sha256(baseline.model_dump_json().encode()).hexdigest() if baseline is not None else None
    bound = {"url": url, "include_tools": include_tools, "credentials": secret, "baseline": compared}
    return json.dumps(bound).encode()


def chargeable(result: ProbeResult) -> bool:
    """Whether a served result is charged: not when our own lookup gave no definitive answer."""
    return not (result.status == "dns" and result.reason in ("dns_timeout", "dns_failure"))
