"""The target guard: nothing is connected to before it says yes.

:func:`check_url` checks the URL's form; :func:`resolve_target` resolves it once and checks
every address. See the module docstrings for the policy and the RFCs behind it.
"""

from __future__ import annotations

from app.guard.addresses import IPAddress, classify, is_public
from app.guard.resolver import ResolutionFailed, Resolver, ResolverBusy, SystemResolver
from app.guard.target import ResolvedTarget, resolve_target
from app.guard.url import MAX_URL_LENGTH, REFUSAL_REASONS, TargetUrl, check_url

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
