"""Shares of a budget by network: a client, and the wider networks it sits in, each capped.

A client's key (:func:`app.checking.clients.rate_key`) is its IPv4 address or its IPv6 /64.
Addresses are cheap inside one allocation: a host given a /48 holds 65,536 /64s, so limits per
/64 alone let one site empty a budget meant for everyone. The networks above a client
(``fairness.yaml``: IPv6 /56 and /48, IPv4 /24 and /16) are counted too, and each may take at
most its share of the budget (never less than one client's own allowance). Keys that are not
addresses (a client seen through no trusted proxy and no socket: ``unknown``) are one client
with no network above it.
"""

from __future__ import annotations

import functools
import ipaddress
import math
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml


@dataclass(frozen=True, slots=True)
class Level:
    """One network level: its prefix lengths and the share of a budget it may take."""

    ipv6: int
    ipv4: int
    share: float

    def cap(self, budget: int, allowance: int) -> int:
        """The most this level may take of ``budget``: its share, never below ``allowance``."""
        return max(allowance, math.ceil(self.share * budget))


@dataclass(frozen=True, slots=True)
class Policy:
    """The levels of one budget, with its reserve (a share kept back) or its own budget for
    misses of names that do not resolve."""

    levels: tuple[Level, ...]
    reserve: float = 0.0
    unresolved: float = 0.0


@functools.cache
def policy(name: str) -> Policy:
    """The policy named ``name`` in ``fairness.yaml`` (``free_pool``, ``badge_misses``)."""
    text = resources.files("app.checking").joinpath("fairness.yaml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, Any]] = yaml.safe_load(text)
    entry = loaded[name]
    levels = tuple(Level(int(lv["ipv6"]), int(lv["ipv4"]), float(lv["share"])) for lv in entry["levels"])
    return Policy(levels, float(entry.get("reserve", 0.0)), float(entry.get("unresolved", 0.0)))


def networks(client: str, levels: tuple[Level, ...]) -> tuple[str, ...]:
    """The networks above ``client`` (a rate key), one per level, narrowest first; none for a
    key that is not an address."""
    try:
        network = ipaddress.ip_network(client, strict=False)
    except ValueError:
        return ()
    wider: list[str] = []
    for level in levels:
        prefix = level.ipv6 if network.version == 6 else level.ipv4
        wider.append(str(network.supernet(new_prefix=min(prefix, network.prefixlen))))
    return tuple(wider)
