"""When a failed webhook delivery is tried again (Standard Webhooks, "retry schedule").

Policy: after the n-th failed attempt the next comes ``RETRY_DELAYS_S[n-1]`` later (5 s, 5 min,
30 min, 2 h, 5 h, 10 h, and 10 h again after that: the spec's own example), for as long as that
falls within ``webhook_retry_window_s`` (24 h) of the first attempt; a retry that would fall
past it is made at the window's end instead, once; after an attempt at or past the window's end
the delivery has failed. Only a 2xx answer delivers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

#: Waits before each retry of a failed delivery, the last repeating, seconds (Standard Webhooks'
#: example schedule).
RETRY_DELAYS_S: tuple[float, ...] = (5.0, 300.0, 1800.0, 7200.0, 18_000.0, 36_000.0)


def next_attempt(
    first: datetime, attempted: datetime, attempt: int, delays: Sequence[float], window_s: float
) -> datetime | None:
    """When to try again after the failed attempt number ``attempt`` (from 1) made at
    ``attempted``, the first having been made at ``first``; ``None``: the delivery has failed."""
    deadline = first + timedelta(seconds=window_s)
    if attempted >= deadline:
        return None
    following = attempted + timedelta(seconds=delays[min(attempt, len(delays)) - 1])
    return min(following, deadline)


def delivered(status: int | None) -> bool:
    """Whether a receiver's answer delivers (any 2xx)."""
    return status is not None and 200 <= status < 300
