"""When a swept endpoint is probed next: about once a day, never twice in 6 hours, less and
less often while it keeps failing, down to once a week.

The policy (:class:`SweepPolicy`, from the settings ``sweep_interval_s`` = 24 h,
``sweep_min_interval_s`` = 6 h, ``sweep_max_interval_s`` = 7 days, a jitter of 0.1):

- A new endpoint's first probe is spread over the first interval by a hash of its
  ``server_id`` (:func:`first_due`): 62,000 endpoints imported at once come due at about 43 a
  minute, not all at the first tick.
- After a probe that reached the server (any status but those below) the next is one interval
  on, moved by up to ``jitter`` of it either way (a hash of the job id, so the same outcome
  heard twice gives the same time): the sweep stays spread instead of bunching up.
- After a probe that found it down (the history's ``down`` runs: ``dns``, ``unreachable``,
  ``timeout``, ``tls``, ``server_error``) or that the target guard refused, the wait doubles
  with each consecutive failure (1 day, 2, 4, then the 7-day cap): a host that is gone costs
  us, and whoever inherits its name, one probe a week.
- A probe that only our own limits or a 429 stopped (``left_out``) neither counts as a failure
  nor resets the count, and the next comes after the least interval.
- Never sooner than ``min_interval_s`` after the last probe was handed out, whatever the
  jitter: the claim itself moves the due time that far (:mod:`app.sweeps.source`), and this
  function never returns less.
- An opted-out endpoint (``skipped``) is not scheduled again until the cap, and is filtered
  out when it comes due anyway (:mod:`app.optout`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.history.uptime import uptime_of
from app.settings import Settings


@dataclass(frozen=True)
class SweepPolicy:
    """The sweep's intervals, seconds, and the jitter fraction (see the module docs)."""

    interval_s: float = 86_400.0
    min_interval_s: float = 21_600.0
    max_interval_s: float = 604_800.0
    jitter: float = 0.1

    @classmethod
    def of(cls, settings: Settings) -> SweepPolicy:
        """The policy the settings give."""
        return cls(settings.sweep_interval_s, settings.sweep_min_interval_s, settings.sweep_max_interval_s)


def _unit(key: str) -> float:
    """A number in [0, 1) fixed by ``key``."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64


def first_due(now: datetime, key: str, interval_s: float) -> datetime:
    """A new endpoint's first due time: spread over one interval by ``key``."""
    return now + timedelta(seconds=_unit(key) * interval_s)


def failing(status: str, reason: str) -> bool:
    """The probe found the endpoint down, or the guard refused it."""
    return status == "refused" or uptime_of(status, reason) == "down"


def next_failures(failures: int, status: str, reason: str) -> int:
    """Consecutive failures after this outcome."""
    if failing(status, reason):
        return failures + 1
    if status == "skipped" or uptime_of(status, reason) == "left_out":
        return failures
    return 0


def next_due(now: datetime, status: str, reason: str, failures: int, key: str, policy: SweepPolicy) -> datetime:
    """When the endpoint is next due after an outcome heard at ``now``.

    Args:
        now: when the outcome was heard (about when the probe was handed out).
        status, reason: the outcome's status class and reason key.
        failures: consecutive failures *including* this outcome (:func:`next_failures`).
        key: what fixes the jitter (the job id).
        policy: the intervals.
    """
    if status == "skipped":  # (opted out: not before the cap; nothing known, e.g. the list unread: soon)
        wait = policy.max_interval_s if reason == "opted_out" else policy.min_interval_s
    elif failing(status, reason):
        wait = min(policy.interval_s * 2 ** min(max(failures - 1, 0), 30), policy.max_interval_s)
    elif uptime_of(status, reason) == "left_out":
        wait = policy.min_interval_s
    else:
        wait = policy.interval_s * (1 + policy.jitter * (2 * _unit(key) - 1))
    return now + timedelta(seconds=min(max(wait, policy.min_interval_s), policy.max_interval_s))
