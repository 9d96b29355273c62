"""Badge colours: shields' ``badge-maker`` 6.0.0 palette and aliases (``lib/color.js``).

Colours are named (``brightgreen``, ``lightgrey``, ...), aliases (``success``, ``inactive``, ...)
or hex (``#4b0``, ``4b0``, ``#44bb00``). Anything else is refused by :func:`to_svg_color`.
"""

from __future__ import annotations

import re
from typing import Final

NAMED: Final[dict[str, str]] = {
    "brightgreen": "#4b0",
    "green": "#67ac09",
    "yellow": "#d8b800",
    "yellowgreen": "#95991a",
    "orange": "#ea7233",
    "red": "#dd4343",
    "blue": "#007ec6",
    "grey": "#555",
    "lightgrey": "#939393",
}
ALIASES: Final[dict[str, str]] = {
    "gray": "grey",
    "lightgray": "lightgrey",
    "critical": "red",
    "important": "orange",
    "success": "brightgreen",
    "informational": "blue",
    "inactive": "lightgrey",
}
_HEX = re.compile(r"#?((?:[0-9a-fA-F]{3}){1,2})")


class UnknownColor(ValueError):
    """Not a palette name, an alias or a hex colour."""


def to_svg_color(color: str) -> str:
    """The fill for ``color``: ``#`` + lower-case hex."""
    if color in NAMED:
        return NAMED[color]
    if color in ALIASES:
        return NAMED[ALIASES[color]]
    match = _HEX.fullmatch(color)
    if match is None:
        raise UnknownColor(color)
    return "#" + match.group(1).lower()


def brightness(fill: str) -> float:
    """Perceived brightness 0..1 of a hex fill (``(299 r + 587 g + 114 b) / 255000``), to 2 decimals."""
    digits = fill.lstrip("#")
    if len(digits) == 3:
        digits = "".join(ch * 2 for ch in digits)
    r, g, b = (int(digits[i : i + 2], 16) for i in (0, 2, 4))
    return round((r * 299 + g * 587 + b * 114) / 255000, 2)
