"""``probe()``: one live check of an MCP endpoint, bounded in time and memory.

Policy:
- The URL passes the target guard (:mod:`app.guard`) before anything else; a refused URL
  raises :class:`app.errors.TargetRefused` and nothing is connected to.
- The host is resolved once; the transport dials only the addresses that were checked.
- The whole probe is bounded by ``probe_timeout_s`` (``light_probe_timeout_s`` for a light
  probe), of which ``session_end_timeout_s`` is kept back for the closing DELETE.
- Whatever the server does, the probe returns a :class:`ProbeResult`. Only a fault of the
  probe itself raises (:class:`ProbeFailed`), so callers can tell our faults from the server's,
  and the caller's own pace when it gives the probed host no turn (:class:`PaceRefused`,
  :mod:`app.net.pace`).
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import anyio

from app import __version__
from app.errors import SondeError, TargetRefused
from app.guard import (
    ResolutionFailed,
    ResolvedTarget,
    Resolver,
    SystemResolver,
    TargetUrl,
    check_url,
    resolve_target,
)
from app.net.agent import CLIENT_NAME, user_agent
from app.net.dial import Dialler
from app.net.pace import Pace, PaceRefused
from app.net.transport import PinnedBackend, build_transport
from app.probe.classify import Verdict
from app.probe.evidence import Evidence, Refusal
from app.probe.exchange import Exchanger
from app.probe.findings import Findings
from app.probe.reach import ContactPolicy, Reach
from app.probe.reasons import status_of
from app.probe.streamable import Conversation
from app.settings import Settings, get_settings

if TYPE_CHECKING:  # imported where used: the CLI's first packet does not wait for them
    from app.probe.result import ProbeResult
    from app.probe.tls import TlsInfo

logger = logging.getLogger("mcp_sonde.probe")


class ProbeFailed(SondeError):
    """The probe itself failed (a bug or resource fault of ours, not the server's). Reason ``probe_internal_error``."""


@functools.cache
def _warn_allow_private() -> None:
    logger.warning("allow_private is ON: probes may reach http, loopback and private addresses (development only)")


def unresolved_result(url: TargetUrl, failure: ResolutionFailed, *, light: bool = False) -> ProbeResult:
    """The ``dns`` result for a URL whose host did not resolve (nothing was connected to)."""
    findings = Findings(url=url.url, checked_at=datetime.now(UTC), light=light)
    findings.fail("dns", Verdict(failure.reason))
    return findings.to_result()


def client_info() -> dict[str, str]:
    """The MCP ``clientInfo`` the probe sends (``Implementation``: name and version)."""
    return {"name": CLIENT_NAME, "version": __version__}


@dataclass(frozen=True)
class Observation:
    """A probe's result and the raw evidence behind it (see :mod:`app.probe.evidence`)."""

    result: ProbeResult
    evidence: Evidence


async def probe(
    url: str,
    *,
    light: bool = False,
    settings: Settings | None = None,
    resolver: Resolver | None = None,
    network_backend: Dialler | None = None,
    resolved: ResolvedTarget | None = None,
) -> ProbeResult:
    """Check one MCP endpoint live; see :func:`observe` (this is its result alone)."""
    observation = await observe(
        url, light=light, settings=settings, resolver=resolver, network_backend=network_backend, resolved=resolved
    )
    return observation.result


async def observe(
    url: str,
    *,
    light: bool = False,
    settings: Settings | None = None,
    resolver: Resolver | None = None,
    network_backend: Dialler | None = None,
    resolved: ResolvedTarget | None = None,
    credentials: Mapping[str, str] | None = None,
    observer: Callable[[str], None] | None = None,
    contact: ContactPolicy | None = None,
    pace: Pace | None = None,
) -> Observation:
    """Check one MCP endpoint live.

    Args:
        url: the endpoint URL (``https://host/path``).
        light: handshake only (no ``tools/list``), for badges; the session is still ended.
        settings: defaults to :func:`app.settings.get_settings`.
        resolver: defaults to :class:`app.guard.SystemResolver`.
        network_backend: the backend that opens sockets to the checked addresses (tests
            may pass another real one to observe dialling); defaults to the real network.
        resolved: the target as the caller already resolved and checked it (the service does
            this to refuse a URL before charging); the probe then dials these addresses and
            does not look the host up again.
        credentials: extra headers for the probed origin only (already validated, see
            :mod:`app.probe.credentials`); never sent to metadata URLs or other hosts.
        observer: called with each step's name as it starts (a progress display).
        contact: asked before any further URL (protected resource metadata) is contacted
            (:mod:`app.probe.reach`); the probed URL itself is the caller's to clear.
        pace: asked before the first connection to each host, and told of the first request
            (:mod:`app.net.pace`); a further host it refuses is reported, not contacted.

    Returns:
        An :class:`Observation` for every server behaviour, including timeouts and garbage.

    Raises:
        TargetRefused: the URL's form or its addresses are refused (nothing was connected to).
        PaceRefused: the probed host's start turn did not come (nothing was connected to).
        ProbeFailed: a fault of the probe itself (reason ``probe_internal_error``).
    """
    settings = settings or get_settings()
    if settings.allow_private:
        _warn_allow_private()
    target = check_url(url, allow_private=settings.allow_private)
    started = time.monotonic()
    findings = Findings(url=target.url, checked_at=datetime.now(UTC), light=light, observer=observer)
    budget = settings.light_probe_timeout_s if light else settings.probe_timeout_s
    end_reserve = min(settings.session_end_timeout_s, budget / 4)
    try:
        if resolved is not None and resolved.url != target:
            raise ValueError("resolved target does not match the URL")
        extra = dict(credentials or {})
        plan = _Plan(settings, resolver, network_backend, started + budget, end_reserve, extra, contact, pace)
        await _run(target, findings, plan, resolved)
    except (TargetRefused, PaceRefused):
        raise
    except Exception as exc:
        logger.exception("probe failed internally")
        raise ProbeFailed("probe_internal_error", "the probe failed through a fault of its own") from exc
    findings.timings.total_ms = round((time.monotonic() - started) * 1000, 1)
    return Observation(findings.to_result(), findings.evidence)


@dataclass(frozen=True)
class _Plan:
    settings: Settings
    resolver: Resolver | None
    network_backend: Dialler | None
    deadline: float
    end_reserve: float
    credentials: dict[str, str]
    contact: ContactPolicy | None = None
    pace: Pace | None = None


async def _run(target: TargetUrl, findings: Findings, plan: _Plan, resolved: ResolvedTarget | None) -> None:
    settings, deadline = plan.settings, plan.deadline
    flow_deadline = deadline - plan.end_reserve
    resolver_ = plan.resolver or SystemResolver(settings.dns_timeout_s)
    if resolved is None:
        findings.step("dns")
        dns_started = time.monotonic()
        with anyio.move_on_after(max(0.0, flow_deadline - time.monotonic())) as scope:
            try:
                resolved = await resolve_target(target, resolver=resolver_, allow_private=settings.allow_private)
            except ResolutionFailed as exc:
                findings.fail("dns", Verdict(exc.reason))
            finally:
                findings.timings.dns_ms = round((time.monotonic() - dns_started) * 1000, 1)
        if scope.cancelled_caught:
            findings.fail("dns", Verdict("dns_timeout"))
        if resolved is None:
            return
    findings.addresses = [str(a) for a in resolved.addresses]
    backend = PinnedBackend({target.host: resolved.addresses}, inner=plan.network_backend, pace=plan.pace)
    transport = build_transport(
        backend,
        ca_bundle=settings.ca_bundle,
        tls=target.scheme == "https",
        connect_timeout_s=settings.connect_timeout_s,
    )
    async with transport:
        exchanger = Exchanger(
            transport,
            user_agent=user_agent(settings),
            read_timeout_s=settings.step_timeout_s,
            cap=settings.reply_cap_bytes,
            pace=plan.pace,
        )
        conversation = Conversation(
            exchanger=exchanger,
            url=target.url,
            findings=findings,
            client_info=client_info(),
            deadline=flow_deadline,
            handshake_deadline=deadline,
            step_timeout_s=settings.step_timeout_s,
            max_pages=settings.tools_max_pages,
            refusal_timeout_s=settings.refusal_timeout_s,
            credentials=plan.credentials or None,
        )
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())) as scope:
            await conversation.run()
        await backend.settle()  # what follows (metadata, certificate, DELETE) overlaps nothing
        if scope.cancelled_caught and findings.current_step == "tools/call":
            # the refusal call never decides the status
            findings.evidence.refusal = findings.evidence.refusal or Refusal(kind="timeout", budget_limited=True)
        elif scope.cancelled_caught:
            findings.fail(findings.current_step or "probe", Verdict("probe_deadline"))
        if conversation.auth_reply is not None:
            from app.probe.auth import discover as discover_auth

            reach = Reach(backend, resolver_, allow_private=settings.allow_private, policy=plan.contact)
            findings.auth = await discover_auth(exchanger, reach, target, conversation.auth_reply, flow_deadline)
        if target.scheme == "https":
            findings.tls = await _tls_facts(exchanger, backend, target, findings, deadline)
        await conversation.end_session(min(settings.session_end_timeout_s, deadline - time.monotonic()))


async def _tls_facts(
    exchanger: Exchanger, backend: PinnedBackend, target: TargetUrl, findings: Findings, deadline: float
) -> TlsInfo | None:
    from app.probe.tls import TlsInfo, certificate_facts, read_unverified_certificate

    if exchanger.peer_certificate_der is not None:
        return certificate_facts(exchanger.peer_certificate_der, verified=True)
    if findings.verdict is None or status_of(findings.verdict.reason) != "tls":
        return None
    remaining = min(3.0, deadline - time.monotonic())
    der = await read_unverified_certificate(backend, target.host, target.port, remaining) if remaining > 0 else None
    return certificate_facts(der, verified=False) if der is not None else TlsInfo(verified=False)
