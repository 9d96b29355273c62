"""The outbox: every served check's run, kept on disk until the history has stored it.

Policy: a served, non-private check's run is written to the outbox *before* its answer is sent,
so nothing acknowledged to a client is lost when the process stops or dies (SIGTERM, SIGKILL,
a crash) or the database is away. The outbox is a SQLite file of this process's own under
``<data_dir>/outbox/`` (WAL journal, ``synchronous=NORMAL``: a commit is in the operating
system's hands when it returns, so a killed process loses none; SQLite, "Write-Ahead Logging"
and "PRAGMA synchronous"). The process holds an exclusive ``flock(2)`` on its file for as long
as it lives; a file whose lock is free belonged to a process that is gone (an orphan), and
whichever process of the same data directory finds it first adopts it: it drains it into the
history and deletes it. Each run is kept under its run id, so a run written twice (a retry) is
kept once, and the history itself stores a run id once.

A file holds at most :data:`MAX_RUNS` runs; past that a run is dropped and counted (the
database has then been away for a long time, and the disk is not allowed to fill).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import logging
import os
import secrets
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, fields
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from app.history.records import Run

logger = logging.getLogger("mcp_sonde.history")

#: Most runs one outbox file keeps.
MAX_RUNS = 200_000
_BYTES = ("result", "envelope")
_SCHEMA = "CREATE TABLE IF NOT EXISTS runs (seq INTEGER PRIMARY KEY, run_id TEXT UNIQUE NOT NULL, run TEXT NOT NULL)"


def encode(run: Run) -> str:
    """``run`` as the JSON text the outbox keeps."""
    document: dict[str, Any] = asdict(run)
    document["observed_at"] = run.observed_at.isoformat()
    for name in _BYTES:
        document[name] = base64.b64encode(getattr(run, name)).decode()
    return json.dumps(document, separators=(",", ":"))


def decode(text: str) -> Run:
    """The run :func:`encode` wrote."""
    document = json.loads(text)
    document["observed_at"] = datetime.fromisoformat(document["observed_at"])
    for name in _BYTES:
        document[name] = base64.b64decode(document[name])
    document["addresses"] = tuple(document["addresses"])
    if document["tools"] is not None:
        document["tools"] = tuple(document["tools"])
    known = {field.name for field in fields(Run)}
    return Run(**{name: value for name, value in document.items() if name in known})


class OutboxFile:
    """One outbox file, held under its lock (see the module docs)."""

    def __init__(self, path: Path, handle: TextIO) -> None:
        self.path = path
        self._handle = handle  # (the lock's file: the lock lives as long as it is open)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)
        self.size = int(self._db.execute("SELECT count(*) FROM runs").fetchone()[0])

    def put(self, run: Run) -> bool:
        """Keep ``run``; ``False`` when the file is full (the run is not kept)."""
        if self.size >= MAX_RUNS:
            return False
        added = self._db.execute("INSERT OR IGNORE INTO runs (run_id, run) VALUES (?, ?)", (run.run_id, encode(run)))
        self.size += added.rowcount
        return True

    def pending(self, limit: int) -> list[Run]:
        """Up to ``limit`` kept runs, oldest first."""
        rows = self._db.execute("SELECT run FROM runs ORDER BY seq LIMIT ?", (limit,)).fetchall()
        runs: list[Run] = []
        for (text,) in rows:
            try:
                runs.append(decode(text))
            except (ValueError, KeyError, TypeError):  # (a row no version of ours wrote: dropped)
                logger.error("an outbox row is not a run; dropped")
                self._db.execute("DELETE FROM runs WHERE run = ?", (text,))
                self.size -= 1
        return runs

    def done(self, run_id: str) -> None:
        """Forget ``run_id`` (the history has it, or it was given up)."""
        self.size -= self._db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,)).rowcount

    def close(self, *, remove: bool = False) -> None:
        """Close the file (and, with ``remove``, delete it: an adopted orphan drained), then free its lock."""
        self._db.close()
        if remove:
            for name in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"), self.path.with_suffix(".lock")):
                with contextlib.suppress(FileNotFoundError):
                    name.unlink()
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()


def _locked(path: Path) -> TextIO | None:
    handle = path.with_suffix(".lock").open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def create(directory: Path) -> OutboxFile:
    """A new outbox file of this process's own in ``directory``.

    Raises:
        OSError: the directory cannot be made or written.
    """
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / f"{os.getpid()}-{secrets.token_hex(4)}.sqlite3"
    handle = _locked(path)
    assert handle is not None  # (a name no other process has)
    return OutboxFile(path, handle)


def orphans(directory: Path, own: Path | None = None) -> Iterator[OutboxFile]:
    """The outbox files in ``directory`` whose process is gone, each now held by this process."""
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.sqlite3")):
        if path == own:
            continue
        handle = _locked(path)
        if handle is None:
            continue  # (its process is alive)
        if not path.exists():  # (adopted and removed by another process meanwhile)
            handle.close()
            with contextlib.suppress(FileNotFoundError):
                path.with_suffix(".lock").unlink()
            continue
        try:
            adopted = OutboxFile(path, handle)
        except sqlite3.DatabaseError:
            logger.error("outbox file %s cannot be read; left as it is", path.name)
            handle.close()
            continue
        yield adopted
