"""The baseline a check is compared with, found before the check runs.

Policy:

- A request that names a baseline gets exactly that one: a stored run (``run_id``, of any
  server: a reference implementation is a fair baseline), the newest stored list with a
  ``schema_fingerprint``, or ``tools`` from the body. A stored one that does not exist is
  ``404 baseline_not_found`` and a database that does not answer ``503 history_unavailable``,
  both before any payment is taken or free check drawn: a paid check never silently loses
  the comparison it was asked for.
- A request that names none is compared with the server's approved baseline
  (``PUT /v1/servers/{server_id}/baseline``), if it has one. That lookup is bounded
  (:data:`APPROVED_LOOKUP_S`) and skipped while the history database is known not to answer;
  when it cannot be made, the check is served all the same, its two baseline checks
  ``unverified`` with ``baseline_unavailable`` (a database that is down never fails a check).
- The comparison itself is :func:`app.baselines.compare.compared`, on a worker thread (a diff of
  two large lists walks every schema).
"""

from __future__ import annotations

import anyio

from app.baselines.compare import Reference, compared, from_request, needs_diff
from app.baselines.request import BaselineRequest
from app.checking.errors import ApiError
from app.checking.services import Services
from app.history.records import Toolset, server_id_of
from app.probe.result import ProbeResult
from app.suite.model import CheckResult

#: Longest wait for the approved baseline of a check that named none, seconds.
APPROVED_LOOKUP_S = 1.0
#: Longest wait for a named stored baseline, seconds.
NAMED_LOOKUP_S = 5.0


class Baseline:
    """The baseline found for one check: a reference, or none, or none because it could not be read."""

    __slots__ = ("reference", "unavailable")

    def __init__(self, reference: Reference | None, unavailable: bool = False) -> None:
        self.reference = reference
        self.unavailable = unavailable

    async def apply(self, result: ProbeResult) -> ProbeResult:
        """``result`` compared with this baseline (a light result is returned as it is)."""
        if not isinstance(result, CheckResult) or (self.reference is None and not self.unavailable):
            return result
        if needs_diff(result) and self.reference is not None:
            return await anyio.to_thread.run_sync(lambda: compared(result, self.reference))
        return compared(result, self.reference, unavailable=self.unavailable)


def _stored(toolset: Toolset, source: str) -> Reference:
    return Reference(
        "run" if source == "run" else "fingerprint",
        toolset.definitions,
        run_id=toolset.run_id,
        schema_fingerprint=toolset.schema_fingerprint,
        toolset_fingerprint=toolset.toolset_fingerprint,
    )


async def find(services: Services, url: str, asked: BaselineRequest | None) -> Baseline:
    """The baseline of a check of ``url`` (see the module docs).

    Raises:
        ApiError: 404 ``baseline_not_found``, 503 ``history_unavailable`` (a named stored baseline).
    """
    if asked is not None and asked.tools is not None:
        return Baseline(from_request(asked.entries()))
    history = services.recorder.history
    if asked is not None:
        try:
            with anyio.fail_after(NAMED_LOOKUP_S):
                if asked.run_id is not None:
                    toolset = await history.toolset(run_id=asked.run_id)
                else:
                    toolset = await history.toolset(schema_fingerprint=asked.schema_fingerprint)
        except Exception as exc:  # any driver or network fault, or the bound: the database does not answer
            raise ApiError(
                "history_unavailable", f"the baseline cannot be read now ({type(exc).__name__}); nothing was charged"
            ) from exc
        if toolset is None:
            named = "run" if asked.run_id is not None else "schema fingerprint"
            raise ApiError("baseline_not_found", f"no stored tool list for this {named}; nothing was charged")
        return Baseline(_stored(toolset, "run" if asked.run_id is not None else "fingerprint"))
    if not services.recorder.answering:
        return Baseline(None, unavailable=True)
    try:
        with anyio.fail_after(APPROVED_LOOKUP_S):
            approved = await services.baselines.baseline(server_id_of(url))
    except Exception:  # any driver or network fault, or the bound: served without the comparison
        return Baseline(None, unavailable=True)
    if approved is None:
        return Baseline(None)
    toolset = approved.toolset
    reference = Reference(
        "approved", toolset.definitions, run_id=toolset.run_id, schema_fingerprint=toolset.schema_fingerprint,
        toolset_fingerprint=toolset.toolset_fingerprint, approved_at=approved.approved_at,
        approved_by="host_proof" if approved.approved_by == "host_proof" else "payment",
    )  # fmt: skip
    return Baseline(reference)
