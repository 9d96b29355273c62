"""The opt-out list: hosts and URLs never contacted by scheduled work (see :mod:`app.optout.store`)."""

from __future__ import annotations

from app.optout.store import OptOut, OptOutInvalid, OptOutList, matches, normalise, opted_out

__all__ = ["OptOut", "OptOutInvalid", "OptOutList", "matches", "normalise", "opted_out"]
