"""The routes of signed results: the key document, stored envelopes, and the predicate's schemas.

- ``GET /.well-known/mcp-sonde-keys.json``: the key document (:mod:`app.attest.document`), read
  again when its file changes; cacheable for 5 minutes (a revocation is seen within that).
- ``GET /v1/attestations/{id}``: ``{"id", "envelope"}`` for a signed result kept here (the
  store for ``attestation_ttl_s``, then the history database for as long as it keeps the run);
  404 ``attestation_not_found`` otherwise.
- ``GET /schemas/{name}``: the statement and predicate JSON Schemas (draft 2020-12).
"""

from __future__ import annotations

import json
from importlib import resources

from starlette.requests import Request
from starlette.responses import Response

from app.attest.store import ID_PATTERN
from app.checking.errors import ApiError
from app.checking.services import Services

SCHEMAS = ("check-result-v1.schema.json", "statement-v1.schema.json")
_CACHE = {"Cache-Control": "public, max-age=300"}


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


async def keys_document(request: Request) -> Response:
    """``GET /.well-known/mcp-sonde-keys.json``."""
    document = _services(request).attestor.ring.document().published()
    body = json.dumps(document, indent=2).encode()
    return Response(body, media_type="application/json", headers=_CACHE)


async def envelope_of(services: Services, attestation_id: str) -> bytes | None:
    """The DSSE envelope kept under ``attestation_id`` (the store's, else a stored run's), or ``None``."""
    envelope = await services.attestations.get(attestation_id)  # (None for a malformed id too)
    if envelope is None and ID_PATTERN.fullmatch(attestation_id):
        try:  # past the store's time, a stored run still has it
            envelope = await services.recorder.history.envelope(attestation_id)
        except Exception:  # any driver or network fault: as if not kept
            envelope = None
    return envelope


async def attestation(request: Request) -> Response:
    """``GET /v1/attestations/{id}``."""
    attestation_id = request.path_params["id"]
    envelope = await envelope_of(_services(request), attestation_id)
    if envelope is None:
        raise ApiError("attestation_not_found", "no signed result with this id is kept here")
    body = b'{"id":"' + attestation_id.encode() + b'","envelope":' + envelope + b"}"
    return Response(body, media_type="application/json", headers={"Cache-Control": "public, max-age=86400, immutable"})


async def schema(request: Request) -> Response:
    """``GET /schemas/{name}``."""
    name = request.path_params["name"]
    if name not in SCHEMAS:
        raise ApiError("not_found", "no such schema")
    text = resources.files("app.attest").joinpath("schemas", name).read_bytes()
    return Response(text, media_type="application/schema+json", headers=_CACHE)
