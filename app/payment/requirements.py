"""What a paid check costs, in x402 v2 terms (PaymentRequirements, PaymentRequired).

Sources: x402 specification v2 (HTTP transport: ``PAYMENT-REQUIRED``, ``PAYMENT-SIGNATURE``,
``PAYMENT-RESPONSE``; scheme ``exact`` on EVM with EIP-3009 ``transferWithAuthorization``);
the wire types are the ``x402`` package's pydantic models.

Policy: the price, networks, assets, ``payTo`` and timeout come from settings; the resource URL
is the public URL from settings, never the request's internal URL. A payment is accepted only
when its ``accepted`` requirements equal one of ours field for field (amount, asset, network,
``payTo``, scheme), so a client cannot pay less, elsewhere, or in another token. The
document's ``extensions`` declare bazaar discovery and the optional ``payment-identifier``
(:mod:`app.payment.identifier`).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from x402.extensions.bazaar import declare_discovery_extension
from x402.schemas import PaymentPayload, PaymentRequired, PaymentRequirements, ResourceInfo

from app.payment.identifier import declaration
from app.settings import Settings

X402_VERSION = 2
CHECK_PATH = "/v1/mcp/check"
DESCRIPTION = "Live check of one remote MCP server: handshake, tools/list, auth and TLS facts."


def atomic_amount(price_usd: str, decimals: int) -> str:
    """The price in the asset's smallest unit (USDC has 6 decimals: USD 0.005 -> ``"5000"``)."""
    return str(int(Decimal(price_usd) * (10**decimals)))


def payment_requirements(settings: Settings, price_usd: str | None = None) -> list[PaymentRequirements]:
    """One ``exact`` requirement per configured network at ``price_usd`` (default: a check's
    price); empty when no ``pay_to`` is set."""
    if settings.pay_to is None:
        return []
    return [
        PaymentRequirements(
            scheme="exact",
            network=option.network,
            asset=option.asset,
            amount=atomic_amount(price_usd or settings.price_usd, option.decimals),
            pay_to=settings.pay_to,
            max_timeout_seconds=settings.payment_timeout_s,
            extra={"name": option.name, "version": option.version},
        )
        for option in settings.payment_networks
    ]


def resource_info(settings: Settings) -> ResourceInfo:
    """The paid resource, named by its public URL."""
    return ResourceInfo(
        url=settings.public_base_url + CHECK_PATH, description=DESCRIPTION, mime_type="application/json"
    )


def discovery_extension() -> dict[str, Any]:
    """The bazaar discovery extension: how to call the route (the check request body)."""
    return declare_discovery_extension(
        input={"url": "https://mcp.example.com/mcp"},
        input_schema={
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "MCP endpoint (https, port 443)"},
                "include": {
                    "type": "array",
                    "items": {"enum": ["tools"]},
                    "maxItems": 1,
                    "description": "tools: add the cleaned tool definitions to the result",
                },
                "headers": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "credentialed check: Authorization and up to 8 more, sent to the probed origin",
                },
            },
            "required": ["url"],
            "additionalProperties": False,
        },
        body_type="json",
    )


def payment_required(
    settings: Settings, error: str, resource: ResourceInfo | None = None, price_usd: str | None = None
) -> PaymentRequired:
    """The x402 ``PaymentRequired`` document; ``error`` carries our stable reason key.

    ``resource``: a paid resource other than the check (at the check's price unless
    ``price_usd`` says another); its document declares no bazaar discovery, which describes
    the check's body.
    """
    return PaymentRequired(
        x402_version=X402_VERSION,
        error=error,
        resource=resource or resource_info(settings),
        accepts=payment_requirements(settings, price_usd),
        extensions=declaration() if resource is not None else discovery_extension() | declaration(),
    )


def matching_requirement(payload: PaymentPayload, ours: list[PaymentRequirements]) -> PaymentRequirements | None:
    """Our requirement that the payload's ``accepted`` equals, field for field, or ``None``."""
    accepted = payload.accepted
    for requirement in ours:
        if (
            accepted.scheme == requirement.scheme
            and accepted.network == requirement.network
            and accepted.asset.lower() == requirement.asset.lower()
            and accepted.amount == requirement.amount
            and accepted.pay_to.lower() == requirement.pay_to.lower()
        ):
            return requirement
    return None
