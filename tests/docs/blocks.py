"""The fenced code blocks of the README and the documentation pages, with the marker each carries.

The convention (``docs/development.md``, "Code blocks that readers paste are run"): every fenced
block names its language; every block of a language a reader runs (:data:`RUNNABLE`) carries
one marker, an HTML comment on a line of its own in the run of comment lines just above its
opening fence:

- ``<!-- run -->``: run by ``tests/docs/test_blocks.py`` as written;
- ``<!-- run: install -->``: the README's install block (the test links the installed virtualenv
  instead);
- ``<!-- run: stop -->``: run after every other run block (it stops what the quickstart started);
- ``<!-- run elsewhere: PATH (why) -->``: run by the test at ``PATH``;
- ``<!-- not run: why -->``: not run, for the reason given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

#: Languages whose blocks a reader runs: each such block carries a marker.
RUNNABLE = frozenset({"sh", "bash", "shell", "console", "python"})

#: Pages the convention does not cover: generated from code, not written by hand.
GENERATED = frozenset({"docs/settings.md"})

MARKER = re.compile(r"^<!-- (run|run: install|run: stop|run elsewhere: (?P<path>\S+)( .*)?|not run: .+) -->$")
COMMENT = re.compile(r"^<!--.*-->$")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text and its marker (``None``: none)."""

    page: str
    line: int
    language: str
    code: str
    marker: str | None

    @property
    def kind(self) -> str | None:
        """``run``, ``install``, ``stop``, ``elsewhere``, ``not run``, or ``None``."""
        if self.marker is None:
            return None
        if self.marker.startswith("not run:"):
            return "not run"
        if self.marker.startswith("run elsewhere:"):
            return "elsewhere"
        return {"run": "run", "run: install": "install", "run: stop": "stop"}[self.marker]

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[str]:
    """The README, then every page of the navigation in its order (each once), then any other page."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    ordered: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            ordered.append(f"docs/{node}")
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    others = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "docs").glob("*.md"))
    listed = ["README.md", *dict.fromkeys(ordered), *(page for page in others if page not in ordered)]
    return [page for page in listed if page not in GENERATED]


def markers_above(lines: list[str], index: int) -> list[str]:
    """The comment lines just above line ``index`` (no blank line between), nearest last."""
    found: list[str] = []
    at = index - 1
    while at >= 0 and COMMENT.match(lines[at].strip()):
        found.insert(0, lines[at].strip())
        at -= 1
    return found


def blocks(page: str) -> list[Block]:
    """Every fenced block of ``page`` (a path relative to the repository)."""
    lines = (ROOT / page).read_text("utf-8").splitlines()
    found: list[Block] = []
    at = 0
    while at < len(lines):
        opening = FENCE.match(lines[at])
        if opening is None:
            at += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        end = at + 1
        while end < len(lines) and not (
            lines[end].strip().startswith(fence[0] * len(fence)) and lines[end].strip().strip(fence[0]) == ""
        ):
            end += 1
        code = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[at + 1 : end])
        marks = [line for line in markers_above(lines, at) if MARKER.match(line)]
        marker = marks[-1][len("<!-- ") : -len(" -->")] if marks else None
        language = opening["info"].strip().split(" ")[0] if opening["info"].strip() else ""
        found.append(Block(page, at + 1, language, code + "\n", marker))
        if len(marks) > 1:
            raise ValueError(f"{page}:{at + 1}: more than one marker above one block: {marks}")
        at = end + 1
    return found


def stray_markers(page: str) -> list[int]:
    """Lines of ``page`` holding a marker that stands above no fenced block."""
    lines = (ROOT / page).read_text("utf-8").splitlines()
    attached: set[int] = set()
    for index, line in enumerate(lines):
        if FENCE.match(line):
            at = index - 1
            while at >= 0 and COMMENT.match(lines[at].strip()):
                attached.add(at)
                at -= 1
    inside = False
    stray = []
    for index, line in enumerate(lines):
        if FENCE.match(line):
            inside = not inside
        elif not inside and MARKER.match(line.strip()) and index not in attached:
            stray.append(index + 1)
    return stray


def all_blocks() -> list[Block]:
    """The blocks of every page, pages in :func:`pages` order."""
    return [block for page in pages() for block in blocks(page)]
