"""Proof that whoever approves a server's baseline controls its host: a token in a well-known document.

Policy:

- The document is ``https://<host>[:<port>]/.well-known/mcp-sonde.json`` (a well-known URI,
  RFC 8615), where host and port are those of the server's stored URL (the port only when it
  is not 443), always over https. It is fetched through the target guard
  (:func:`app.net.fetch.fetch_document`: the URL's form, one lookup, every address public
  unless the development switch is on, dialled only at those addresses), at most
  :data:`MAX_DOCUMENT_BYTES` read (a longer one is refused unread), within the proof's budget
  (:data:`FETCH_TIMEOUT_S` by default), following at most :data:`MAX_REDIRECTS` redirects and
  only to the same origin.
- It is a JSON object ``{"mcp-sonde": {"baseline_tokens": ["<token>", ...]}}`` (other members
  are ignored; at most :data:`MAX_TOKENS` tokens); the proof holds when it lists the token of
  the tool set being approved.
- The token is ``hex(HMAC-SHA256(key, "mcp-sonde baseline v1\\n" + server_id + "\\n" +
  definitions_sha256))``: it names exactly one tool list of one server. The document is public,
  so anyone may read its tokens, and the service hands a token to anyone who asks; neither
  gives anything: a token read from the document approves only the list its host already
  approved, for that server, and a token for another list or server cannot be made without
  the key.
- The key is derived with HKDF-SHA256 (RFC 5869, info ``mcp-sonde baseline proof v1``) from
  the raw private key of the instance's signing key that signs now
  (:meth:`app.attest.keyring.KeyRing.signing_key`): it is already the instance's one secret,
  kept as carefully as its signatures need, so no second secret has to be provisioned, and
  HKDF with its own label keeps the two uses apart (the proof key says nothing of the signing
  key, and no token is a signature). Instances behind one public URL sign with one key (they
  publish one key document), so they agree on tokens. After a key rotation the tokens change:
  a token placed and not yet used must be placed again (the service says which).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from app import jsonsafe
from app.errors import SondeError
from app.guard import Resolver
from app.net.dial import Dialler
from app.net.fetch import FetchFailed, fetch_document

WELL_KNOWN_PATH = "/.well-known/mcp-sonde.json"
MAX_DOCUMENT_BYTES = 64 * 1024
FETCH_TIMEOUT_S = 5.0
MAX_REDIRECTS = 3
MAX_TOKENS = 1000
_INFO = b"mcp-sonde baseline proof v1"
_LABEL = "mcp-sonde baseline v1\n"


class ProofRefused(SondeError):
    """The host did not prove control.

    Reasons: ``proof_not_found`` (no document: not 200, the host did not resolve or answer),
    ``proof_invalid`` (not JSON, too large, no token list, not the token of this tool set),
    ``proof_redirect_refused`` (a redirect off the host, or too many), ``proof_timeout``.
    """


def proof_key(signing_key: Ed25519PrivateKey) -> bytes:
    """The proof key of an instance whose signing key is ``signing_key`` (see the module docs)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_INFO).derive(signing_key.private_bytes_raw())


def baseline_token(key: bytes, server_id: str, definitions_sha256: str) -> str:
    """The token that approves the tool list ``definitions_sha256`` for the server ``server_id``."""
    message = f"{_LABEL}{server_id}\n{definitions_sha256}".encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def proof_document(*tokens: str) -> dict[str, Any]:
    """The document to place at :func:`proof_url`, listing ``tokens``."""
    return {"mcp-sonde": {"baseline_tokens": list(tokens)}}


def proof_url(server_url: str) -> str:
    """Where the proof for the server at ``server_url`` is read."""
    parts = urlsplit(server_url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = "" if parts.port in (None, 443) else f":{parts.port}"
    return f"https://{host}{port}{WELL_KNOWN_PATH}"


def listed_tokens(body: bytes, member: str) -> list[str] | None:
    """The strings of ``{"mcp-sonde": {member: [...]}}`` in the well-known document ``body``
    (baseline tokens here, claim tokens for :mod:`app.claims.proof`); ``None`` when it holds no
    such list of at most :data:`MAX_TOKENS` strings.

    Raises:
        ValueError: ``body`` is not JSON.
    """
    try:
        document: object = jsonsafe.loads(body)
    except RecursionError:
        raise ValueError("too deep") from None
    section = document.get("mcp-sonde") if isinstance(document, dict) else None
    tokens = section.get(member) if isinstance(section, dict) else None
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens) or len(tokens) > MAX_TOKENS:
        return None
    return tokens


def lists(tokens: list[str], token: str) -> bool:
    """Whether ``tokens`` holds ``token`` (compared in constant time)."""
    return any(hmac.compare_digest(candidate.encode(), token.encode()) for candidate in tokens)


#: What a failed fetch of the well-known document is called, after a refusal's prefix.
FETCH_REFUSALS = {
    "fetch_redirect_refused": "redirect_refused",
    "fetch_too_large": "invalid",
    "fetch_timeout": "timeout",
}


async def fetch_well_known(
    url: str,
    *,
    resolver: Resolver,
    allow_private: bool,
    timeout_s: float = FETCH_TIMEOUT_S,
    ca_bundle: str | None = None,
    network_backend: Dialler | None = None,
    user_agent: str | None = None,
) -> bytes:
    """The well-known document at ``url``, fetched within the bounds of the module docs.

    Raises:
        TargetRefused, ResolverBusy: as :func:`app.net.fetch.fetch_document`.
        FetchFailed: the document could not be had (:data:`FETCH_REFUSALS` names its refusal).
    """
    fetched = await fetch_document(
        url, resolver=resolver, allow_private=allow_private, max_bytes=MAX_DOCUMENT_BYTES, timeout_s=timeout_s,
        redirects=MAX_REDIRECTS, ca_bundle=ca_bundle, network_backend=network_backend,
        headers={"user-agent": user_agent} if user_agent else None,
    )  # fmt: skip
    return fetched.body


def holds(body: bytes, token: str) -> None:
    """Check that the document ``body`` lists ``token``.

    Raises:
        ProofRefused: ``proof_invalid``, saying what is wrong.
    """
    try:
        tokens = listed_tokens(body, "baseline_tokens")
    except ValueError:
        raise ProofRefused("proof_invalid", f"the document at {WELL_KNOWN_PATH} is not JSON") from None
    if tokens is None:
        message = f'the document holds no {{"mcp-sonde": {{"baseline_tokens": [...]}}}} of at most {MAX_TOKENS} strings'
        raise ProofRefused("proof_invalid", message)
    if not lists(tokens, token):
        raise ProofRefused("proof_invalid", "the document does not list the token of this server's tool set")


async def prove(
    server_url: str,
    token: str,
    *,
    resolver: Resolver,
    allow_private: bool,
    timeout_s: float = FETCH_TIMEOUT_S,
    ca_bundle: str | None = None,
    network_backend: Dialler | None = None,
    user_agent: str | None = None,
) -> None:
    """Fetch the proof document of the server's host and check that it lists ``token``.

    Raises:
        TargetRefused: the guard refused the document's URL or its host's addresses.
        ResolverBusy: no lookup thread may be taken now.
        ProofRefused: see the class.
    """
    try:
        body = await fetch_well_known(
            proof_url(server_url), resolver=resolver, allow_private=allow_private, timeout_s=timeout_s,
            ca_bundle=ca_bundle, network_backend=network_backend, user_agent=user_agent,
        )  # fmt: skip
    except FetchFailed as exc:
        reason = "proof_" + FETCH_REFUSALS.get(exc.reason, "not_found")
        raise ProofRefused(reason, f"the proof document could not be read: {exc.message}") from None
    holds(body, token)
