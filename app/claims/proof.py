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
- Or, for a claim opened with ``"method": "dns_txt"``, a TXT record at ``_mcp-sonde.<host>``
  whose text is ``mcp-sonde-claim=<challenge>`` (:mod:`app.claims.dns`). A claim is checked
  again by the method it was opened with; an owner who moves to the other opens a new claim.
"""

from __future__ import annotations

from app.baselines.proof import FETCH_REFUSALS, MAX_TOKENS, WELL_KNOWN_PATH, fetch_well_known, listed_tokens, lists
from app.claims.dns import DnsUnanswered, TxtLookup, published, record_name, record_text
from app.db.tables.owners import DNS_TXT
from app.errors import SondeError
from app.guard import Resolver
from app.net.dial import Dialler
from app.net.fetch import FetchFailed


class ClaimRefused(SondeError):
    """The host did not prove control.

    Reasons: ``claim_proof_not_found`` (no document: not 200, or the host did not resolve or
    answer; or no TXT record at the name), ``claim_proof_invalid`` (not JSON, too large, no
    token list, or not this claim's challenge; or TXT records but not this one),
    ``claim_proof_redirect_refused`` (a redirect off the host, or too many),
    ``claim_proof_timeout``, ``claim_dns_unanswered`` (the resolver gave no usable answer).
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


def dns_record(host: str, challenge: str) -> dict[str, str]:
    """The TXT record to publish for a ``dns_txt`` claim of ``host``."""
    return {"name": record_name(host), "type": "TXT", "value": record_text(challenge)}


async def verify_dns(host: str, challenge: str, txt: TxtLookup) -> None:
    """Check that ``_mcp-sonde.<host>`` has the TXT record of ``challenge``.

    Raises:
        ClaimRefused: ``claim_proof_not_found`` (no TXT record: the resolver answered),
            ``claim_proof_invalid`` (records, none of them this one), ``claim_dns_unanswered``.
    """
    name = record_name(host)
    try:
        texts = await txt.texts(name)
    except DnsUnanswered as exc:
        raise ClaimRefused(exc.reason, exc.message) from None
    refused: ClaimRefused | None = None
    if not texts:
        refused = ClaimRefused("claim_proof_not_found", f"{name} has no TXT record")
    elif not published(texts, challenge):
        message = f"no TXT record of {name} is mcp-sonde-claim=<this claim's challenge>"
        refused = ClaimRefused("claim_proof_invalid", message)
    if refused is not None:
        refused.answered = True
        raise refused


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
    method: str,
    txt: TxtLookup,
    resolver: Resolver,
    allow_private: bool,
    ca_bundle: str | None = None,
    network_backend: Dialler | None = None,
    user_agent: str | None = None,
) -> None:
    """Check the proof of a claim of ``host`` by ``method``: the TXT record (:func:`verify_dns`),
    or the well-known document, fetched and checked to list ``challenge``.

    Raises:
        TargetRefused: the guard refused the document's URL or its host's addresses.
        ResolverBusy: no lookup thread may be taken now.
        ClaimRefused: see the class.
    """
    if method == DNS_TXT:
        await verify_dns(host, challenge, txt)
        return
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
