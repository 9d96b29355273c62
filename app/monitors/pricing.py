"""What a monitor costs: a prepaid block of runs, bought with one x402 payment.

Policy: a block is ``monitor_block_runs`` runs (100 by default) at ``monitor_run_price_usd``
each (USD 0.005 by default, a check's price), paid at once: one payment of the block's price
buys one monitor with that many runs, each a full signed check stored in the history. The
x402 ``PaymentRequired`` document names the resource ``/v1/monitors`` and says in its
``description`` how many runs the payment buys and at what price each; the 402 answer says it
again as JSON (``monitor_block``).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from x402.schemas import ResourceInfo

from app.settings import Settings

MONITORS_PATH = "/v1/monitors"


def block_price(settings: Settings) -> str:
    """The price of one block, in USD (a decimal string)."""
    return format(Decimal(settings.monitor_run_price_usd) * settings.monitor_block_runs, "f")


def monitor_resource(settings: Settings) -> ResourceInfo:
    """The paid resource: a monitor, by the public URL of the route that makes one."""
    runs, price = settings.monitor_block_runs, settings.monitor_run_price_usd
    return ResourceInfo(
        url=settings.public_base_url + MONITORS_PATH,
        description=f"Monitor of one remote MCP server: a prepaid block of {runs} runs (full signed checks) "
        f"at USD {price} each.",
        mime_type="application/json",
    )


def block_terms(settings: Settings) -> dict[str, Any]:
    """The block as the 402 answer states it."""
    return {
        "runs": settings.monitor_block_runs,
        "price_per_run_usd": settings.monitor_run_price_usd,
        "price_usd": block_price(settings),
    }
