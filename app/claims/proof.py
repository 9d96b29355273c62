"""What an owner publishes to claim a host, and the check of it.

Policy (after the registry's HTTP namespace verification and lookupd's domain check):

- A claim names a host (the host of an MCP endpoint URL, as the target guard reads it). A host
  that is a public suffix (``com``, ``co.uk``, ``github.io``: :func:`app.guard.suffix.is_public_suffix`)
  is refused: nobody speaks for every name under it.
- The owner publishes ``{"mcp-sonde": {"claim_tokens": ["<challenge>"]}}`` in the host's
  well-known document, ``https://<host>/.well-known/mcp-sonde.json`` (RFC 8615; the same file
  that holds baseline tokens, :mod:`app.baselines.proof`), always over https on port 443.
- It is fetched through the target guard and dialled pinned (:func:`app.net.fetch.fetch_document`),
  at most 64 KB, within 5 s, following at most 3 redirects and only on the same origin. The
  claim holds when the document lists the challenge (compared in constant time).
"""

from __future__ import annotations

import httpcore2

from app.baselines.proof import FETCH_REFUSALS, MAX_TOKENS, WELL_KNOWN_PATH, fetch_well_known, listed_tokens, lists
from app.errors import SondeError
from app.guard import Resolver
from app.net.fetch import FetchFailed


class ClaimRefused(SondeError):
    """The host did not prove control.

    Reasons: ``claim_proof_not_found`` (no document: not 200, or the host did not resolve or
    answer), ``claim_proof_invalid`` (not JSON, too large, no token list, or not this claim's
    challenge), ``claim_proof_redirect_refused`` (a redirect off the host, or too many),
    ``claim_proof_timeout``.
    """

    @property
    def gone(self) -> bool:
        """The host answered and the token is not there (not a fault on the way to it)."""
        return self.reason == "claim_proof_invalid" or (self.reason == "claim_proof_not_found" and self.answered)

    answered: bool = False


def claim_url(host: str) -> str:
    """Where the claim of ``host`` is read."""
    shown = f"[{host}]" if ":" in host else host
    return f"https://{shown}{WELL_KNOWN_PATH}"


def claim_document(*challenges: str) -> dict[str, object]:
    """The document to publish at :func:`claim_url` for ``challenges``."""
    return {"mcp-sonde": {"claim_tokens": list(challenges)}}


def holds(body: bytes, challenge: str) -> None:
    """Check that the document ``body`` lists ``challenge``.

    Raises:
        ClaimRefused: ``claim_proof_invalid``, saying what is wrong.
    """
    try:
        tokens = listed_tokens(body, "claim_tokens")
    except ValueError:
        raise ClaimRefused("claim_proof_invalid", f"the document at {WELL_KNOWN_PATH} is not JSON") from None
    if tokens is None:
        message = f'the document holds no {{"mcp-sonde": {{"claim_tokens": [...]}}}} of at most {MAX_TOKENS} strings'
        raise ClaimRefused("claim_proof_invalid", message)
    if not lists(tokens, challenge):
        raise ClaimRefused("claim_proof_invalid", "the document does not list this claim's challenge")


async def verify_claim(
    host: str,
    challenge: str,
    *,
    resolver: Resolver,
    allow_private: bool,
    ca_bundle: str | None = None,
    network_backend: httpcore2.AsyncNetworkBackend | None = None,
    user_agent: str | None = None,
) -> None:
    """Fetch ``host``'s well-known document and check that it lists ``challenge``.

    Raises:
        TargetRefused: the guard refused the document's URL or its host's addresses.
        ResolverBusy: no lookup thread may be taken now.
        ClaimRefused: see the class.
    """
    try:
        body = await fetch_well_known(
            claim_url(host), resolver=resolver, allow_private=allow_private, ca_bundle=ca_bundle,
            network_backend=network_backend, user_agent=user_agent,
        )  # fmt: skip
    except FetchFailed as exc:
        reason = "claim_proof_" + FETCH_REFUSALS.get(exc.reason, "not_found")
        refused = ClaimRefused(reason, f"the claim document could not be read: {exc.message}")
        refused.answered = exc.reason == "fetch_status"
        raise refused from None
    holds(body, challenge)
