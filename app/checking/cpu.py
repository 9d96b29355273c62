"""CPU-heavy work on request input, in worker processes with a CPU-time limit per call.

A comparison of two hostile tool lists is seconds of pure-Python CPU. On a thread it still
holds the interpreter lock, so every other request of the process waits behind it (two clients
sending 1 MiB of costly schemas raised ``/healthz``'s p95 twentyfold). Here it runs in another
process, which cannot hold the event loop:

- **Processes.** A :class:`concurrent.futures.ProcessPoolExecutor` of ``workers`` processes,
  started with ``forkserver`` (never ``fork``: the service has threads and an event loop), when
  the first call comes, so start-up does not wait for them. They run at a lower priority
  (``nice`` +10): with every core busy comparing, the service's own process is still scheduled
  first and answers on time.
- **CPU-time limit.** Each call sets the worker's soft ``RLIMIT_CPU`` (POSIX ``setrlimit``) to
  its CPU time so far plus ``cpu_s``; past it the kernel sends ``SIGXCPU``, whose handler raises
  :class:`CpuLimitExceeded` inside the call, and the limit is lifted again. The hard limit is
  left alone (an unprivileged process could never raise it back).
- **Wall limit.** A call whose answer has not come ``cpu_s`` + :data:`WALL_SLACK_S` after it
  was handed over (a worker stuck in C code that no signal interrupts, or starved) is given up:
  the pool's processes are killed and a new pool is made for the next call.

The function and its arguments cross to the worker by pickle, so the function must be a
module-level one, and what it returns must pickle.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import resource
import signal
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import FrameType
from typing import Any, TypeVar

from app.errors import SondeError

T = TypeVar("T")
#: How much longer than its CPU-time limit a call may take in wall time before it is given up.
WALL_SLACK_S = 10.0
_NICENESS = 10


class CpuLimitExceeded(SondeError):
    """The call used its CPU time, or its wall time, and was stopped. Reason ``cpu_limit_exceeded``."""

    def __init__(self) -> None:
        super().__init__("cpu_limit_exceeded", "the work used its CPU time and was stopped")

    def __reduce__(self) -> tuple[type[CpuLimitExceeded], tuple[()]]:
        return (CpuLimitExceeded, ())


def _on_sigxcpu(_signum: int, _frame: FrameType | None) -> None:
    raise CpuLimitExceeded


def _start_worker() -> None:
    os.nice(_NICENESS)
    signal.signal(signal.SIGXCPU, _on_sigxcpu)


def _limited(function: Callable[..., T], cpu_s: float, args: tuple[Any, ...]) -> T:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(usage.ru_utime + usage.ru_stime + cpu_s)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    try:
        return function(*args)
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))


class CpuPool:
    """Worker processes for CPU-heavy work (see the module docs).

    Args:
        workers: processes at most (calls beyond them queue in the pool).
        cpu_s: the CPU time one call may use.
        wall_slack_s: how much longer than ``cpu_s`` a call may take in wall time.
    """

    def __init__(self, workers: int, cpu_s: float, wall_slack_s: float = WALL_SLACK_S) -> None:
        self.workers = workers
        self.cpu_s = cpu_s
        self.wall_slack_s = wall_slack_s
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("forkserver")
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker)
        return self._pool

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker, within the CPU-time limit.

        Raises:
            CpuLimitExceeded: it used its CPU or wall time (or its worker died).
            Exception: whatever ``function`` raised.
        """
        pool = self._executor()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(pool, _limited, function, self.cpu_s, args)
        try:
            return await asyncio.wait_for(future, self.cpu_s + self.wall_slack_s)
        except TimeoutError:
            self._discard(pool)
            raise CpuLimitExceeded from None
        except BrokenProcessPool:
            self._discard(pool)
            raise CpuLimitExceeded from None

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        """Kill ``pool``'s processes (a call in them is given up) and make a new pool next time."""
        if self._pool is pool:
            self._pool = None
        for process in list(getattr(pool, "_processes", {}).values()):
            process.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers (a call still running is given up)."""
        if self._pool is not None:
            self._discard(self._pool)
