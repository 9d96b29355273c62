"""The system resolver (:mod:`app.guard.resolver`): lookup threads on the fair shares."""

from __future__ import annotations

import pytest

from app.guard.shares import LookupShares


@pytest.mark.anyio
async def test_a_lookup_cancelled_before_its_thread_starts_gives_its_share_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Policy (app/guard/shares.py): a thread is counted "from the moment it starts until it
    ends". ``SystemResolver.resolve`` takes the share *before* ``anyio.to_thread.run_sync`` and
    gives it back only in the finally of the thread function. If the caller is cancelled at
    run_sync's first checkpoint (or before the worker dequeues the job: anyio then skips the
    function), the function never runs and the share is never given back: the slot leaks for
    the life of the process. In the service the probe's metadata lookup runs inside
    ``anyio.fail_after(remaining)`` (app/probe/auth.py), so a deadline that fires in that window
    leaks one slot per occurrence; 32 leaks and every check is 503 resolver_busy for good."""
    import anyio

    import app.guard.resolver as resolver_module
    from app.guard.shares import LookupOwner, lookups_for

    shares = LookupShares(total=2, paid_reserve=0, client_share=2)
    monkeypatch.setattr(resolver_module, "_shares", shares)
    resolver = resolver_module.SystemResolver(1.0)
    with anyio.move_on_after(0), lookups_for(LookupOwner("203.0.113.7")):  # a deadline already reached
        await resolver.resolve("localhost", 80)
    await anyio.sleep(0.3)  # any thread would have ended by now
    assert shares.in_use == 0, "the cancelled lookup never ran, yet its slot is still taken"
