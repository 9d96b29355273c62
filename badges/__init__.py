"""Status badges drawn like shields.io's ``badge-maker`` 6.0.0 (no web code in this package).

:func:`render_svg` returns the SVG; :mod:`badges.png` draws the same badge as PNG.
"""

from __future__ import annotations

from badges.colors import UnknownColor
from badges.render import STYLES, Style, UnknownStyle, render_svg

__all__ = ["STYLES", "Style", "UnknownColor", "UnknownStyle", "render_svg"]
