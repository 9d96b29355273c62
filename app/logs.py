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
                "()": "app.logs.LineHandler",
                "stream": "stderr",
                "formatter": "records",
                "filters": ["request_id"],
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


def _raw(name: Literal["stdout", "stderr"]) -> io.FileIO | TextIO:
    """An unbuffered binary file over the stream's descriptor (the text stream itself where it has none)."""
    stream = getattr(sys, name)
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream  # type: ignore[no-any-return]
    return io.FileIO(descriptor, "w", closefd=False)


def flush_all() -> None:
    """Write out what every handler of ours holds (called at the service's shutdown)."""
    for name in ("mcp_sonde.access", "mcp_sonde", ""):
        for handler in logging.getLogger(name).handlers:
            handler.flush()


class LineHandler(logging.Handler):
    """One line per record on stdout or stderr, written by a thread of its own: logging never
    waits on whoever reads the stream.

    A record is formatted where it is logged (so it carries that request's id) and its line is
    queued; the handler's daemon thread writes what is queued every :data:`FLUSH_S` (a syscall
    per line cost the badge route a fifth of its throughput). When nobody reads the stream (a
    full pipe, a stalled log collector) that thread waits on the write, never the event loop:
    lines queue up to :data:`PENDING_MAX` characters, later ones are dropped and counted, and a
    warning says how many once the stream takes writes again. :meth:`flush` (called at the
    service's shutdown, since uvicorn ends by re-raising SIGTERM, which skips ``atexit``) waits
    at most :data:`SHUTDOWN_WAIT_S` for the queue to be written. Our own access log hands its
    lines over with :meth:`write_line`, skipping the ``LogRecord``.
    """

    FLUSH_S = 0.2
    PENDING_MAX = 4 << 20
    SHUTDOWN_WAIT_S = 5.0

    def __init__(self, stream: Literal["stdout", "stderr"] = "stdout") -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))
        self.stream_name = stream
        self._out = _raw(stream)
        self._pending: list[str] = []
        self._size = 0
        self._dropped = 0
        self._state = threading.Condition(threading.Lock())
        self._writing = False
        self._wake = threading.Event()
        threading.Thread(target=self._write_often, name=f"log-{stream}", daemon=True).start()
        atexit.register(self.flush)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.write_line(self.format(record))
        except Exception:
            self.handleError(record)

    def write_line(self, line: str) -> None:
        """Queue ``line`` (no newline in it); dropped and counted while :data:`PENDING_MAX` is queued."""
        with self._state:
            if self._size + len(line) >= self.PENDING_MAX:
                self._dropped += 1
                return
            self._pending.append(line)
            self._size += len(line) + 1

    def flush(self) -> None:
        """Have the queue written now; wait for that at most :data:`SHUTDOWN_WAIT_S`."""
        self._wake.set()
        with self._state:
            self._state.wait_for(lambda: not self._pending and not self._writing, timeout=self.SHUTDOWN_WAIT_S)

    def _write_often(self) -> None:
        while True:
            self._wake.wait(self.FLUSH_S)
            self._wake.clear()
            with self._state:
                lines, self._pending, self._size = self._pending, [], 0
                dropped, self._dropped = self._dropped, 0
                self._writing = bool(lines)
            if lines:
                self._write("\n".join(lines) + "\n")
            with self._state:
                self._writing = False
                self._state.notify_all()
            if dropped:  # (after a write went through: the stream is read again)
                logging.getLogger("mcp_sonde.logs").warning(
                    "%d log lines were dropped: %s was not read", dropped, self.stream_name
                )

    def _write(self, text: str) -> None:
        try:
            if isinstance(self._out, io.FileIO):
                view = memoryview(text.encode("utf-8", "replace"))
                while view:
                    view = view[self._out.write(view) or 0 :]
            else:
                self._out.write(text)
                self._out.flush()
        except (OSError, ValueError):
            pass  # (a closed stream: there is no one to tell)


def configure_cli_logging(level: int = logging.WARNING) -> None:
    """Logging for the ``check`` command: warnings to stderr, client request logs silenced."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
