"""The exit codes of ``mcp-sonde`` (light: the command imports nothing else before it runs)."""

from __future__ import annotations

from typing import Final

#: Process exit code per status class; 2 is a usage error, 3 a refused URL, 1 an internal error.
EXIT_CODES: Final[dict[str, int]] = {
    "ok": 0,
    "auth": 10,
    "not_found": 11,
    "client_error": 12,
    "server_error": 13,
    "redirect": 14,
    "not_mcp": 15,
    "timeout": 16,
    "tls": 17,
    "dns": 18,
    "unreachable": 19,
}
EXIT_REFUSED: Final = 3
EXIT_USAGE: Final = 2
EXIT_INTERNAL: Final = 1
EXIT_INTERRUPTED: Final = 130
EXIT_HELP: Final = (
    "exit codes: "
    + ", ".join(f"{code} {status}" for status, code in EXIT_CODES.items())
    + (
        f"; {EXIT_REFUSED} the URL was refused (nothing was connected to); {EXIT_USAGE} usage error; "
        f"{EXIT_INTERNAL} internal fault; {EXIT_INTERRUPTED} interrupted (Ctrl-C)"
    )
)

#: ``serve``'s own codes, none of them one of ``check``'s (0 a clean stop, 2 usage, 1 an internal fault).
SERVE_EXIT_SETTINGS: Final = 20
SERVE_EXIT_PORT: Final = 21
SERVE_EXIT_STARTUP: Final = 22
SERVE_EXIT_HELP: Final = (
    f"exit codes: 0 stopped cleanly (SIGTERM or Ctrl-C); {EXIT_USAGE} usage error; "
    f"{SERVE_EXIT_SETTINGS} invalid settings (MCP_SONDE_* or flags); "
    f"{SERVE_EXIT_PORT} a port cannot be bound (--port, MCP_SONDE_METRICS_PORT); "
    f"{SERVE_EXIT_STARTUP} start-up failed (the app or its start-up checks, for example tracing asked for "
    f"and not installed); {EXIT_INTERNAL} internal fault"
)
#: ``worker``'s and ``scheduler``'s codes: ``serve``'s, but for the port they do not bind.
JOBS_EXIT_HELP: Final = (
    f"exit codes: 0 stopped cleanly (SIGTERM or Ctrl-C); {EXIT_USAGE} usage error; "
    f"{SERVE_EXIT_SETTINGS} invalid settings (REDIS_URL missing, MCP_SONDE_* or flags); "
    f"{SERVE_EXIT_STARTUP} start-up failed (no signing key, a history schema behind); {EXIT_INTERNAL} internal fault"
)
