"""One child process of the drill: started, killed, stopped and started again, its output appended
to a log file of its own (kept in the drill's temp dir, its tail printed when the drill fails)."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Proc:
    """A named command with its environment and its log file."""

    name: str
    argv: list[str]
    env: Mapping[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    codes: list[int] = field(default_factory=list)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start the command (again); its own session, so a Ctrl-C at the terminal reaches only the drill."""
        self.starts += 1
        with self.log.open("ab") as out:
            out.write(f"--- {self.name}: start {self.starts} at {time.strftime('%H:%M:%S')} ---\n".encode())
            out.flush()
            self.process = subprocess.Popen(
                self.argv, env=dict(self.env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )

    def kill(self) -> None:
        """SIGKILL: a crash."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.codes.append(self.process.wait(timeout=30))

    def terminate(self) -> None:
        """SIGTERM, once (a second one makes uvicorn skip its graceful shutdown)."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)

    def finish(self, timeout_s: float = 60.0) -> int | None:
        """Wait for the exit, SIGKILL past ``timeout_s``; the exit code (``None`` when it was not running)."""
        if self.process is None:
            return None
        try:
            self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
        code = self.process.returncode
        self.codes.append(code)
        self.process = None
        return code

    def stop(self, timeout_s: float = 60.0) -> int | None:
        """SIGTERM, then SIGKILL past ``timeout_s``; the exit code."""
        self.terminate()
        return self.finish(timeout_s)

    def tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of the log."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])
