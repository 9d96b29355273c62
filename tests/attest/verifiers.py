"""Run the two verifiers of signed results the way people run them, and read their verdicts.

- :func:`python_cli`: ``mcp-sonde verify`` (:func:`app.cli.main`, in this process);
- :func:`node_cli`: ``node tools/verify-attestation.mjs``, the standalone verifier.

Both get the input and the key document as files, and ``--json`` unless told otherwise. An
:class:`Outcome` holds the exit code, the reason (``None`` when verified) and what was printed;
reading it checks that the printed verdict and the exit code agree with each other, and with
:data:`REASONS`, the reasons and codes both verifiers must give.

:func:`measured` runs either verifier as a process of its own on paths as given (``/dev/zero``,
standard input), and says how long it ran and the most memory it held.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = ROOT / "tools" / "verify-attestation.mjs"

#: The reasons both verifiers give and their exit codes, in the order the checks run
#: (``app.attest.verify.reasons.FAILURES`` must be exactly these).
REASONS: dict[str, int] = {
    "envelope_unreadable": 30,
    "payload_type_unexpected": 31,
    "keys_unavailable": 32,
    "key_unknown": 33,
    "signature_invalid": 34,
    "key_revoked": 35,
    "id_mismatch": 42,
    "payload_duplicate_key": 36,
    "payload_not_canonical": 37,
    "statement_invalid": 38,
    "predicate_invalid": 39,
    "key_not_valid_at_observed_at": 40,
    "result_mismatch": 41,
}
#: The entry ``id_mismatch`` must have in ``FAILURES``.
ID_MISMATCH = (42, "The attestation id beside the envelope is not the SHA-256 of its payload.")


def node() -> str:
    """The ``node`` executable; skips the test without one (fails instead under ``CI=true``)."""
    found = shutil.which("node")
    if found is None:
        message = "node is not installed"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


@dataclass(frozen=True)
class Outcome:
    """What a verifier said: exit code, reason (``None``: verified), standard output and error."""

    code: int
    reason: str | None
    stdout: str
    stderr: str


def _outcome(code: int, stdout: str, stderr: str, as_json: bool) -> Outcome:
    if code == 0:
        if as_json:
            assert json.loads(stdout)["verified"] is True
        else:
            assert stdout.startswith("VERIFIED: signed by key ")
        return Outcome(code, None, stdout, stderr)
    assert stderr.startswith("NOT VERIFIED ("), stderr
    reason = stderr[len("NOT VERIFIED (") :].split(")", 1)[0]
    assert reason in REASONS and REASONS[reason] == code, (reason, code)
    if as_json:
        verdict = json.loads(stdout)
        assert (verdict["verified"], verdict["reason"]) == (False, reason)
    return Outcome(code, reason, stdout, stderr)


def _files(folder: Path, raw: bytes, keys: bytes) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input.json").write_bytes(raw)
    (folder / "keys.json").write_bytes(keys)
    return folder / "input.json", folder / "keys.json"


def python_cli(folder: Path, raw: bytes, keys: bytes, as_json: bool = True) -> Outcome:
    """``mcp-sonde verify INPUT --keys KEYS [--json]`` on ``raw`` and ``keys`` (files under ``folder``)."""
    envelope, document = _files(folder / "python", raw, keys)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", str(envelope), "--keys", str(document), *(["--json"] if as_json else [])])
    return _outcome(code, out.getvalue(), err.getvalue(), as_json)


def node_cli(folder: Path, raw: bytes, keys: bytes, as_json: bool = True) -> Outcome:
    """``node tools/verify-attestation.mjs INPUT --keys KEYS [--json]`` on ``raw`` and ``keys``."""
    envelope, document = _files(folder / "node", raw, keys)
    command = [node(), str(STANDALONE), str(envelope), "--keys", str(document), *(["--json"] if as_json else [])]
    done = subprocess.run(command, capture_output=True, timeout=30, check=False)
    return _outcome(done.returncode, done.stdout.decode(), done.stderr.decode(), as_json)


@dataclass(frozen=True)
class Measured:
    """A verifier run as a process: its :class:`Outcome`, the seconds it took, its peak resident memory (bytes)."""

    outcome: Outcome
    seconds: float
    peak_bytes: int


#: ``mcp-sonde verify`` as a process of its own (:func:`python_cli` runs it in this one).
_PYTHON = [sys.executable, "-c", "import sys; from app.cli import main; sys.exit(main(sys.argv[1:]))", "verify"]


def measured(
    which: str, envelope: str, keys: str, *, stdin: str | None = None, timeout: float = 30, memory: int = 1 << 30
) -> Measured:
    """``which`` (``"python"`` or ``"node"``) on the paths ``envelope`` and ``keys`` with ``--json``, its
    standard input read from the file ``stdin``. A run past ``timeout`` seconds or ``memory`` bytes
    resident is killed and fails the test (an unbounded read of ``/dev/zero`` grows until the
    machine runs out)."""
    verifier = _PYTHON if which == "python" else [node(), str(STANDALONE)]
    command = [*verifier, envelope, "--keys", keys, "--json"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    with contextlib.ExitStack() as stack:
        source = stack.enter_context(open(stdin, "rb")) if stdin else subprocess.DEVNULL
        stdout, stderr = (stack.enter_context(tempfile.TemporaryFile()) for _ in range(2))
        started = time.monotonic()
        process = subprocess.Popen(command, stdin=source, stdout=stdout, stderr=stderr, cwd=ROOT, env=env)
        peak = 0
        while True:
            pid, status = os.waitpid(process.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _peak(process.pid))
            if time.monotonic() - started > timeout or peak > memory:
                process.kill()
                os.wait4(process.pid, 0)
                process.returncode = -9
                pytest.fail(f"{which} ran {time.monotonic() - started:.1f} s and held {peak >> 20} MiB: killed")
            time.sleep(0.01)
        seconds = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        outcome = _outcome(process.returncode, stdout.read().decode(), stderr.read().decode(), True)
    return Measured(outcome, seconds, peak)


def _peak(pid: int) -> int:
    """The peak resident memory of process ``pid`` since it started its program, in bytes (0 once it
    is gone): its ``VmHWM``, read every 10 ms, so that only a peak in its last 10 ms can be missed.
    (``ru_maxrss`` would not do: a child spawned by this process starts with this process's peak.)"""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
