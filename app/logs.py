"""Logging set-up: one place, applied in every process (uvicorn applies ``SERVICE_LOGGING`` in each worker).

Policy: the access log (``mcp_sonde.access``) is one JSON object per line on stdout and holds no
query strings, bodies or headers (written without a flush per line: :class:`LineHandler`);
everything else goes to stderr. The HTTP client libraries' own request logs are kept at
WARNING, because they print full URLs.
"""

from __future__ import annotations

import atexit
import io
import logging
import sys
import threading
import time
from typing import Any, Final, TextIO

QUIET: Final = ("httpx2", "httpcore2", "httpx", "httpcore")

SERVICE_LOGGING: Final[dict[str, Any]] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(levelname)s %(name)s: %(message)s"},
        "line": {"format": "%(message)s"},
    },
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "plain", "stream": "ext://sys.stderr"},
        "access": {"()": "app.logs.LineHandler"},
    },
    "loggers": {
        "mcp_sonde": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "mcp_sonde.access": {"handlers": ["access"], "level": "INFO", "propagate": False},
        "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
        "uvicorn.error": {"level": "INFO"},
        "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        **{name: {"level": "WARNING"} for name in QUIET},
    },
}


def _buffered_stdout() -> TextIO:
    """A 64 kB-buffered text stream over stdout's file descriptor (stdout itself where it has none)."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return sys.stdout
    raw = io.FileIO(descriptor, "w", closefd=False)
    return io.TextIOWrapper(io.BufferedWriter(raw, 65536), encoding="utf-8", errors="replace")


def flush_all() -> None:
    """Write out what every handler of ours holds (called at the service's shutdown)."""
    for name in ("mcp_sonde.access", "mcp_sonde"):
        for handler in logging.getLogger(name).handlers:
            handler.flush()


class LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """One line per record on stdout, flushed at most every :data:`FLUSH_S` (and at exit).

    A request never waits on a write: lines go into a buffer of our own over stdout's file
    (unbuffered when ``PYTHONUNBUFFERED`` is set, as in the image) and a daemon thread flushes it
    (a syscall per line cost the badge route a fifth of its throughput). The service flushes it
    at shutdown too (uvicorn ends by re-raising SIGTERM, which skips ``atexit``). Our own access
    log hands its lines over with :meth:`write_line`, skipping the ``LogRecord``.
    """

    FLUSH_S = 0.2

    def __init__(self) -> None:
        super().__init__(_buffered_stdout())
        self.setFormatter(logging.Formatter("%(message)s"))
        threading.Thread(target=self._flush_often, name="log-flush", daemon=True).start()
        atexit.register(self.flush)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.write_line(self.format(record))
        except Exception:
            self.handleError(record)

    def write_line(self, line: str) -> None:
        """Write ``line`` (no newline in it) without flushing."""
        with self.lock:  # type: ignore[union-attr]
            self.stream.write(line + self.terminator)

    def _flush_often(self) -> None:
        while True:
            time.sleep(self.FLUSH_S)
            self.flush()


def configure_cli_logging(level: int = logging.WARNING) -> None:
    """Logging for the ``check`` command: warnings to stderr, client request logs silenced."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
