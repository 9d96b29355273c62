"""Whether the facilitator handles every payment option we accept (x402 v2 ``GET /supported``).

Source: x402 specification v2, facilitator API: ``GET /supported`` answers a
``SupportedResponse`` ``{"kinds": [{"x402Version", "scheme", "network", "extra"?}],
"extensions", "signers"}``; the wire types are the ``x402`` package's (``SupportedResponse``,
``SupportedKind``). A kind's network may be a CAIP-2 wildcard (``eip155:*``), matched as the
package matches it (``x402.schemas.helpers.matches_network_pattern``).

Policy:

1. Every configured option, that is each network of ``payment_networks`` with scheme
   ``exact`` and x402 version 2, must be one of the facilitator's kinds.
2. At start (paid checks on): a facilitator that answers and lacks an option **fails the
   start** with :class:`FacilitatorUnsupported` (reason ``facilitator_unsupported``), its
   one-line message naming every missing option. A service that started anyway would take
   signatures for payments its facilitator cannot verify or settle, and each payer would learn
   it only after signing; the operator who wants fewer networks lists only those in
   ``MCP_SONDE_PAYMENT_NETWORKS``, so no setting starts the service regardless.
3. A facilitator that gives no usable answer at start (unreachable, slow, a non-200, garbage)
   does not fail it: that may be a passing outage. One line is logged and ``/readyz`` reports
   ``supported: "unknown"`` until an answer comes.
4. After the start, an answer that lacks an option (the facilitator changed, or it was
   unreachable at start) makes a paid check on that option a 503 ``facilitator_unsupported``
   before anything is verified or charged, and ``/readyz`` lists what is missing.
5. Answers are kept :data:`ANSWER_TTL_S` (no usable answer: :data:`FAILURE_TTL_S`), and one
   call runs at a time, so ``/readyz`` and paid checks never hammer the facilitator. The call
   has the facilitator client's cap on the answer and a bounded budget
   (:data:`app.payment.facilitator.SUPPORTED_BUDGET_S`).

The ``x402`` package draws the same line (``x402.http.background_init``: a capability mismatch
is fatal at start, an empty or failed ``/supported`` is retryable), but its check lives in
``x402ResourceServer.initialize``, which fetches synchronously and which this service does not
use (:mod:`app.payment.gate` is its own resource server); the comparison here is the package's
wire types and network matching.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio
from x402.schemas import PaymentRequirements, SupportedResponse
from x402.schemas.helpers import matches_network_pattern

from app.errors import SondeError
from app.payment.errors import FacilitatorUnavailable
from app.payment.facilitator import Facilitator

logger = logging.getLogger("mcp_sonde.payment")

X402_VERSION = 2
#: How long a ``/supported`` answer is believed, seconds.
ANSWER_TTL_S = 60.0
#: How long "no usable answer" stands before the next try, seconds.
FAILURE_TTL_S = 10.0


class FacilitatorUnsupported(SondeError):
    """The facilitator answered ``/supported`` without some configured option (reason
    ``facilitator_unsupported``); :attr:`missing` names them."""

    def __init__(self, message: str, missing: tuple[Kind, ...]) -> None:
        super().__init__("facilitator_unsupported", message)
        self.missing = missing


@dataclass(frozen=True)
class Kind:
    """One payment kind: what an option needs from the facilitator."""

    network: str
    scheme: str
    x402_version: int

    def __str__(self) -> str:
        return f"{self.network} {self.scheme} x402 v{self.x402_version}"

    def wire(self) -> dict[str, str | int]:
        """The kind as the facilitator spells it."""
        return {"x402Version": self.x402_version, "scheme": self.scheme, "network": self.network}


@dataclass(frozen=True)
class Support:
    """What is known of the facilitator's support.

    Attributes:
        answered: the last call gave a usable answer (``missing`` is meaningful).
        missing: our kinds the answer lacks.
    """

    answered: bool
    missing: tuple[Kind, ...] = ()

    @property
    def ok(self) -> bool:
        """The facilitator answered and handles every option."""
        return self.answered and not self.missing

    def report(self) -> str | list[dict[str, str | int]]:
        """``/readyz``'s ``payments.supported``: ``"ok"``, ``"unknown"`` or the missing kinds."""
        if not self.answered:
            return "unknown"
        return [kind.wire() for kind in self.missing] if self.missing else "ok"


def kinds_of(requirements: list[PaymentRequirements]) -> tuple[Kind, ...]:
    """The kinds our requirements need, in order, once each."""
    return tuple(dict.fromkeys(Kind(r.network, r.scheme, X402_VERSION) for r in requirements))


def missing_kinds(needed: tuple[Kind, ...], answer: SupportedResponse) -> tuple[Kind, ...]:
    """The needed kinds that no kind of ``answer`` covers (same version and scheme, and a
    network equal to ours or a wildcard over it)."""
    return tuple(
        kind
        for kind in needed
        if not any(
            offered.x402_version == kind.x402_version
            and offered.scheme == kind.scheme
            and matches_network_pattern(kind.network, offered.network)
            for offered in answer.kinds
        )
    )


def public_url(url: str) -> str:
    """``url`` fit for a log line: scheme, host, port and path (no credentials, no query)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class SupportCheck:
    """The facilitator's ``/supported`` against our requirements, cached (see the module policy).

    Args:
        facilitator: asked with :meth:`~app.payment.facilitator.Facilitator.supported`.
        requirements: every payment option we accept.
        url: the facilitator's URL, for messages (logged without credentials or query).
    """

    def __init__(self, facilitator: Facilitator, requirements: list[PaymentRequirements], url: str) -> None:
        self.facilitator = facilitator
        self.needed = kinds_of(requirements)
        self.url = public_url(url)
        self._known: tuple[float, Support] | None = None  # (expires, what we know)
        self._lock = anyio.Lock()

    async def status(self) -> Support:
        """What the facilitator supports, asked at most every :data:`ANSWER_TTL_S` seconds."""
        known = self._known
        if known is not None and known[0] > time.monotonic():
            return known[1]
        async with self._lock:  # one call at a time; the others take its answer
            known = self._known
            if known is not None and known[0] > time.monotonic():
                return known[1]
            try:
                answer = await self.facilitator.supported()
            except FacilitatorUnavailable:
                support, ttl = Support(answered=False), FAILURE_TTL_S
            else:
                support, ttl = Support(answered=True, missing=missing_kinds(self.needed, answer)), ANSWER_TTL_S
            self._known = (time.monotonic() + ttl, support)
            return support

    async def at_start(self) -> Support:
        """Policy steps 2 and 3: called once when the service starts with paid checks on.

        Raises:
            FacilitatorUnsupported: the facilitator answered and lacks some option.
        """
        support = await self.status()
        if not support.answered:
            logger.warning(
                "facilitator %s gave no usable answer to /supported at start; paid checks stay on, "
                "/readyz reports supported: unknown",
                self.url,
            )
        elif support.missing:
            raise FacilitatorUnsupported(self.message(support.missing), support.missing)
        return support

    def message(self, missing: tuple[Kind, ...]) -> str:
        """One line naming what the facilitator lacks."""
        names = ", ".join(str(kind) for kind in missing)
        return (
            f"facilitator {self.url} does not support {names}; use a facilitator that does, "
            f"or leave {'that network' if len(missing) == 1 else 'those networks'} out of MCP_SONDE_PAYMENT_NETWORKS"
        )

    async def refuse_unsupported(self, requirement: PaymentRequirements) -> None:
        """Policy step 4, before a paid check is verified.

        Raises:
            FacilitatorUnsupported: the last answer lacks ``requirement``'s kind.
        """
        kind = Kind(requirement.network, requirement.scheme, X402_VERSION)
        support = await self.status()
        if kind in support.missing:
            raise FacilitatorUnsupported(self.message((kind,)), (kind,))
