"""Logging set-up: one place, applied in every process (uvicorn applies :func:`service_logging` in each worker).

Policy:

- Every logger of the service (``mcp_sonde.*``, ``uvicorn``, ``uvicorn.error``, the probe's,
  and anything else that reaches the root logger) writes one JSON object per line, formatted
  by python-json-logger: ``timestamp`` (RFC 3339, UTC), ``level``, ``logger``, ``message``,
  ``request_id`` when the record is written while a request is handled (see
  :data:`REQUEST_ID`), and ``exception`` (the formatted traceback) when there is one.
  ``log_format=plain`` gives one readable line per record instead, for people at a terminal.
- The access log (``mcp_sonde.access``) goes to stdout, everything else to stderr. Access
  lines are built by :class:`app.http.middleware.accesslog.AccessLogger` with the same keys and
  handed to :class:`LineHandler` without a ``LogRecord``; they hold no query strings, bodies
  or headers.
- The HTTP client libraries' own request logs are kept at WARNING, because they print full
  URLs. Nobody logs a credential, a token or a query string (the service's tests search every
  record for canaries).

The ``check`` command's output is not logging: it keeps its plain ``LEVEL name: message``
warnings (:func:`configure_cli_logging`).
"""

from __future__ import annotations

import atexit
import io
import logging
import sys
import threading
import time
from contextvars import ContextVar
from typing import Any, Final, Literal, TextIO

QUIET: Final = ("httpx2", "httpcore2", "httpx", "httpcore")

#: The id of the request being handled (set by :mod:`app.http.middleware.requestid`), ``None`` outside one.
REQUEST_ID: Final[ContextVar[str | None]] = ContextVar("mcp_sonde_request_id", default=None)

LogFormat = Literal["json", "plain"]

#: Record attributes never written as fields (uvicorn's coloured copy of its message, for one).
_NOT_FIELDS: Final = ("color_message",)


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on every record a handler writes (nothing outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = REQUEST_ID.get()
        if request_id is not None:
            record.request_id = request_id
        return True


def _formatter(log_format: LogFormat) -> dict[str, Any]:
    if log_format == "plain":
        return {
            "()": "logging.Formatter",
            "fmt": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s",
            "defaults": {"request_id": "-"},
        }
    from pythonjsonlogger.core import RESERVED_ATTRS

    return {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": ["levelname", "name", "message"],
        "rename_fields": {"levelname": "level", "name": "logger", "exc_info": "exception"},
        "reserved_attrs": [*RESERVED_ATTRS, *_NOT_FIELDS],
        "timestamp": True,
        "defaults": {"timestamp": ""},  # (only to put the key first; the formatter fills it in)
    }


def service_logging(log_format: LogFormat = "json") -> dict[str, Any]:
    """The ``logging.config.dictConfig`` of the service (uvicorn's ``log_config``)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "app.logs.RequestIdFilter"}},
        "formatters": {"records": _formatter(log_format)},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "records",
                "filters": ["request_id"],
                "stream": "ext://sys.stderr",
            },
            "access": {"()": "app.logs.LineHandler"},
        },
        "root": {"handlers": ["stderr"], "level": "WARNING"},
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
