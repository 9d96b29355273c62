"""What the baseline routes read and answer: the ``PUT`` body, the baseline as JSON, the paid
resource, and the ``host_proof`` member of a 402 (see :mod:`app.http.routes.baseline`).

The body is read as the check's is (:func:`app.http.bodies.check.read_body`: capped, within the
body timeout); it may be empty. JSON with a key given twice is refused.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError
from starlette.requests import Request
from x402.schemas import ResourceInfo

from app import jsonsafe
from app.attest.errors import NoSigningKey
from app.baselines.proof import baseline_token, proof_document, proof_key, proof_url
from app.baselines.store import Baseline
from app.checking.errors import ApiError
from app.checking.services import Services
from app.history.records import Toolset
from app.http.bodies.check import is_json, read_body
from app.settings import Settings

PROOF_HEADER = "MCP-Sonde-Proof"


class ApprovalRequest(BaseModel):
    """``PUT /v1/servers/{server_id}/baseline`` body (optional as a whole)."""

    model_config = ConfigDict(extra="forbid")
    run_id: StrictStr | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")


async def read_baseline_request(request: Request, max_bytes: int, timeout_s: float) -> ApprovalRequest:
    """The body: empty, or ``application/json`` with at most ``run_id`` (read as the check's body is).

    Raises:
        ApiError: ``body_too_large``, ``body_timeout``, ``body_incomplete``, ``unsupported_media_type``,
            ``invalid_json`` or ``invalid_baseline_request``.
    """
    body = await read_body(request, max_bytes, timeout_s)
    if not body:
        return ApprovalRequest()
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "send the body as application/json")
    refused = ApiError("invalid_baseline_request", 'the body is {"run_id": "<64 hex>"}, {} or nothing')
    try:
        payload = jsonsafe.loads(body, object_pairs_hook=jsonsafe.unique_keys)
    except jsonsafe.DuplicateKey:
        raise refused from None
    except (ValueError, RecursionError) as exc:
        raise ApiError("invalid_json", "the body is not valid JSON") from exc
    try:
        return ApprovalRequest.model_validate(payload)
    except ValidationError:
        raise refused from None


def view(server_id: str, baseline: Baseline) -> dict[str, Any]:
    """The answer's JSON for ``baseline``."""
    toolset = baseline.toolset
    names = [str(d.get("name", "")) for d in toolset.definitions]
    return {
        "server_id": server_id,
        "run_id": toolset.run_id,
        "definitions_sha256": toolset.definitions_sha256,
        "schema_fingerprint": toolset.schema_fingerprint,
        "toolset_fingerprint": toolset.toolset_fingerprint,
        "tool_count": len(names),
        "tool_names": names,
        "approved_at": baseline.approved_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "approved_by": baseline.approved_by,
    }


def resource(settings: Settings, server_id: str) -> ResourceInfo:
    """The paid resource: this server's baseline route, by its public URL."""
    return ResourceInfo(
        url=f"{settings.public_base_url}/v1/servers/{server_id}/baseline",
        description="Approval of one MCP server's baseline tool list (the price of one check).",
        mime_type="application/json",
    )


def host_proof(services: Services, server_id: str, url: str, toolset: Toolset) -> dict[str, Any]:
    """How to prove control of the host instead of paying: the token and where to place it.

    Raises:
        ApiError: 503 ``signing_key_unavailable`` (the proof key comes from the signing key).
    """
    try:
        held = services.attestor.ring.signing_key(datetime.now(UTC))
    except NoSigningKey as exc:
        raise ApiError(exc.reason, exc.message) from exc
    token = baseline_token(proof_key(held.key), server_id, toolset.definitions_sha256)
    return {
        "url": proof_url(url),
        "token": token,
        "document": proof_document(token),
        "header": {"name": PROOF_HEADER, "value": "host"},
        "run_id": toolset.run_id,
        "definitions_sha256": toolset.definitions_sha256,
    }
