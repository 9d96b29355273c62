"""Owner claims: whoever can publish a token on a host proves control of it and speaks for its servers.

:mod:`app.claims.proof` says what the owner publishes and checks it, fetched through the target
guard; :mod:`app.claims.store` keeps claims, owner tokens (hashed), profiles, paused sweeps and
the audit log of every owner action in the database.
"""

from app.claims.proof import ClaimRefused, claim_document, claim_url, verify_claim
from app.claims.store import Claim, ClaimStore, OwnerAction

__all__ = ["Claim", "ClaimRefused", "ClaimStore", "OwnerAction", "claim_document", "claim_url", "verify_claim"]
