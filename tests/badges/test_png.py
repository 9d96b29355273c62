"""PNG badges: the right size, and real pixels in both halves."""

from __future__ import annotations

import io
import struct
import zlib

from badges import render_svg
from badges.png import png_variant, render_png


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and unfiltered-enough rows of an 8-bit RGBA PNG (stdlib only)."""
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    stream = io.BytesIO(data[8:])
    width = height = 0
    idat = b""
    while True:
        length, kind = struct.unpack(">I4s", stream.read(8))
        chunk = stream.read(length)
        stream.read(4)
        if kind == b"IHDR":
            width, height = struct.unpack(">II", chunk[:8])
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * 4 + 1
    return width, height, [raw[i * stride : (i + 1) * stride] for i in range(height)]


def test_png_size_and_pixels() -> None:
    svg = render_svg("MCP", "live · checked 2026-10-10", "brightgreen")
    width, height, rows = decode_png(render_png(svg))
    assert (width, height) == (188, 20)
    middle = rows[10]
    assert len(set(middle)) > 10  # not a blank row: both colours and text


def test_png_at_twice_the_scale() -> None:
    width, height, _rows = decode_png(render_png(render_svg("MCP", "unreachable", "lightgrey"), scale=2))
    assert (width, height) == (220, 40)


def test_variant_drops_what_cairo_draws_badly() -> None:
    variant = png_variant(render_svg("MCP", "auth required", "yellow"))
    assert "geometricPrecision" not in variant and "url(#blur)" not in variant
    assert 'font-family="DejaVu Sans' in variant
