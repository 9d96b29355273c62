"""The outbox: runs kept on disk until stored, one file per process under its lock, orphans adopted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from app.checking import outbox
from tests.history.test_store import run


def test_a_run_survives_its_encoding() -> None:
    made = run(3)
    assert outbox.decode(outbox.encode(made)) == made
    bare = replace(made, tools=None, protocol_version=None, latency_ms=None)
    assert outbox.decode(outbox.encode(bare)) == bare


def test_a_run_is_kept_once_in_order_and_forgotten_when_done(tmp_path: Path) -> None:
    box = outbox.create(tmp_path)
    try:
        for n in (2, 0, 1, 0):
            assert box.put(run(n))
        assert box.size == 3
        assert [r.run_id for r in box.pending(10)] == [run(2).run_id, run(0).run_id, run(1).run_id]
        box.done(run(0).run_id)
        assert box.size == 2 and [r.run_id for r in box.pending(1)] == [run(2).run_id]
    finally:
        box.close()


def test_a_full_outbox_keeps_no_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbox, "MAX_RUNS", 2)
    box = outbox.create(tmp_path)
    try:
        assert box.put(run(0)) and box.put(run(1))
        assert not box.put(run(2)) and box.size == 2
    finally:
        box.close()


def test_a_live_processs_file_is_never_adopted(tmp_path: Path) -> None:
    box = outbox.create(tmp_path)
    try:
        box.put(run(0))
        assert list(outbox.orphans(tmp_path)) == []
        assert list(outbox.orphans(tmp_path, own=box.path)) == []
    finally:
        box.close()


def test_the_file_of_a_killed_process_is_adopted_with_every_run_it_accepted(tmp_path: Path) -> None:
    """A process that kept runs and was then SIGKILLed (no close, no flush of ours) leaves a
    file whose lock is free: every run it had put is read back by the next process."""
    script = textwrap.dedent(
        f"""
        import os, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from app.checking import outbox
        from tests.history.test_store import run
        box = outbox.create(__import__("pathlib").Path({str(tmp_path)!r}))
        for n in range(50):
            box.put(run(n))
        print("kept", flush=True)
        time.sleep(60)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "kept"
        assert list(outbox.orphans(tmp_path)) == []  # (alive: its lock is held)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    adopted = list(outbox.orphans(tmp_path))
    assert len(adopted) == 1
    file = adopted[0]
    try:
        assert file.size == 50
        assert {r.run_id for r in file.pending(100)} == {run(n).run_id for n in range(50)}
    finally:
        file.close(remove=True)
    assert list(tmp_path.iterdir()) == []
