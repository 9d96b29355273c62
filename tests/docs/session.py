"""One shell session that runs every ``<!-- run -->`` block of the README and the docs, in order.

What is real and what is substituted:

- The blocks run as written, with bash (``set -euo pipefail``: any failing command ends the
  session), in a **copy of the working tree**: every file git tracks or would track
  (``git ls-files --cached --others --exclude-standard``), symbolic links kept as links.
- The README's install block (``<!-- run: install -->``) is **not run**: installing the locked
  packages takes minutes. The copy's ``.venv`` is a symbolic link to this checkout's virtualenv
  instead, nothing else is rewritten. That virtualenv holds the project as an editable install
  of this checkout, so ``.venv/bin/mcp-sonde`` imports the code of this checkout, while
  ``python -m ...`` and the ``python`` blocks (fed to ``.venv/bin/python -``) import the copy's
  (the current directory comes first on their path); both are the same files.
- The environment is the caller's without any ``MCP_SONDE_*``, ``REDIS_URL`` or ``OTEL_*``
  variable, plus free loopback ports as ``MCP_SONDE_PORT`` and ``FIXTURES_PORT`` (the README
  reads both with a default of 8000 and 8001), a fresh data directory (``MCP_SONDE_DATA_DIR``,
  ``XDG_DATA_HOME``) and a private ``TMPDIR``.
- The session runs the README's run blocks, then each page's in the order of the navigation,
  then the ``<!-- run: stop -->`` blocks. Between blocks it prints ``::block N start`` and
  ``::block N ok``, so a failure names its block.

Afterwards the session records whether any process of its process group was still alive (the
README's stop block must have stopped everything the quickstart started), then kills whatever
is left, first with SIGTERM and then SIGKILL, on failure and timeout alike.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.docs.blocks import ROOT, Block, all_blocks
from tests.servers.ports import free_port

#: Longest the whole session may take before it is stopped (it takes about 40 s on 2 idle cores).
SESSION_TIMEOUT_S = 240.0
#: How long the processes the blocks started may take to exit after the session's last block.
EXIT_GRACE_S = 15.0
PYTHON_END = "__MCP_SONDE_DOCS_PYTHON_BLOCK__"


@dataclass
class Session:
    """What the session did: its blocks, output, exit status, time, and what it left behind."""

    blocks: list[Block]
    workdir: Path
    output: str = ""
    returncode: int | None = None
    seconds: float = 0.0
    leftover: list[str] = field(default_factory=list)
    timed_out: bool = False
    started_at: dict[int, float] = field(default_factory=dict)

    def state(self, index: int) -> str:
        """``ok``, ``failed`` (started, never finished) or ``not reached``."""
        if f"::block {index} ok\n" in self.output:
            return "ok"
        if f"::block {index} start\n" in self.output:
            return "failed"
        return "not reached"

    def output_of(self, index: int) -> str:
        """What block ``index`` printed."""
        text = self.output.split(f"::block {index} start\n", 1)
        return text[1].split(f"::block {index} ok\n", 1)[0] if len(text) == 2 else ""

    def took(self, index: int) -> float | None:
        """Seconds block ``index`` took (to the next block's start, or the session's end)."""
        if index not in self.started_at:
            return None
        ends = [at for i, at in self.started_at.items() if i > index]
        return (min(ends) if ends else self.started_at[0] + self.seconds) - self.started_at[index]

    def timings(self) -> str:
        """One line per block: its index, state, seconds and place."""
        return "\n".join(
            f"  {i:>2}: {self.state(i):<11} {took:5.1f} s  {block.where}"
            for i, block in enumerate(self.blocks)
            for took in [self.took(i) or 0.0]
        )

    def report(self) -> str:
        """The blocks' states and times, and the tail of the output, for an assertion message."""
        head = f"returncode {self.returncode}, {self.seconds:.1f} s"
        return f"{head}\n{self.timings()}\n--- output ---\n{self.output[-6000:]}"


def ordered_run_blocks() -> list[Block]:
    """The run blocks in session order: the README's, each page's, then the stop blocks."""
    every = [block for block in all_blocks() if block.kind in ("run", "stop")]
    return [block for block in every if block.kind == "run"] + [block for block in every if block.kind == "stop"]


def script(blocks: list[Block], times: Path) -> str:
    """The bash script of the session (each block's start time goes to ``times``)."""
    parts = ["set -euo pipefail"]
    for index, block in enumerate(blocks):
        parts.append(f"printf '::block %s start\\n' {index}")
        parts.append(f"printf '%s %s\\n' {index} \"$EPOCHREALTIME\" >> '{times}'")
        if block.language == "python":
            parts.append(f".venv/bin/python - <<'{PYTHON_END}'\n{block.code}{PYTHON_END}")
        else:
            parts.append(block.code.rstrip("\n"))
        parts.append(f"printf '::block %s ok\\n' {index}")
    return "\n".join(parts) + "\n"


def copy_tree(target: Path) -> None:
    """The working tree's files that git tracks or would track, into ``target``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8", "surrogateescape")
    for name in sorted(set(filter(None, listed.split("\0")))):
        source, destination = ROOT / name, target / name
        if source.is_symlink():
            destination.parent.mkdir(parents=True, exist_ok=True)
            destination.symlink_to(os.readlink(source))
        elif source.is_file():
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination)


def environment(base: Path) -> dict[str, str]:
    """The caller's environment without the service's settings, with free ports and fresh directories."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("MCP_SONDE_", "OTEL_")) and name != "REDIS_URL"
    }
    service, fixtures = free_port(), free_port()
    while fixtures == service:
        fixtures = free_port()
    for name in ("data", "xdg", "tmp"):
        (base / name).mkdir()
    env.update(
        MCP_SONDE_PORT=str(service),
        FIXTURES_PORT=str(fixtures),
        MCP_SONDE_DATA_DIR=str(base / "data"),
        XDG_DATA_HOME=str(base / "xdg"),
        TMPDIR=str(base / "tmp"),
        NO_MKDOCS_2_WARNING="1",
    )
    return env


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _members(group: int) -> list[str]:
    """The command lines of the processes still in ``group`` (from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) != group:
                continue
            found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip())
        except (OSError, ProcessLookupError):
            continue
    return found


def _stop(group: int) -> None:
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if not _alive(group):
            return
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and _alive(group):
            time.sleep(0.1)


def run_session() -> tuple[Session, tempfile.TemporaryDirectory[str]]:
    """Runs the session; the caller removes the directory (``cleanup()``) when done with its files."""
    holder = tempfile.TemporaryDirectory(prefix="mcp-sonde-docs-")
    base = Path(holder.name)
    workdir = base / "repo"
    workdir.mkdir()
    copy_tree(workdir)
    (workdir / ".venv").symlink_to(ROOT / ".venv")
    blocks = ordered_run_blocks()
    session = Session(blocks=blocks, workdir=workdir)
    times = base / "times"
    (base / "session.sh").write_text(script(blocks, times), "utf-8")
    log = base / "session.log"
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", str(base / "session.sh")],
            cwd=workdir,
            env=environment(base),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        group = process.pid
        try:
            session.returncode = process.wait(timeout=SESSION_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            session.timed_out = True
        finally:
            session.seconds = time.monotonic() - started
            deadline = time.monotonic() + EXIT_GRACE_S
            while session.returncode == 0 and time.monotonic() < deadline and _alive(group):
                time.sleep(0.1)
            session.leftover = _members(group) if _alive(group) else []
            _stop(group)
            if process.poll() is None:
                process.kill()
            process.wait()
    session.output = log.read_text("utf-8", errors="replace")
    if times.is_file():
        for line in times.read_text("utf-8").splitlines():
            words = line.replace(",", ".").split()
            if len(words) == 2:  # (an old bash has no EPOCHREALTIME: no times, nothing else lost)
                session.started_at[int(words[0])] = float(words[1])
    return session, holder
