"""A full check: probe the endpoint, then judge it (:mod:`app.suite.judge`).

The suite and its models are imported when the first judging starts, not with this module,
so the probe's first packet does not wait for them (the CLI imports them meanwhile)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

from app.guard import ResolutionFailed, ResolvedTarget, Resolver, TargetUrl
from app.net.dial import Dialler
from app.net.pace import Pace
from app.probe.credentials import Credentials
from app.probe.evidence import Evidence
from app.probe.reach import ContactPolicy
from app.probe.runner import Observation, ProbeFailed, observe, unresolved_result
from app.settings import Settings

if TYPE_CHECKING:
    from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.checks")
#: Tool lists up to this many bytes are judged on the event loop (a list never seen before costs
#: about 0.25 ms of CPU per kB, bench/hygiene.py; a known one a tenth of that), larger ones on a
#: worker thread, whose hand-off costs more than judging a small list.
INLINE_BYTES = 8 * 1024
_LIMITER: anyio.CapacityLimiter | None = None


def _judging() -> anyio.CapacityLimiter:
    global _LIMITER
    if _LIMITER is None:
        _LIMITER = anyio.CapacityLimiter(2)
    return _LIMITER


async def full_check(
    url: str,
    *,
    settings: Settings,
    resolver: Resolver | None = None,
    network_backend: Dialler | None = None,
    resolved: ResolvedTarget | None = None,
    credentials: Credentials | None = None,
    observer: Callable[[str], None] | None = None,
    include_tools: bool = False,
    contact: ContactPolicy | None = None,
    pace: Pace | None = None,
) -> CheckResult:
    """Probe ``url`` in full and judge every check of the catalogue.

    Raises:
        TargetRefused: the URL is refused (nothing was connected to).
        PaceRefused: the host's start turn did not come (nothing was connected to).
        ProbeFailed: a fault of the probe itself.
    """
    observation = await observe(
        url,
        settings=settings,
        resolver=resolver,
        network_backend=network_backend,
        resolved=resolved,
        credentials=credentials.as_dict() if credentials is not None else None,
        observer=observer,
        contact=contact,
        pace=pace,
    )
    try:
        from app.suite.judge import full_result

        names = credentials.names() if credentials is not None else ()
        judge = functools.partial(full_result, observation, credential_headers=names, include_tools=include_tools)
        if observation.evidence.listed_bytes <= INLINE_BYTES:
            result = judge()  # well under a millisecond: a thread hand-off would cost more
        else:
            # Judging a hostile list of 2,000 tools is seconds of CPU: off the event loop, so the
            # service keeps answering meanwhile (at most two suites at once, one per core).
            result = await anyio.to_thread.run_sync(judge, limiter=_judging())
    except Exception as exc:
        logger.exception("the check suite failed internally")
        raise ProbeFailed("probe_internal_error", "the check suite failed through a fault of its own") from exc
    return redacted(result, credentials) if credentials is not None else result


def redacted(result: CheckResult, credentials: Credentials) -> CheckResult:
    """``result`` with every string in which a server echoed a credential value replaced (see
    :mod:`app.suite.redaction`)."""
    from app.suite.model import CheckResult
    from app.suite.redaction import Secrets, scrubbed

    secrets = Secrets(credentials.headers)
    if not secrets:
        return result
    cleaned, changed = scrubbed(result.model_dump(mode="json"), secrets)
    if not changed:
        return result
    try:
        return CheckResult.model_validate(cleaned)
    except ValueError as exc:  # fail closed: never answer with the value
        raise ProbeFailed("probe_internal_error", "the result could not be cleared of credential values") from exc


def unresolved_check(url: TargetUrl, failure: ResolutionFailed, credentials: Credentials | None = None) -> CheckResult:
    """The full result for a URL whose host did not resolve (nothing was connected to)."""
    from app.suite.judge import full_result

    names = credentials.names() if credentials is not None else ()
    return full_result(Observation(unresolved_result(url, failure), Evidence()), credential_headers=names)
