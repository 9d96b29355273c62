"""``mcp-sonde serve`` as a real child process on loopback, its output kept for the test to read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from tests.servers.ports import free_port, wait_ready

#: Run before the command line in the child (for example an import hook); then ``main(argv)``.
_LAUNCH = "import sys\n{preamble}\nfrom app.cli import main\nraise SystemExit(main(sys.argv[1:]))\n"


@dataclass
class Served:
    """A stopped child's exit code and output (``stdout``/``stderr`` are filled in when it ends)."""

    port: int
    process: subprocess.Popen[bytes]
    stdout: bytes = b""
    stderr: bytes = b""
    returncode: int | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def records(self) -> list[dict[str, Any]]:
        """Every stderr line, each parsed as the JSON object it must be."""
        return [json.loads(line) for line in self.stderr.decode().splitlines() if line.strip()]

    def access_lines(self) -> list[dict[str, Any]]:
        """Every stdout line, each parsed as JSON."""
        return [json.loads(line) for line in self.stdout.decode().splitlines() if line.strip()]


def launch(
    *args: str,
    env: Mapping[str, str] | None = None,
    preamble: str = "",
    output: tuple[IO[bytes], IO[bytes]] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``mcp-sonde`` with ``args``, stdout and stderr piped (or written to the files of
    ``output``); the environment has no Redis unless given."""
    child_env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MCP_SONDE_REDIS_URL")}
    child_env.update(env or {})
    code = _LAUNCH.format(preamble=preamble)
    stdout, stderr = output or (subprocess.PIPE, subprocess.PIPE)
    return subprocess.Popen([sys.executable, "-c", code, *args], env=child_env, stdout=stdout, stderr=stderr)


@contextmanager
def sonde(
    *args: str, env: Mapping[str, str] | None = None, preamble: str = "", port: int | None = None
) -> Iterator[Served]:
    """``with sonde("--allow-private") as served:`` the service on ``served.port`` until the block ends;
    then SIGTERM, and ``served`` holds the exit code and everything written.

    The child writes to files, not pipes: a long drill writes more than a pipe holds, and its
    output is read only at the end."""
    port = port or free_port()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = launch("serve", "--port", str(port), *args, env=env, preamble=preamble, output=(out, err))
        served = Served(port, process)
        try:
            wait_ready(port, process)
            yield served
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            served.returncode = process.returncode
            for file, name in ((out, "stdout"), (err, "stderr")):
                file.seek(0)
                setattr(served, name, file.read())


def finish(process: subprocess.Popen[bytes], timeout: float = 60) -> tuple[int, bytes, bytes]:
    """Wait for a child that should end by itself: ``(exit code, stdout, stderr)``."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err
