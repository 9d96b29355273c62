"""Owner claims and owner actions: ``/v1/claims`` and ``/v1/owner`` (:mod:`app.claims`).

- ``POST /v1/claims`` ``{"url": "<an MCP endpoint>", "method"?: "well_known" | "dns_txt"}``: a
  pending claim of the URL's host (201) with its challenge and what to publish: the document at
  ``https://<host>/.well-known/mcp-sonde.json`` (``well_known``, the default) or the TXT record
  at ``_mcp-sonde.<host>`` (``dns_txt``). The URL passes the target guard's form check (422 with
  its reason); a host that is a public suffix is 422 ``claim_host_refused``; ``dns_txt`` for a
  host that is an IP address is 422 ``claim_method_refused``.
- ``POST /v1/claims/{claim_id}/verify``: fetch the document (:mod:`app.claims.proof`); 200 with
  ``verified_at``, and the ``owner_token`` on the first success only (kept as a hash: it cannot
  be shown again). A refusal is 403 ``claim_proof_*`` or a guard reason (422); an unknown or
  expired claim is 404 ``claim_not_found``.
- With ``Authorization: Bearer <owner token>`` (RFC 6750 §2.1): ``GET /v1/owner`` (the claim,
  whether sweeps are paused, the audit log, newest first); ``PUT /v1/owner/sweeps``
  ``{"paused": bool}``; ``PUT /v1/owner/servers/{server_id}/profile`` ``{"display_name",
  "description"}`` (shown before any registry entry's); ``PUT /v1/owner/servers/{server_id}/baseline``
  ``{"run_id"?}`` approves without payment, as a proof of control does; ``DELETE`` clears it;
  ``GET /v1/owner/servers/{server_id}/credentialed-checks``: the summaries of checks made with
  callers' credentials (names and counts only, :mod:`app.claims.credentialed`), newest first.
  No token is 401 ``owner_unauthorized``; a token that is not a verified claim's is 403
  ``owner_forbidden``; a server of another host is 404 ``server_not_found``.

Every route is under the check route's rate limit, and every answer says ``Cache-Control: no-store``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from app import jsonsafe
from app.checking.errors import ApiError
from app.checking.services import Services
from app.claims import Claim, ClaimRefused, claim_document, claim_url
from app.claims.dns import has_name, record_name
from app.claims.proof import dns_record
from app.db.tables.owners import DNS_TXT, WELL_KNOWN
from app.errors import TargetRefused
from app.guard import ResolverBusy, check_url
from app.guard.shares import LookupOwner, lookups_for
from app.guard.suffix import is_public_suffix
from app.http.bodies.baseline import read_baseline_request, view
from app.http.bodies.check import is_json, read_body
from app.http.budget import budgeted
from app.http.routes.ops import services_of
from app.http.routes.paths import server_id_in_path, unavailable

NO_STORE = {"Cache-Control": "no-store"}
MAX_BODY = 4096
MAX_NAME, MAX_DESCRIPTION = 100, 1000


def _iso(moment: Any) -> str | None:
    return None if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _claim_view(claim: Claim) -> dict[str, Any]:
    by_file = claim.method == WELL_KNOWN
    return {
        "claim_id": claim.id, "host": claim.host, "state": claim.state, "method": claim.method,
        "challenge": claim.challenge,
        "document_url": claim_url(claim.host) if by_file else None,
        "document": claim_document(claim.challenge) if by_file else None,
        "dns_record": None if by_file else dns_record(claim.host, claim.challenge),
        "created_at": _iso(claim.created_at), "expires_at": _iso(claim.expires_at),
        "verified_at": _iso(claim.verified_at),
    }  # fmt: skip


async def _object(request: Request, services: Services) -> dict[str, Any]:
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "send the body as application/json", 415)
    raw = await read_body(request, MAX_BODY, services.settings.body_timeout_s)
    try:
        body: object = jsonsafe.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError("invalid_json", "the body is not valid JSON", 400) from None
    if not isinstance(body, dict):
        raise ApiError("invalid_body", "the body is a JSON object", 422)
    return body


def _limited(request: Request, answer: Any) -> Any:
    services = services_of(request)
    return budgeted(request, services, lambda client: answer(services, client), fault="mcp-sonde failed")


async def open_claim(request: Request) -> Response:
    """``POST /v1/claims`` (see the module docs)."""

    async def answer(services: Services, _client: str) -> Response:
        body = await _object(request, services)
        method = body.get("method", WELL_KNOWN)
        if not ({"url"} <= set(body) <= {"url", "method"}) or not isinstance(body["url"], str) or method not in (
            WELL_KNOWN, DNS_TXT,
        ):  # fmt: skip
            shape = '{"url": "<an MCP endpoint URL>", "method"?: "well_known" | "dns_txt"}'
            raise ApiError("invalid_body", f"the body is {shape}", 422)
        try:
            target = check_url(body["url"], allow_private=services.settings.allow_private)
        except TargetRefused as exc:
            raise ApiError(exc.reason, exc.message, 422) from exc
        if is_public_suffix(target.host):
            raise ApiError("claim_host_refused", f"{target.host} is a public suffix: nobody speaks for all of it")
        if method == DNS_TXT and not has_name(target.host):
            message = f"{target.host} is an IP address: it has no DNS name for a TXT record"
            raise ApiError("claim_method_refused", message)
        try:
            claim = await services.claims.open(target.host, method)
        except Exception as exc:  # any driver or network fault: the database does not answer
            raise unavailable(exc) from exc
        return JSONResponse(_claim_view(claim), status_code=201, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


async def verify(request: Request) -> Response:
    """``POST /v1/claims/{claim_id}/verify`` (see the module docs)."""
    claim_id = request.path_params["claim_id"]

    async def answer(services: Services, client: str) -> Response:
        claim = await services.claims.get(claim_id) if len(claim_id) <= 32 else None
        if claim is None or claim.state == "lapsed":
            raise ApiError("claim_not_found", "no pending or verified claim has this id", headers=NO_STORE)
        try:
            with lookups_for(LookupOwner(client, paid=False)):
                await services.verify_claim(claim)
        except TargetRefused as exc:
            raise ApiError(exc.reason, f"the claim document's host is refused: {exc.message}", 422) from exc
        except ResolverBusy as exc:
            raise ApiError(exc.reason, exc.message, headers={"Retry-After": "2"}) from exc
        except ClaimRefused as exc:
            where = claim_url(claim.host) if claim.method == WELL_KNOWN else record_name(claim.host)
            raise ApiError(exc.reason, f"{exc.message} (at {where})", headers=NO_STORE) from exc
        token = await services.claims.verified(claim)
        claim = await services.claims.get(claim_id) or claim
        services.claimed.note(claim.host, claim.verified_at)  # (this instance's badges say so at once)
        document = _claim_view(claim) | ({"owner_token": token} if token else {})
        return JSONResponse(document, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


async def _owner(request: Request, services: Services) -> Claim:
    authorization = request.headers.get("authorization", "")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        headers = {"WWW-Authenticate": 'Bearer realm="owner"', **NO_STORE}
        raise ApiError("owner_unauthorized", "send Authorization: Bearer <owner token>", headers=headers)
    claim = await services.claims.by_token(token.strip())
    if claim is None:
        raise ApiError("owner_forbidden", "the token is not the owner token of a verified claim", headers=NO_STORE)
    return claim


async def _own_server(request: Request, services: Services, claim: Claim) -> tuple[int, str]:
    server_id = server_id_in_path(request)
    server = await services.claims.server_of(claim, server_id)
    if server is None:
        raise ApiError("server_not_found", "no check of this server of the claimed host is kept here")
    return server, server_id


async def owner(request: Request) -> Response:
    """``GET /v1/owner``: the claim, the sweeps' state and the audit log."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        log = await services.claims.audit_log(claim.host)
        document = {
            "claim": _claim_view(claim),
            "sweeps_paused": await services.claims.sweeps_paused(claim.host),
            "audit": [{"action": a.action, "target": a.target, "detail": a.detail, "at": _iso(a.at)} for a in log],
        }
        return JSONResponse(document, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


async def set_sweeps(request: Request) -> Response:
    """``PUT /v1/owner/sweeps`` ``{"paused": bool}``."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        body = await _object(request, services)
        if set(body) != {"paused"} or not isinstance(body["paused"], bool):
            raise ApiError("invalid_body", 'the body is {"paused": true or false}', 422)
        await services.claims.set_sweeps(claim, body["paused"])
        return JSONResponse({"host": claim.host, "sweeps_paused": body["paused"]}, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


async def credentialed_checks(request: Request) -> Response:
    """``GET /v1/owner/servers/{server_id}/credentialed-checks``: summaries, newest first."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        server_id = server_id_in_path(request)
        kept = await services.credentialed.newest(server_id, claim.host)
        if not kept and await services.claims.server_of(claim, server_id) is None:
            # Another host's server, or none: as on every owner route (a server checked only with
            # credentials has no public run, but has its summaries).
            raise ApiError("server_not_found", "no check of this server of the claimed host is kept here")
        checks = [{"checked_at": _iso(each.checked_at), **each.summary} for each in kept]
        return JSONResponse({"server_id": server_id, "host": claim.host, "checks": checks}, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


def _text(body: dict[str, Any], name: str, most: int) -> str | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= most or any(ord(c) < 32 for c in value):
        raise ApiError("invalid_body", f"{name} is a string of 1 to {most} characters without control characters", 422)
    return value


async def set_profile(request: Request) -> Response:
    """``PUT /v1/owner/servers/{server_id}/profile``."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        _, server_id = await _own_server(request, services, claim)
        body = await _object(request, services)
        if not set(body) <= {"display_name", "description"}:
            raise ApiError("invalid_body", "the body takes display_name and description only", 422)
        name, description = _text(body, "display_name", MAX_NAME), _text(body, "description", MAX_DESCRIPTION)
        await services.claims.set_profile(claim, server_id, name, description)
        return JSONResponse(
            {"server_id": server_id, "display_name": name, "description": description}, headers=NO_STORE
        )

    response: Response = await _limited(request, answer)
    return response


async def approve_baseline(request: Request) -> Response:
    """``PUT /v1/owner/servers/{server_id}/baseline``: approve without payment."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        _, server_id = await _own_server(request, services, claim)
        settings = services.settings
        body = await read_baseline_request(request, settings.max_body_bytes, settings.body_timeout_s)
        history = services.recorder.history
        toolset = await history.toolset(run_id=body.run_id, server_id=server_id)
        if toolset is None or toolset.run_id is None:
            raise ApiError("run_not_found", "no kept run of this server read its whole tool list")
        approved = await services.baselines.approve(server_id, toolset.run_id, "host_proof")
        if approved is None:
            raise ApiError("run_not_found", "the run is no longer kept")
        await services.claims.audit(claim, "baseline_approved", server_id, {"run_id": toolset.run_id})
        return JSONResponse(view(server_id, approved), headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response


async def clear_baseline(request: Request) -> Response:
    """``DELETE /v1/owner/servers/{server_id}/baseline``."""

    async def answer(services: Services, _client: str) -> Response:
        claim = await _owner(request, services)
        server, server_id = await _own_server(request, services, claim)
        if not await services.claims.clear_baseline(claim, server, server_id):
            raise ApiError("baseline_not_found", "no baseline was approved for this server", headers=NO_STORE)
        return Response(status_code=204, headers=NO_STORE)

    response: Response = await _limited(request, answer)
    return response
