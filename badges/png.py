"""The same badge as PNG, drawn by cairosvg from a variant SVG that cairo draws legibly.

cairo draws ``text-rendering="geometricPrecision"`` text as garbage (cairo issue 152), has no
``feGaussianBlur`` (the blurred shadow would become a hard black copy) and ignores
``textLength`` and every family but the first. The variant therefore drops the attribute and
the blurred shadow and names DejaVu Sans first (Verdana's metric stand-in on Linux). cairosvg
runs in its safe mode: no entities, no external files or URLs.
"""

from __future__ import annotations

import re

import cairosvg

from badges.render import FONT_FAMILY

_BLURRED = re.compile(r'<text [^>]*filter="url\(#blur\)"[^>]*>.*?</text>')


def png_variant(svg: str) -> str:
    """The SVG cairo should draw (see the module docs)."""
    variant = svg.replace(' text-rendering="geometricPrecision"', "")
    variant = _BLURRED.sub("", variant)
    return variant.replace(f'font-family="{FONT_FAMILY}"', 'font-family="DejaVu Sans,Verdana,sans-serif"')


def render_png(svg: str, scale: float = 1.0) -> bytes:
    """PNG bytes of a badge SVG from :func:`badges.render_svg` (CPU-bound: call it off the event loop)."""
    result = cairosvg.svg2png(bytestring=png_variant(svg).encode("utf-8"), scale=scale, unsafe=False)
    assert isinstance(result, bytes)
    return result
