"""The x402 facilitator: verifies and settles payments (x402 v2 facilitator API).

``POST {url}/verify`` and ``POST {url}/settle`` take ``{"x402Version", "paymentPayload",
"paymentRequirements"}`` and answer a ``VerifyResponse`` / ``SettleResponse``; ``GET
{url}/supported`` answers a ``SupportedResponse`` (the payment kinds it handles, see
:mod:`app.payment.supported`). Calls go through httpx2 under one budget per call (not per
read) with a capped answer; a facilitator that fails, times out or answers garbage raises
:class:`FacilitatorUnavailable`. Only a 200 answer can say a payment is valid or settled, or
say what is supported.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

import anyio
import httpx2
from pydantic import ValidationError
from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse

from app import jsonsafe
from app.payment.errors import FacilitatorUnavailable

MAX_REPLY_BYTES = 64 * 1024
#: Budget of one ``GET /supported`` (at most the call budget): it runs at start and for ``/readyz``.
SUPPORTED_BUDGET_S = 5.0
Answer = TypeVar("Answer", VerifyResponse, SettleResponse)


class Facilitator(Protocol):
    """What the payment gate needs from a facilitator."""

    async def verify(self, payload: PaymentPayload, requirements: PaymentRequirements) -> VerifyResponse:
        """Check the signed authorization against the requirements (no funds move)."""
        ...

    async def settle(self, payload: PaymentPayload, requirements: PaymentRequirements) -> SettleResponse:
        """Execute the transfer on chain."""
        ...

    async def supported(self) -> SupportedResponse:
        """The payment kinds the facilitator handles (``GET /supported``).

        Raises:
            FacilitatorUnavailable: no usable answer.
        """
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class HttpFacilitator:
    """A facilitator reached over HTTP(S) with httpx2.

    Args:
        url: base URL (``/verify``, ``/settle`` and ``/supported`` are appended).
        headers: extra headers, for hosted facilitators that want credentials.
        timeout_s: budget of one call, seconds (settlement waits for the chain).
    """

    def __init__(self, url: str, headers: dict[str, str] | None = None, timeout_s: float = 15.0) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self._client = httpx2.AsyncClient(
            headers={"Accept": "application/json", **(headers or {})},
            timeout=httpx2.Timeout(timeout_s, connect=min(5.0, timeout_s)),
            follow_redirects=False,
        )

    async def _post(
        self, path: str, payload: PaymentPayload, requirements: PaymentRequirements
    ) -> tuple[int, dict[str, Any]]:
        body = {
            "x402Version": payload.x402_version,
            "paymentPayload": payload.model_dump(mode="json", by_alias=True, exclude_none=True),
            "paymentRequirements": requirements.model_dump(mode="json", by_alias=True, exclude_none=True),
        }
        return await self._fetch("POST", path, body, self.timeout_s)

    async def _fetch(
        self, method: str, path: str, body: dict[str, Any] | None, budget_s: float
    ) -> tuple[int, dict[str, Any]]:
        """One call: its status and its JSON object (a 5xx, garbage or a blown budget raise)."""
        unavailable = FacilitatorUnavailable("facilitator_unavailable", f"facilitator {path} gave no usable answer")
        try:
            # The budget covers the whole call: a body that trickles a byte a second ends here too.
            with anyio.fail_after(budget_s):
                async with self._client.stream(method, self.url + path, json=body) as response:
                    content = bytearray()
                    async for chunk in response.aiter_bytes():
                        content += chunk
                        if len(content) > MAX_REPLY_BYTES:
                            raise unavailable
                    status = response.status_code
        except (httpx2.HTTPError, TimeoutError) as exc:
            raise unavailable from exc
        if status >= 500:
            raise unavailable
        try:
            answer = jsonsafe.loads(bytes(content))
        except ValueError as exc:
            raise unavailable from exc
        if not isinstance(answer, dict):
            raise unavailable
        return status, answer

    async def _call(
        self, path: str, model: type[Answer], payload: PaymentPayload, requirements: PaymentRequirements
    ) -> Answer:
        status, answer = await self._post(path, payload, requirements)
        if status != 200:
            # Only a 200 can say yes: a 4xx that claims success is read as a refusal.
            answer = answer | {"isValid": False, "success": False}
            answer.setdefault("invalidReason", f"facilitator_http_{status}")
            answer.setdefault("errorReason", f"facilitator_http_{status}")
        try:
            return model.model_validate(answer)
        except ValidationError as exc:
            raise FacilitatorUnavailable("facilitator_unavailable", f"facilitator {path} answer is malformed") from exc

    async def verify(self, payload: PaymentPayload, requirements: PaymentRequirements) -> VerifyResponse:
        """See :class:`Facilitator`."""
        return await self._call("/verify", VerifyResponse, payload, requirements)

    async def settle(self, payload: PaymentPayload, requirements: PaymentRequirements) -> SettleResponse:
        """See :class:`Facilitator`."""
        return await self._call("/settle", SettleResponse, payload, requirements)

    async def supported(self) -> SupportedResponse:
        """See :class:`Facilitator` (bounded by :data:`SUPPORTED_BUDGET_S`)."""
        status, answer = await self._fetch("GET", "/supported", None, min(SUPPORTED_BUDGET_S, self.timeout_s))
        if status != 200:
            raise FacilitatorUnavailable("facilitator_unavailable", f"facilitator /supported answered {status}")
        try:
            return SupportedResponse.model_validate(answer)
        except ValidationError as exc:
            message = "facilitator /supported answer is malformed"
            raise FacilitatorUnavailable("facilitator_unavailable", message) from exc

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.aclose()
