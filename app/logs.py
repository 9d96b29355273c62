"""Logging set-up: one place, applied in every process (uvicorn applies ``SERVICE_LOGGING`` in each worker).

Policy: the access log (``mcp_sonde.access``) is one JSON object per line on stdout and holds no
query strings, bodies or headers; everything else goes to stderr. The HTTP client libraries'
own request logs are kept at WARNING, because they print full URLs.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final

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
        "access": {"class": "logging.StreamHandler", "formatter": "line", "stream": "ext://sys.stdout"},
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


def configure_cli_logging(level: int = logging.WARNING) -> None:
    """Logging for the ``check`` command: warnings to stderr, client request logs silenced."""
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
