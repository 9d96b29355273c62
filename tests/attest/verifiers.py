"""Run the two verifiers of signed results the way people run them, and read their verdicts.

- :func:`python_cli`: ``mcp-sonde verify`` (:func:`app.cli.main`, in this process);
- :func:`node_cli`: ``node tools/verify-attestation.mjs``, the standalone verifier.

Both get the input and the key document as files, and ``--json`` unless told otherwise. An
:class:`Outcome` holds the exit code, the reason (``None`` when verified) and what was printed;
reading it checks that the printed verdict and the exit code agree with each other.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.attest.verify.reasons import FAILURES
from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
STANDALONE = ROOT / "tools" / "verify-attestation.mjs"


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
    assert reason in FAILURES and FAILURES[reason][0] == code, (reason, code)
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
