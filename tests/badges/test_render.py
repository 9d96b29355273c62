"""The renderer against shields' own badge-maker 6.0.0 (npm, pinned in tests/npm), run through Node."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from badges import STYLES, UnknownColor, UnknownStyle, render_svg
from badges.widths import width_of
from tests.servers.node import MODULES, require

BADGE_MAKER = MODULES / "badge-maker" / "package.json"

LABELS = [
    "MCP",
    "",
    "mcp server",
    "Ünïcødé",
    "a&b",
    "<script>",
    "\"quoted\" 'single'",
    "日本語",
    "emoji 🚀",
    "  spaced  ",
]
MESSAGES = [
    "live · checked 2026-10-10",
    "auth required",
    "unreachable",
    "not MCP",
    "TLS error",
    "x < y > z & w",
    "</text><script>alert(1)</script>",
    "tab\there",
    "ñandú çava",
    "a",
]
COLORS = ["brightgreen", "yellow", "lightgrey", "red", "fff", "#e7e7e7", "blue", "inactive"]


def cases() -> list[dict[str, str]]:
    found = []
    for i, label in enumerate(LABELS):
        for j, message in enumerate(MESSAGES):
            if (i + j) % 2:
                continue
            found.append(
                {
                    "label": label,
                    "message": message,
                    "color": COLORS[(i + j) % len(COLORS)],
                    "style": STYLES[(i * 3 + j) % 3],
                }
            )
    found += [
        {"label": "MCP", "message": m, "color": c, "style": s}
        for m, c in (
            ("live · checked 2026-10-10", "brightgreen"),
            ("auth required", "yellow"),
            ("unreachable", "lightgrey"),
        )
        for s in STYLES
    ]
    return found


def badge_maker(batch: list[dict[str, str]]) -> list[str]:
    require(BADGE_MAKER)
    script = (
        "import('badge-maker').then(m => { const input = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        " process.stdout.write(JSON.stringify(input.map(c => m.makeBadge(c)))) })"
    )
    completed = subprocess.run(
        ["node", "-e", script],
        input=json.dumps(batch),
        capture_output=True,
        text=True,
        cwd=MODULES.parent,
        timeout=60,
        check=True,
    )
    result: list[str] = json.loads(completed.stdout)
    return result


def test_identical_to_badge_maker() -> None:
    batch = cases()
    assert len(batch) >= 50
    expected = badge_maker(batch)
    mismatches = [
        (case, mine, theirs)
        for case, theirs in zip(batch, expected, strict=True)
        if (mine := render_svg(case["label"], case["message"], case["color"], style=case["style"])) != theirs  # type: ignore[arg-type]
    ]
    assert mismatches == []


def test_untrusted_text_never_becomes_markup() -> None:
    svg = render_svg("<b>", "</text><script>alert(1)</script>", "red")
    assert "<script" not in svg and "&lt;script&gt;" in svg
    assert svg.count("<text") == svg.count("</text>")


def test_known_widths() -> None:
    assert (int(width_of("MCP")), int(width_of("unreachable")), int(width_of("auth required"))) == (23, 67, 74)


def test_bad_style_and_color() -> None:
    with pytest.raises(UnknownStyle):
        render_svg("a", "b", style="plastic")  # type: ignore[arg-type]
    with pytest.raises(UnknownColor):
        render_svg("a", "b", "url(#x)")


def test_package_has_no_web_code() -> None:
    source = "".join(p.read_text() for p in Path("badges").glob("*.py"))
    assert "starlette" not in source and "httpx" not in source


def test_escape_replaces_characters_xml_forbids() -> None:
    import xml.etree.ElementTree as ET

    from badges.render import render_svg

    svg = render_svg("MCP", "a\x00b\x1bc\ud800d\ufffe", "red")
    ET.fromstring(svg.encode("utf-8"))  # well-formed, encodable
    assert "\x00" not in svg and "\ud800" not in svg
