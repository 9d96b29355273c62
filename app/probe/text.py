"""Making text that came from a probed server safe to pass on.

Policy: everything a server sends is untrusted (results carry ``untrusted_content: true``).
Strings are stripped of control, format, surrogate, private-use and unassigned characters and
of line/paragraph separators (terminal escapes, bidirectional overrides, lone surrogates that
would break UTF-8), runs of combining marks are cut short, and strings are cut to a length; JSON values are
limited in depth, keys and list length so a server cannot inflate a result.
"""

from __future__ import annotations

import unicodedata
from typing import Any

MAX_DEPTH = 4
MAX_ITEMS = 32
MAX_KEY = 64
MAX_VALUE = 256
MAX_COMBINING = 2
_DROPPED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def clean_text(value: object, max_len: int = MAX_VALUE) -> str | None:
    """A string safe to show and to serialise; ``None`` for non-strings.

    Removes control, format, surrogate, private-use and unassigned characters and line or
    paragraph separators (categories Cc, Cf, Cs, Co, Cn, Zl, Zp), keeps at most two combining
    marks in a row, trims, and cuts to ``max_len`` characters.
    """
    if not isinstance(value, str):
        return None
    kept: list[str] = []
    marks = 0
    for ch in value[: max_len * 4]:
        category = unicodedata.category(ch)
        if category in _DROPPED:
            continue
        if category in ("Mn", "Me"):
            marks += 1
            if marks > MAX_COMBINING:
                continue
        else:
            marks = 0
        kept.append(ch)
    cleaned = "".join(kept).strip()
    if len(cleaned) > max_len:
        cleaned = cleaned[: max_len - 1] + "…"
    return cleaned


def clean_json(value: Any, depth: int = 0) -> Any:
    """A bounded copy of a JSON value: at most 4 levels, 32 items per container, short strings."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        return clean_text(value)
    if depth >= MAX_DEPTH:
        return {} if isinstance(value, dict) else None
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in list(value.items())[:MAX_ITEMS]:
            clean_key = clean_text(key, MAX_KEY)
            if clean_key:
                out[clean_key] = clean_json(item, depth + 1)
        return out
    if isinstance(value, list):
        return [clean_json(item, depth + 1) for item in value[:MAX_ITEMS]]
    return None
