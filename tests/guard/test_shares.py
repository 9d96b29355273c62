"""Fair shares of the lookup threads: the total, the paid reserve and one client's share."""

from __future__ import annotations

import threading

from app.guard.shares import LookupOwner, LookupShares, current_owner, lookups_for


def test_free_lookups_leave_the_paid_reserve() -> None:
    shares = LookupShares(total=4, paid_reserve=2, client_share=4)
    free = [LookupOwner(f"c{n}") for n in range(3)]
    assert [shares.take(owner) for owner in free] == [None, None, "resolver_busy"]
    paid = LookupOwner("p", paid=True)
    assert [shares.take(paid), shares.take(paid), shares.take(paid)] == [None, None, "resolver_busy"]
    shares.give_back(free[0])
    assert shares.take(LookupOwner("c9")) is None and shares.in_use == 4


def test_one_client_holds_at_most_its_share() -> None:
    shares = LookupShares(total=10, paid_reserve=0, client_share=2)
    greedy = LookupOwner("greedy")
    assert [shares.take(greedy) for _ in range(3)] == [None, None, "client_lookups_busy"]
    assert shares.take(LookupOwner("other")) is None
    shares.give_back(greedy)
    assert shares.take(greedy) is None


def test_a_lookup_without_an_owner_counts_against_the_total_only() -> None:
    shares = LookupShares(total=2, paid_reserve=2, client_share=1)
    assert [shares.take(None), shares.take(None), shares.take(None)] == [None, None, "resolver_busy"]


def test_threads_give_back_what_they_took() -> None:
    shares = LookupShares(total=64, paid_reserve=8, client_share=64)
    owner = LookupOwner("c")
    taken = [shares.take(owner) for _ in range(40)]
    threads = [threading.Thread(target=shares.give_back, args=(owner,)) for _ in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert shares.in_use == 0 and shares.take(owner) is None


def test_the_owner_is_set_for_the_block_only() -> None:
    owner = LookupOwner("c", paid=True)
    assert current_owner() is None
    with lookups_for(owner):
        assert current_owner() == owner
    assert current_owner() is None
