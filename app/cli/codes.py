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
