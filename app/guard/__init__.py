"""The target guard: nothing is connected to before it says yes.

:func:`check_url` checks the URL's form; :func:`resolve_target` resolves it once and checks
every address (:mod:`app.guard.policy`). See the module docstrings for the policy and the RFCs
behind it. The names are imported when first used (PEP 562), so the light modules (the URL's
form, the address policy) load without the resolver and its thread machinery.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.guard.addresses import IPAddress, classify, is_public
    from app.guard.resolver import ResolutionFailed, Resolver, ResolverBusy, SystemResolver
    from app.guard.target import ResolvedTarget, resolve_target
    from app.guard.url import MAX_URL_LENGTH, REFUSAL_REASONS, TargetUrl, check_url

_WHERE = {
    "IPAddress": "addresses", "classify": "addresses", "is_public": "addresses",
    "ResolutionFailed": "resolver", "Resolver": "resolver", "ResolverBusy": "resolver", "SystemResolver": "resolver",
    "ResolvedTarget": "target", "resolve_target": "target",
    "MAX_URL_LENGTH": "url", "REFUSAL_REASONS": "url", "TargetUrl": "url", "check_url": "url",
}  # fmt: skip

__all__ = [
    "MAX_URL_LENGTH",
    "REFUSAL_REASONS",
    "IPAddress",
    "ResolutionFailed",
    "ResolvedTarget",
    "Resolver",
    "ResolverBusy",
    "SystemResolver",
    "TargetUrl",
    "check_url",
    "classify",
    "is_public",
    "resolve_target",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"app.guard.{module}"), name)
