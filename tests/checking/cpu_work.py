"""Work for the CPU pool's tests, importable by its worker processes."""

from __future__ import annotations

import os
import signal
import time


def where() -> tuple[int, int]:
    """The worker's pid and niceness."""
    return os.getpid(), os.nice(0)


def burn() -> None:
    """CPU until stopped."""
    while True:
        sum(range(10_000))


def stuck(seconds: float) -> None:
    """No CPU and no signal gets through: only the wall limit ends it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGXCPU})
    time.sleep(seconds)


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def fail() -> None:
    raise ValueError("its own error")
