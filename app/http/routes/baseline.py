"""A server's approved baseline: ``PUT`` and ``GET /v1/servers/{server_id}/baseline``.

A baseline is the tool list later checks of a server are compared against. ``PUT`` approves
the list read by one of the server's kept runs (``{"run_id": "<attestation id>"}``; no body,
or no ``run_id``: its newest run that read the whole list), for one of two reasons:

1. **Proof of control of the host** (``MCP-Sonde-Proof: host``): the service reads
   ``https://<host>/.well-known/mcp-sonde.json`` through the target guard and approves when it
   lists the token of exactly this server and tool list (:mod:`app.baselines.proof`: the token
   design, its key, the fetch's bounds). A refusal is 403 ``proof_*`` or a guard reason (422).
2. **Payment**: an x402 payment of the price of one check (``PAYMENT-SIGNATURE``), bound to
   what it buys (server and requested run) through its payment identifier (:mod:`app.http.routes.baseline_paid`).

Without either the answer is 402: the x402 ``PaymentRequired`` document for this resource,
with ``host_proof`` telling how to prove control instead (the token, the document to place,
where, and the header). With the proof header no payment is taken.

Order: the client's rate limit (the check route's budget), the id's form, the body, then the
history (unknown server or run: 404; a database that does not answer: 503), then the proof or
the payment. Nothing is charged for an approval that is not written. Every ``PUT`` answer says
``Cache-Control: no-store`` and carries the client's rate-limit headers.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app.baselines.proof import ProofRefused, proof_url, prove
from app.baselines.store import Baseline
from app.checking.errors import ApiError
from app.checking.services import Services
from app.errors import TargetRefused
from app.guard import ResolverBusy
from app.guard.shares import LookupOwner, lookups_for
from app.history.records import Toolset
from app.http.bodies.baseline import PROOF_HEADER, host_proof, read_baseline_request, view
from app.http.budget import budgeted
from app.http.routes.baseline_paid import approve_paid
from app.http.routes.ops import services_of
from app.http.routes.paths import CACHE, server_id_in_path, unavailable
from app.net.agent import user_agent


def _asks_proof(request: Request) -> bool:
    value = request.headers.get(PROOF_HEADER.lower())
    if value is None:
        return False
    if value.strip().lower() != "host":
        raise ApiError("invalid_proof_header", f"{PROOF_HEADER} takes one value: host")
    return True


async def approve_baseline(request: Request) -> Response:
    """``PUT /v1/servers/{server_id}/baseline`` (see the module docs)."""
    services = services_of(request)
    fault = "mcp-sonde failed; nothing was approved or charged"
    return await budgeted(
        request, services, lambda client: _approve(request, services, server_id_in_path(request), client), fault=fault
    )


async def _approve(request: Request, services: Services, server_id: str, client: str) -> Response:
    settings = services.settings
    body = await read_baseline_request(request, settings.max_body_bytes, settings.body_timeout_s)
    proof = _asks_proof(request)
    history = services.recorder.history
    try:
        server = await history.server(server_id)
        toolset = await history.toolset(run_id=body.run_id, server_id=server_id) if server else None
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if server is None:
        raise ApiError("server_not_found", "no check of this server is kept here")
    if toolset is None:
        which = "with this id" if body.run_id else "at all"
        raise ApiError("run_not_found", f"no kept run of this server {which} read its whole tool list")
    instructions = host_proof(services, server_id, server.url, toolset)
    if not proof:
        payment = request.headers.get("payment-signature")
        return await approve_paid(services, server_id, body.run_id, toolset, instructions, client, payment)
    await _prove(services, server.url, instructions["token"], client)
    approved = await _write(services, server_id, toolset, "host_proof")
    return JSONResponse(view(server_id, approved))


async def _prove(services: Services, url: str, token: str, client: str) -> None:
    try:
        with lookups_for(LookupOwner(client, paid=False)):
            await prove_host(services, url, token)
    except TargetRefused as exc:
        raise ApiError(exc.reason, f"the proof document's host is refused: {exc.message}", 422) from exc
    except ResolverBusy as exc:
        raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
    except ProofRefused as exc:
        raise ApiError(exc.reason, f"{exc.message} (at {proof_url(url)})") from exc


async def prove_host(services: Services, url: str, token: str) -> None:
    """:func:`app.baselines.proof.prove` with the service's resolver, backend and settings."""
    settings = services.settings
    await prove(
        url, token, resolver=services.resolver, allow_private=settings.allow_private,
        timeout_s=settings.baseline_proof_timeout_s, ca_bundle=settings.ca_bundle,
        network_backend=services.network_backend, user_agent=user_agent(settings),
    )  # fmt: skip


async def _write(services: Services, server_id: str, toolset: Toolset, by: str) -> Baseline:
    assert toolset.run_id is not None
    try:
        approved = await services.baselines.approve(server_id, toolset.run_id, by)
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if approved is None:  # pruned since it was looked up
        raise ApiError("run_not_found", "the run is no longer kept")
    return approved


async def baseline(request: Request) -> Response:
    """``GET /v1/servers/{server_id}/baseline``: the approved baseline (404 ``baseline_not_found`` when none)."""
    services, server_id = services_of(request), server_id_in_path(request)
    history = services.recorder.history
    try:
        server = await history.server(server_id)
        approved = await services.baselines.baseline(server_id, newest_run=True) if server else None
    except Exception as exc:  # any driver or network fault: the database does not answer
        raise unavailable(exc) from exc
    if server is None:
        raise ApiError("server_not_found", "no check of this server is kept here")
    if approved is None:
        raise ApiError("baseline_not_found", "no baseline was approved for this server")
    return JSONResponse(view(server_id, approved), headers=CACHE)
