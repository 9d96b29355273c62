"""Progress on a terminal while a probe runs: the step being run and the seconds spent.

Policy: shown only when stderr is a terminal; one line, redrawn in place (``\\r`` and erase to
the end of the line) a few times a second, and erased before the result is printed, so piped
output and logs never see it.
"""

from __future__ import annotations

import time
from typing import TextIO

import anyio

_REDRAW_S = 0.1


class Progress:
    """Keeps the current step (:meth:`step` is the probe's observer) and draws it."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.current = "starting"
        self.started = time.monotonic()

    def step(self, name: str) -> None:
        """The probe started step ``name``."""
        self.current = name

    def draw(self) -> None:
        """Redraw the line once."""
        self.out.write(f"\r\x1b[K  {self.current} … {time.monotonic() - self.started:.1f} s")
        self.out.flush()

    def clear(self) -> None:
        """Erase the line."""
        self.out.write("\r\x1b[K")
        self.out.flush()

    async def run(self) -> None:
        """Redraw until cancelled."""
        try:
            while True:
                self.draw()
                await anyio.sleep(_REDRAW_S)
        finally:
            self.clear()
