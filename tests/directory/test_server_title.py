"""The name a server gives itself, from the serverInfo its stored run recorded."""

from __future__ import annotations

import json
import zlib

from app.directory.rows import server_title


def test_the_title_else_the_name_of_server_info() -> None:
    assert server_title(stored({"server": {"name": "eat", "title": "Eat"}})) == "Eat"
    assert server_title(stored({"server": {"name": "eat", "title": None}})) == "eat"
    for nameless in (stored({"server": None}), stored({"server": {"name": " "}}), stored([]), b"not zlib", None):
        assert server_title(nameless) is None


def stored(document: object) -> bytes:
    """A result as the history stores it (zlib-compressed JSON)."""
    return zlib.compress(json.dumps(document).encode())
