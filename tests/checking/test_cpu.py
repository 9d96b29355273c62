"""The CPU pool: work on request input runs in other processes, each call within its CPU time."""

from __future__ import annotations

import os
import resource

import pytest

from app.checking.cpu import CpuLimitExceeded, CpuPool
from tests.checking import cpu_work

pytestmark = pytest.mark.anyio


async def test_a_call_runs_in_a_lower_priority_process_of_its_own() -> None:
    pool = CpuPool(1, cpu_s=5)
    try:
        pid, niceness = await pool.run(cpu_work.where)
        again, _ = await pool.run(cpu_work.where)
    finally:
        pool.close()
    assert pid != os.getpid() and again == pid  # (the worker is kept between calls)
    assert niceness >= os.nice(0) + 10


async def test_a_call_that_burns_cpu_is_stopped_at_its_limit_and_the_worker_goes_on() -> None:
    pool = CpuPool(1, cpu_s=1)
    try:
        with pytest.raises(CpuLimitExceeded):
            await pool.run(cpu_work.burn)
        pid, _ = await pool.run(cpu_work.where)
        with pytest.raises(CpuLimitExceeded):  # the limit counts from each call's start
            await pool.run(cpu_work.burn)
        same, _ = await pool.run(cpu_work.where)
    finally:
        pool.close()
    assert same == pid  # stopped by its own signal handler: the process lived
    assert resource.getrlimit(resource.RLIMIT_CPU)[0] == resource.RLIM_INFINITY  # ours untouched


async def test_a_call_no_signal_stops_is_given_up_at_the_wall_limit_and_a_new_worker_made() -> None:
    pool = CpuPool(1, cpu_s=1, wall_slack_s=1)
    try:
        before, _ = await pool.run(cpu_work.where)
        with pytest.raises(CpuLimitExceeded):
            await pool.run(cpu_work.stuck, 120)
        after, _ = await pool.run(cpu_work.where)
    finally:
        pool.close()
    assert after != before


async def test_a_worker_that_dies_is_replaced() -> None:
    pool = CpuPool(1, cpu_s=5)
    try:
        with pytest.raises(CpuLimitExceeded):
            await pool.run(cpu_work.die)
        pid, _ = await pool.run(cpu_work.where)
    finally:
        pool.close()
    assert pid != os.getpid()


async def test_the_call_s_own_error_is_raised_as_it_is() -> None:
    pool = CpuPool(1, cpu_s=5)
    try:
        with pytest.raises(ValueError, match="its own error"):
            await pool.run(cpu_work.fail)
    finally:
        pool.close()
