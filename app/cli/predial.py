"""The check's target dialled while the probe is still being imported.

``mcp-sonde check`` spends most of its start importing the probe and the settings; its first
packet need not wait for that. :func:`start` runs on the first lines of the command: on a
thread, it checks the URL's form (:func:`app.guard.url.check_url`), looks the host up once
(``getaddrinfo``, as the guard's resolver does) and clears every address with the guard's own
policy (:func:`app.guard.policy.clear`), then opens a TCP connection to the first address. The
thread needs only the standard library and the guard's light modules.

:meth:`Predial.take` then gives the probe that resolution (``resolved``: the probe does not
look the host up again) and the connected socket (:class:`app.net.predialled.PreDialled`
gives it to the first connection), but only when all of it finished in time and for exactly
the URL and switch the command ended up with; otherwise the probe starts as if nothing had
happened and a socket made later is closed. A URL the guard refuses is never connected to:
the thread stops at the refusal, and the probe refuses it again with its reason.

What changes in the result: the probe was handed its lookup, so ``dns_ms`` is ``null``, and its
first exchange's time does not hold the TCP connect made here (docs/checks.md says so).
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.guard.addresses import IPAddress
from app.guard.policy import addresses_of, clear
from app.guard.url import TargetUrl, check_url

if TYPE_CHECKING:
    from collections.abc import Sequence

#: Seconds the thread's connect may take; a slower target is dialled by the probe meanwhile.
CONNECT_TIMEOUT_S = 10.0


@dataclass
class Dialled:
    """What the thread made: the checked URL, every address it resolved to, and a socket connected to the first."""

    url: TargetUrl
    addresses: tuple[IPAddress, ...]
    sock: socket.socket


class Predial:
    """One early dial (see the module docs)."""

    def __init__(self, url: str, allow_private: bool) -> None:
        self.url, self.allow_private = url, allow_private
        self._lock = threading.Lock()
        self._result: Dialled | None = None
        self._abandoned = False
        self._thread = threading.Thread(target=self._run, name="predial", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        dialled = None
        try:
            target = check_url(self.url, allow_private=self.allow_private)
            if target.ip_literal is not None:
                addresses = [target.ip_literal]
            else:
                addresses = addresses_of(socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM))
            if addresses:
                clear(addresses, allow_private=self.allow_private)
                sock = socket.create_connection((str(addresses[0]), target.port), timeout=CONNECT_TIMEOUT_S)
                dialled = Dialled(target, tuple(addresses), sock)
        except Exception:  # refused, unresolvable, unreachable: the probe finds it out itself and says so
            dialled = None
        with self._lock:
            if self._abandoned:
                if dialled is not None:
                    dialled.sock.close()
                return
            self._result = dialled

    def take(self, url: str, allow_private: bool) -> Dialled | None:
        """The dial, if it is done, succeeded, and was for ``url`` under ``allow_private``; from
        then on the thread's work is the caller's or is closed."""
        with self._lock:
            self._abandoned = True
            result, self._result = self._result, None
        if result is None:
            return None
        if (url, allow_private) != (self.url, self.allow_private):
            result.sock.close()
            return None
        return result


def start(argv: Sequence[str]) -> Predial | None:
    """A :class:`Predial` for ``mcp-sonde check``'s URL in ``argv`` (the arguments after ``check``),
    or ``None`` when the URL cannot be told without the full parser (the check then dials as usual)."""
    valued = {"--header", "--timeout", "--ca-bundle"}
    positional, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in valued:
            skip = True
        elif arg == "--" or (arg.startswith("-") and "=" not in arg and arg not in _FLAGS):
            return None  # (an option this loop does not know: leave it to the parser)
        elif not arg.startswith("-"):
            positional.append(arg)
    if len(positional) != 1:
        return None
    return Predial(positional[0], "--allow-private" in argv)


_FLAGS = frozenset({"--light", "--json", "--tools", "--allow-private"})
