"""Badge SVGs identical to shields' ``badge-maker`` 6.0.0 (``lib/badge-renderers.js``).

Styles ``flat`` (default), ``flat-square`` and ``for-the-badge``, without logos or links (this
service never needs them). Geometry: text widths from the Verdana tables rounded down, then up
to an odd number; 5 px padding (12 px margins and 1.25 px letter spacing, upper case, bold
message for ``for-the-badge``); text drawn at ten times the size and scaled by ``.1``; text
colour ``#333`` on backgrounds brighter than 0.69. Accessibility: ``role="img"``,
``aria-label`` and ``<title>`` ``label: message``, shadow texts ``aria-hidden``.

All markup goes through :mod:`badges.xml`, which escapes every value.
"""

from __future__ import annotations

from typing import Final, Literal

from badges.colors import brightness, to_svg_color
from badges.widths import width_of
from badges.xml import Element, Fragment, Node, Value

Style = Literal["flat", "flat-square", "for-the-badge"]
STYLES: Final[tuple[Style, ...]] = ("flat", "flat-square", "for-the-badge")
FONT_FAMILY: Final = "Verdana,Geneva,DejaVu Sans,sans-serif"
SCALE_DOWN: Final = "scale(.1)"
WHITE: Final = "#fff"
# JavaScript's String.prototype.trim whitespace (ECMAScript WhiteSpace and LineTerminator).
_JS_SPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


class UnknownStyle(ValueError):
    """Not one of :data:`STYLES`."""


def _js_length(text: str) -> int:
    """``String.prototype.length``: UTF-16 code units (an emoji counts 2)."""
    return len(text.encode("utf-16-le")) // 2


def _colors_for(fill: str) -> tuple[str, str]:
    return (WHITE, "#010101") if brightness(fill) <= 0.69 else ("#333", "#ccc")


def _with_fill(attrs: dict[str, Value], text_color: str) -> dict[str, Value]:
    return attrs if text_color == WHITE else {**attrs, "fill": text_color}


def _odd_width(text: str) -> int:
    width = int(width_of(text, "11px Verdana"))
    return width + 1 if width % 2 == 0 else width


def _svg(label: str, message: str, width: float, height: int, content: list[Node]) -> str:
    accessible = f"{label}: {message}" if label else message
    svg = Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": width,
            "height": height,
            "role": "img",
            "aria-label": accessible,
        },
        [Element("title", {}, [accessible]), Fragment(content)],
    )
    return svg.render()


def _flat(label: str, message: str, color: str, label_color: str, *, square: bool) -> str:
    padding, height = 5, 20
    has_label = bool(label)
    label_color = label_color if has_label else color
    label_width = _odd_width(label) if label else 0
    left = label_width + 2 * padding if has_label else 0
    message_width = _odd_width(message)
    message_margin = left - (1 if message else 0) + (0 if has_label else 1)
    right = message_width + 2 * padding
    width = left + right

    def text(margin: int, content: str, fill: str, text_width: int) -> Node:
        if not content:
            return ""
        text_color, shadow_color = _colors_for(fill)
        x = 10 * (margin + 0.5 * text_width + padding)
        length = 10 * text_width
        if square:
            return Element(
                "text",
                _with_fill({"x": x, "y": 140, "textLength": length, "transform": SCALE_DOWN}, text_color),
                [content],
            )
        shadow = Element(
            "g",
            {"aria-hidden": "true", "fill": shadow_color},
            [
                Element(
                    "text",
                    {"x": x, "y": 150, "fill-opacity": ".8", "filter": "url(#blur)", "textLength": length},
                    [content],
                ),
                Element("text", {"x": x, "y": 150, "fill-opacity": ".3", "textLength": length}, [content]),
            ],
        )
        front = Element("text", _with_fill({"x": x, "y": 140, "textLength": length}, text_color), [content])
        return Element("g", {"transform": SCALE_DOWN}, [shadow, front])

    foreground = Element(
        "g",
        {
            "fill": WHITE,
            "text-anchor": "middle",
            "font-family": FONT_FAMILY,
            "text-rendering": "geometricPrecision",
            "font-size": 110,
        },
        ["", text(1, label, label_color, label_width), text(message_margin, message, color, message_width)],
    )
    rects: list[Node] = [
        Element("rect", {"width": left, "height": height, "fill": label_color}),
        Element("rect", {"x": left, "width": right, "height": height, "fill": color}),
    ]
    if square:
        background = Element("g", {"shape-rendering": "crispEdges"}, rects)
        return _svg(label, message, width, height, [background, foreground])
    rects.append(Element("rect", {"width": width, "height": height, "fill": "url(#s)"}))
    blur = Element("filter", {"id": "blur"}, [Element("feGaussianBlur", {"stdDeviation": "16"})])
    gradient = Element(
        "linearGradient",
        {"id": "s", "x2": 0, "y2": "100%"},
        [
            Element("stop", {"offset": 0, "stop-color": "#bbb", "stop-opacity": ".1"}),
            Element("stop", {"offset": 1, "stop-opacity": ".1"}),
        ],
    )
    clip = Element("clipPath", {"id": "r"}, [Element("rect", {"width": width, "height": height, "rx": 3})])
    background = Element("g", {"clip-path": "url(#r)"}, rects)
    return _svg(label, message, width, height, [blur, gradient, clip, background, foreground])


def _for_the_badge(label: str, message: str, color: str, label_color: str) -> str:
    font_size, height, margin, spacing = 10, 28, 12, 1.25
    label, message = label.upper(), message.upper()
    label_width = int(width_of(label, "10px Verdana")) + spacing * _js_length(label) if label else 0
    message_width = int(width_of(message, "bold 10px Verdana")) + spacing * _js_length(message) if message else 0
    has_label = bool(label)
    label_min_x = margin
    if has_label:
        label_rect = label_min_x + label_width + margin
        message_min_x = label_rect + margin
    else:
        label_rect = 0
        message_min_x = margin
    message_rect = 2 * margin + message_width
    children: list[Node] = [""]
    if has_label:
        text_color, _shadow = _colors_for(label_color)
        x = 10 * (label_min_x + 0.5 * label_width)
        attrs: dict[str, Value] = {"transform": SCALE_DOWN, "x": x, "y": 175, "textLength": 10 * label_width}
        children.append(Element("text", _with_fill(attrs, text_color), [label]))
    text_color, _shadow = _colors_for(color)
    x = 10 * (message_min_x + 0.5 * message_width)
    attrs = {"transform": SCALE_DOWN, "x": x, "y": 175, "textLength": 10 * message_width, "font-weight": "bold"}
    children.append(Element("text", _with_fill(attrs, text_color), [message]))
    rects: list[Node] = []
    if has_label:
        rects.append(Element("rect", {"width": label_rect, "height": height, "fill": label_color}))
        rects.append(Element("rect", {"x": label_rect, "width": message_rect, "height": height, "fill": color}))
    else:
        rects.append(Element("rect", {"width": message_rect, "height": height, "fill": color}))
    background = Element("g", {"shape-rendering": "crispEdges"}, rects)
    foreground = Element(
        "g",
        {
            "fill": WHITE,
            "text-anchor": "middle",
            "font-family": FONT_FAMILY,
            "text-rendering": "geometricPrecision",
            "font-size": 10 * font_size,
        },
        children,
    )
    accessible_label = label
    return _svg(accessible_label, message, label_rect + message_rect, height, [background, foreground])


def render_svg(
    label: str, message: str, color: str = "brightgreen", *, label_color: str = "grey", style: Style = "flat"
) -> str:
    """The badge SVG, as ``badge-maker`` 6.0.0 ``makeBadge({label, message, color, labelColor, style})`` draws it.

    Raises:
        UnknownStyle: ``style`` is not one of :data:`STYLES`.
        UnknownColor: a colour is neither a palette name, an alias nor hex.
    """
    label, message = label.strip(_JS_SPACE), message.strip(_JS_SPACE)
    fill, label_fill = to_svg_color(color), to_svg_color(label_color)
    if style == "flat":
        return _flat(label, message, fill, label_fill, square=False)
    if style == "flat-square":
        return _flat(label, message, fill, label_fill, square=True)
    if style == "for-the-badge":
        return _for_the_badge(label, message, fill, label_fill)
    raise UnknownStyle(style)
