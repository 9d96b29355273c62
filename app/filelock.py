"""An exclusive lock between processes on one machine: ``flock(2)`` on a lock file.

Used where several processes may start at once on one data directory (``--workers``, replicas
sharing a volume): the first start that makes the signing key or the embedded database's
schema holds the lock; the others wait, then find the work done. The lock is released when the
block ends or the process dies.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``lock_file`` (created with its directory if missing).

    Raises:
        OSError: the directory or the file cannot be made or opened.
    """
    lock_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
