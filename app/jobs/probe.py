"""The handler of probe jobs: one full signed check of ``job.url``, as a free check is served.

Order (as :mod:`app.checking.flow`, without payment): a source that may withdraw its jobs
(:class:`~app.queue.model.Gated`: a monitor's run given back or cancelled) is asked first, and
a withdrawn job contacts nothing; then the target guard (a refused URL
or address gives ``Outcome(status="refused", reason=<the guard's reason>)`` and nothing is
contacted); the opt-out list (:mod:`app.optout.known`: as this process read it within the last
seconds), so an item added while the job waited still stops it (``skipped`` / ``opted_out``; a
list that cannot be read, with no recent copy, leaves the word to the source, which read it when
it handed the job out: a job due longer ago than a copy may stand is skipped,
``optout_unavailable``); the host's lookup; the probe, paced per
host through the store's slots across all workers and served checks (at most
``host_concurrency`` at once, one new probe per ``host_start_interval_s``;
:mod:`app.checking.runner`; the single-flight lock and the slots are held under the job's id, so
a redelivery after a crash takes them over at once). A host whose turn does not come within
``job_turn_wait_s`` gets the job back on the queue (never dropped). A further URL the probe
would contact (the protected resource metadata a 401 names) is held to the same opt-out list
(:mod:`app.jobs.contact`) and paced as every host a probe contacts (:mod:`app.checking.turns`). The result is signed
(:func:`app.checking.flow.signed`), its envelope kept for ``GET /v1/attestations/{id}``,
and its run written to the history with ``run_id = job.id`` (:mod:`app.jobs.runs`: stored once,
whatever the deliveries). Then the job's source hears the :class:`~app.queue.model.Outcome`,
with the TLS certificate's ``not_after`` when the probe read one (:mod:`app.probe.tls`); that
report waits for a database that does not answer up to :data:`app.jobs.runs.REPORT_WAIT_S`.
Credentials are never sent: a job checks what anyone can see.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import NoReturn

from app.checking.flow import history_run, signed
from app.checking.runner import CheckMode, TargetBusy
from app.errors import TargetRefused
from app.guard import ResolutionFailed, ResolvedTarget, ResolverBusy, check_url, resolve_target
from app.guard.shares import LookupOwner, lookups_for
from app.jobs.contact import contact_policy
from app.jobs.context import JobContext
from app.jobs.runs import REPORT_WAIT_S, keep, patiently
from app.optout.known import STALE_S, ListUnknown
from app.probe import ProbeResult
from app.queue.dispatch import Requeued
from app.queue.model import Gated, Job, Outcome
from app.suite.full import unresolved_check
from app.suite.model import CheckResult

logger = logging.getLogger("mcp_sonde.jobs")
#: The lookup share and pacing client of jobs (each job its own client, so a host's
#: ``host_concurrency`` turns, not ``host_client_concurrency``, bound its jobs).
CLIENT = "job"


async def probe(ctx: JobContext, job: Job) -> None:
    """Run the probe job and tell its source (see the module docs).

    Raises:
        Requeued: the host's turn, or a lookup thread, did not come in time; the job is back on the queue.
    """
    source = ctx.registry.source(job.source)
    if isinstance(source, Gated) and not await patiently(ctx, f"job {job.id}", lambda: source.begin(job)):
        logger.info("probe job %s was withdrawn by its source (given back or cancelled): dropped", job.id)
        return
    outcome = await outcome_of(ctx, job)
    if source is None:
        logger.warning("probe job %s names no registered source (%r)", job.id, job.source[:40])
        return
    await patiently(ctx, f"the outcome of job {job.id}", lambda: source.finished(outcome), REPORT_WAIT_S)


async def outcome_of(ctx: JobContext, job: Job) -> Outcome:
    """What the check of ``job.url`` found, its run kept (see the module docs)."""
    settings = ctx.settings
    try:
        target = check_url(job.url, allow_private=settings.allow_private)
    except TargetRefused as exc:
        return Outcome(job, "refused", exc.reason, stored=False)
    try:
        if await ctx.optouts.covers(job.url):
            return Outcome(job, "skipped", "opted_out", stored=False)
    except ListUnknown:
        # The list cannot be read and this worker holds no recent copy: a job its source handed
        # out (having read the list) within the copy's lifetime goes on; an older one is skipped.
        if datetime.now(UTC) - job.due_at > timedelta(seconds=STALE_S):
            logger.warning("probe job %s: the opt-out list could not be read; skipped", job.id)
            return Outcome(job, "skipped", "optout_unavailable", stored=False)
    ctx.attestor.ready()  # (no key: the job fails before anything is contacted)
    owner = LookupOwner(f"{CLIENT}:{job.id}", paid=False)
    try:
        with lookups_for(owner):
            resolved: ResolvedTarget | ResolutionFailed = await resolve_target(
                target, resolver=ctx.resolver, allow_private=settings.allow_private
            )
    except TargetRefused as exc:
        return Outcome(job, "refused", exc.reason, stored=False)
    except ResolutionFailed as failure:
        resolved = failure
    except ResolverBusy:
        await _requeue(ctx, job)
    result: ProbeResult
    if isinstance(resolved, ResolutionFailed):
        result = unresolved_check(target, resolved, None)
        ctx.metrics.probes.labels(status=result.status).inc()
    else:
        try:
            mode = CheckMode(contact=contact_policy(ctx.optouts))
            result = await ctx.checks.check(resolved, mode, client=owner.client, paid=False, flight_token=job.id)
        except TargetBusy:
            await _requeue(ctx, job)
    _payload, attestation = await signed(ctx.services, result, include_tools=False)
    await ctx.services.attestations.put(attestation)
    run = history_run(result, attestation, run_id=job.id)
    stored = await keep(ctx, run) if run is not None else False
    assert isinstance(result, CheckResult)  # (signed() refuses anything else)
    result = result.model_copy(update={"attestation_id": attestation.id})
    not_after = result.tls.not_after if result.tls is not None else None
    return Outcome(job, result.status, result.reason, stored, result, not_after)


async def _requeue(ctx: JobContext, job: Job) -> NoReturn:
    await ctx.enqueue(job)
    raise Requeued(f"job {job.id}: its host's turn did not come in time; back on the queue")
