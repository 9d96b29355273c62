"""API errors: one shape, a stable reason key, never a stack trace.

Every error answer is a problem details object (RFC 9457, :mod:`app.http.problems`) whose
``reason`` member is the key clients branch on; a 402 carries the x402 ``PaymentRequired``
document instead. Reasons are listed in :data:`API_REASONS` and in ``openapi.yaml``. The
payment layer raises its own :class:`~app.payment.errors.PaymentError`; :func:`from_payment`
makes it an :class:`ApiError` (the x402 document becomes the answer's body).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, Final

from app.errors import SondeError
from app.payment.errors import PaymentError

#: reason -> (HTTP status, meaning)
API_REASONS: Final[dict[str, tuple[int, str]]] = {
    "invalid_json": (400, "The body is not valid JSON."),
    "invalid_body": (422, "The body is not the JSON object this route takes (see its request schema)."),
    "invalid_baseline": (
        422,
        "baseline is an object with exactly one of run_id, schema_fingerprint (64 hex each) or tools.",
    ),
    "baseline_held": (
        409,
        "The host approved this server's baseline; only a proof of control of the host replaces it (nothing charged).",
    ),
    "baseline_not_found": (
        404,
        "No stored run or tool list matches the baseline named, or no baseline was approved for the server; "
        "nothing was charged.",
    ),
    "header_name_invalid": (422, "A credential header name is not an HTTP token of 1 to 64 characters."),
    "header_not_allowed": (422, "A credential header that the probe sets itself, or that may not be sent."),
    "header_value_invalid": (422, "A credential header value is not 1 to 4,096 visible ASCII characters."),
    "header_duplicate": (422, "A credential header is given twice (names are case-insensitive)."),
    "too_many_headers": (422, "More than Authorization and 8 other credential headers."),
    "body_too_large": (413, "The body is larger than the limit."),
    "body_timeout": (408, "The body did not arrive in time."),
    "body_incomplete": (400, "The connection closed before the whole body arrived."),
    "unsupported_media_type": (415, "The Content-Type must be application/json."),
    "payment_required": (402, "Pay for the check (x402) or ask for a free-pool check."),
    "invalid_payment": (
        400,
        "PAYMENT-SIGNATURE is not a base64 x402 v2 PaymentPayload with an EIP-3009 authorization.",
    ),
    "payment_mismatch": (
        402,
        "The payment was not made for this route: its option (amount, asset, network, payTo), its "
        "resource or its signed authorization differ.",
    ),
    "payment_invalid": (402, "The facilitator refused the payment (signature, time window, balance, nonce)."),
    "payment_already_used": (402, "This payment has already bought a check."),
    "invalid_payment_identifier": (
        400,
        "The payment-identifier extension is malformed (an id is 16 to 128 characters of A-Z a-z 0-9 _ -).",
    ),
    "payment_identifier_conflict": (
        409,
        "This payment identifier was first used with another payment or request; nothing was charged.",
    ),
    "payment_in_use": (409, "This payment is buying another check right now."),
    "settlement_failed": (402, "Settlement failed; the result is withheld and nothing was charged."),
    "facilitator_unavailable": (503, "The payment facilitator is unavailable; nothing was charged."),
    "facilitator_unsupported": (
        503,
        "The payment facilitator does not support this payment option (its /supported); nothing was charged.",
    ),
    "settlement_unknown": (503, "The settlement outcome is unknown; send the same payment again for the result."),
    "free_pool_origin_refused": (403, "Pages on this Origin may not draw on the free pool; pay with x402."),
    "free_pool_exhausted": (402, "Today's free pool, or this client's share of it, is used up."),
    "rate_limited": (429, "Too many requests from this client; see Retry-After."),
    "target_busy": (429, "The target host already has its share of probes running; see Retry-After."),
    "probe_internal_error": (500, "The check failed through a fault of mcp-sonde; nothing was charged."),
    "resolver_busy": (503, "Every host lookup slot is taken; try again shortly (see Retry-After)."),
    "client_lookups_busy": (429, "This client already has its share of host lookups running; see Retry-After."),
    "signing_key_unavailable": (
        503,
        "No signing key of this instance is valid now (every served check is signed); nothing was charged.",
    ),
    "attestation_not_found": (404, "No signed result with this id is kept here (unknown, or past its retention)."),
    "server_not_found": (404, "No check of this server is kept here (a server id is 24 hex characters)."),
    "history_unavailable": (503, "The history database does not answer; try again shortly."),
    "shared_state_unavailable": (
        503,
        "The shared store (Redis) does not answer, so what every instance counts together (the free pool, "
        "payment locks, single-flight locks) cannot be counted; nothing was charged. See Retry-After.",
    ),
    "payments_not_configured": (
        501,
        "This instance takes no payments (no payTo or payment network), so nothing paid can be bought here.",
    ),
    "starting": (503, "The service is starting; try again in a second (see Retry-After)."),
    "run_not_found": (404, "The server has no kept run with this id (or none) that read its whole tool list."),
    "invalid_baseline_request": (
        400,
        "The body must be empty or a JSON object with at most run_id (64 lower-case hex).",
    ),
    "invalid_proof_header": (400, "MCP-Sonde-Proof takes one value: host."),
    "proof_not_found": (
        403,
        "The host's /.well-known/mcp-sonde.json could not be read (not there, not 200, unreachable); "
        "nothing was approved.",
    ),
    "proof_invalid": (
        403,
        "The host's proof document is not JSON, is too large, or does not list the token of this tool set; "
        "nothing was approved.",
    ),
    "proof_redirect_refused": (
        403,
        "The proof document redirected off its host (or too often); nothing was approved.",
    ),
    "proof_timeout": (403, "The proof document did not arrive in time; nothing was approved."),
    "monitor_not_found": (404, "No monitor with this id answers to this token (unknown id, wrong or no token alike)."),
    "query_not_allowed": (
        422,
        "A monitored or webhook URL may not hold a query string (it would be kept in a stored record); "
        "nothing was charged.",
    ),
    "webhook_unresolved": (422, "The webhook's host name does not resolve; nothing was charged."),
    "opted_out": (422, "The monitored or webhook URL is on the opt-out list (see /probe); nothing was charged."),
    "invalid_query": (400, "A query parameter is not one this route takes (see the document)."),
    "invalid_search": (400, "The directory's text q is longer than 200 characters or 8 words."),
    "invalid_filter": (400, "A directory filter's value is not one it takes (the detail names the filter)."),
    "invalid_sort": (400, "The directory's sort is not name, last_checked or uptime."),
    "invalid_cursor": (400, "The cursor is not one this search gave (edited, cut, or of another search or sort)."),
    "invalid_arguments": (
        422,
        "A tool call's arguments do not match the tool's input schema (the detail names the fields).",
    ),
    "invalid_tools": (422, "A tool of a list is not a tools/list entry (the detail points to it)."),
    "too_many_tools": (422, "A tool list has more than 2,000 tools."),
    "diff_busy": (503, "Every comparison slot is taken; try again shortly (see Retry-After)."),
    "internal_error": (500, "mcp-sonde failed through a fault of its own; nothing was charged."),
    "http_error": (400, "The request could not be served as sent."),
    "png_unavailable": (503, "PNG badges cannot be drawn on this instance (no cairo library); use the SVG badge."),
    "metrics_unauthorized": (401, "/metrics needs Authorization: Bearer with the instance's metrics token."),
    "admin_disabled": (403, "The admin endpoints are off on this instance (no admin token is set)."),
    "admin_unauthorized": (401, "The admin endpoints need Authorization: Bearer with the instance's admin token."),
    "admin_forbidden": (403, "The bearer token is not this instance's admin token."),
    "claim_not_found": (404, "No pending or verified claim has this id (a pending one lasts 7 days)."),
    "claim_host_refused": (422, "The host is a public suffix (com, co.uk, github.io): nobody speaks for all of it."),
    "claim_proof_not_found": (
        403,
        "The host's /.well-known/mcp-sonde.json could not be read (not 200, or no answer), "
        "or the TXT name has no record.",
    ),
    "claim_proof_invalid": (
        403,
        "The host's document is not JSON, too large, or does not list this claim's challenge.",
    ),
    "claim_proof_redirect_refused": (403, "The host's document redirected off the host, or more than 3 times."),
    "claim_proof_timeout": (403, "The host's document was not read within 5 s."),
    "claim_dns_unanswered": (403, "The DNS resolver gave no usable answer for the claim's TXT record within 5 s."),
    "claim_method_refused": (422, "A DNS claim needs a host name: an IP address has no name for a TXT record."),
    "owner_unauthorized": (401, "No owner token: send Authorization: Bearer <owner token>."),
    "owner_forbidden": (403, "The token is not the owner token of a verified claim (it lapsed, or never was)."),
    "optout_invalid": (422, "The item is neither a host name nor an http(s) URL."),
    "optout_not_found": (404, "The item is not on the opt-out list."),
    "not_found": (404, "No such route."),
    "method_not_allowed": (405, "Method not allowed on this route."),
}


class ApiError(SondeError):
    """An error answer of the API.

    Args:
        reason: a key of :data:`API_REASONS`, or a target guard reason (422).
        message: human-readable text.
        status_code: defaults to the reason's status (422 for guard reasons).
        headers: extra response headers (for example ``Retry-After``).
        body: a body other than the error object (402 answers carry the x402 document).
    """

    def __init__(
        self,
        reason: str,
        message: str,
        status_code: int | None = None,
        headers: dict[str, str] | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(reason, message)
        self.status_code = status_code or API_REASONS.get(reason, (422, ""))[0]
        self.headers = headers or {}
        self.body = body


def from_payment(exc: PaymentError) -> ApiError:
    """The API error of a payment refusal: same reason, status and headers; the x402 document as body."""
    return ApiError(exc.reason, exc.message, exc.status, headers=dict(exc.headers), body=exc.document)


@contextlib.contextmanager
def payment_errors() -> Iterator[None]:
    """Within the block, a :class:`PaymentError` is raised again as :func:`from_payment` of it."""
    try:
        yield
    except PaymentError as exc:
        raise from_payment(exc) from exc


#: Seconds a client waits before asking again while the shared store does not answer (it is
#: back within about a second of Redis answering: :mod:`app.store.health`).
SHARED_STATE_RETRY_S = 5


def shared_state_unavailable() -> ApiError:
    """503 ``shared_state_unavailable``: what raised :class:`~app.store.StoreError` charged
    nothing (see :mod:`app.store.shared`)."""
    message = "the shared store does not answer; nothing was charged, try again shortly"
    return ApiError("shared_state_unavailable", message, headers={"Retry-After": str(SHARED_STATE_RETRY_S)})
