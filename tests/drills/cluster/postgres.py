"""A PostgreSQL cluster of the drill's own (Debian's PostgreSQL 15 binaries), so it can really be
stopped and started: ``initdb`` and ``pg_ctl`` run as the ``postgres`` user, on a free loopback
port, in a temp dir that user owns (its Unix socket there too)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

BIN = Path("/usr/lib/postgresql/15/bin")


def as_postgres(*argv: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess[bytes]:
    """Run ``argv`` as the ``postgres`` user."""
    return subprocess.run(
        ["runuser", "-u", "postgres", "--", *argv], capture_output=True, timeout=timeout_s, check=False
    )


class OwnPostgres:
    """The cluster: :meth:`init` once, then :meth:`start` and :meth:`stop` as often as the drill likes."""

    def __init__(self, port: int) -> None:
        if not (BIN / "pg_ctl").exists():
            raise RuntimeError(f"PostgreSQL is not installed ({BIN}/pg_ctl)")
        self.port = port
        self.directory = Path(tempfile.mkdtemp(prefix="cluster-drill-pg-"))
        user = pwd.getpwnam("postgres")
        os.chown(self.directory, user.pw_uid, user.pw_gid)
        self.data = self.directory / "data"
        self.log = self.directory / "postgres.log"
        self.running = False

    @property
    def url(self) -> str:
        """The history database's SQLAlchemy URL."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _check(self, done: subprocess.CompletedProcess[bytes], what: str) -> None:
        if done.returncode != 0:
            raise RuntimeError(f"{what} failed ({done.returncode}): {(done.stdout + done.stderr).decode()[-2000:]}")

    def init(self) -> None:
        done = as_postgres(str(BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._check(done, "initdb")

    def start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.directory} "
            "-c max_connections=300 -c fsync=on"
        )
        done = as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.log), "-w",
                           "-t", "120", "start")  # fmt: skip
        self._check(done, "pg_ctl start")
        self.running = True

    def stop(self, mode: str = "fast") -> None:
        """``pg_ctl stop -m <mode>`` (fast: clients are disconnected, a clean shutdown)."""
        done = as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t", "120", "stop")
        self.running = False
        self._check(done, "pg_ctl stop")

    def remove(self) -> None:
        """Stop it if it runs (immediate) and delete the cluster."""
        if (self.data / "postmaster.pid").exists():
            as_postgres(str(BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self.running = False
        shutil.rmtree(self.directory, ignore_errors=True)

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""
