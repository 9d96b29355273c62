"""Parsing untrusted JSON without letting its shape hurt the process.

Policy: a document nested deeper than ``max_depth`` is refused *before* ``json.loads`` sees it.
The C decoder recurses once per level and relies on the interpreter's recursion limit to stop;
a library that raises that limit (some compilers and tool chains do) would turn a body of
100,000 ``[`` into a crash of the whole process. The scan is linear and skipped for documents
with too few brackets to be deep.

A ``\ud800`` escape with no partner is valid JSON text (RFC 8259 section 8.2 leaves its meaning
open; I-JSON, RFC 7493 section 2.1, forbids it) and becomes a ``str`` that cannot be encoded as
UTF-8, so a store or a log line fails on it later: :func:`has_lone_surrogate` finds one in a
parsed value, to refuse it as the caller's input.

An integer literal longer than Python's safe conversion limit (4,300 digits) would make
``json.loads`` refuse the whole document; it is read as a float instead (infinite when out of
range), so one absurd number costs only what holds it (a canonical form refuses it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
_OPEN = frozenset(b"[{")
_CLOSE = frozenset(b"]}")


class TooDeep(ValueError):
    """The document nests deeper than allowed."""


class DuplicateKey(ValueError):
    """An object of the document gives a key twice (RFC 8259 section 4 leaves it undefined)."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An ``object_pairs_hook`` that refuses an object giving a key twice (:class:`DuplicateKey`)."""
    made = dict(pairs)
    if len(made) != len(pairs):
        raise DuplicateKey("a key appears twice")
    return made


def _depth_exceeds(raw: bytes, limit: int) -> bool:
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in _OPEN:
            depth += 1
            if depth > limit:
                return True
        elif byte in _CLOSE:
            depth -= 1
    return False


def too_deep(raw: bytes, max_depth: int = MAX_DEPTH) -> bool:
    """Whether ``raw`` nests deeper than ``max_depth`` (linear; strings are skipped)."""
    return _depth_exceeds(raw, max_depth)


def loads(
    raw: bytes | str,
    max_depth: int = MAX_DEPTH,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``json.loads`` for untrusted input.

    Raises:
        TooDeep: nested deeper than ``max_depth``.
        ValueError: not JSON.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _depth_exceeds(data, max_depth):
        raise TooDeep(f"JSON nested deeper than {max_depth} levels")
    return json.loads(data, parse_int=_integer, object_pairs_hook=object_pairs_hook)


def has_lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in ``value`` (keys included) holds a surrogate code point."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")  # (a surrogate is the one code point UTF-8 cannot encode)
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return False


def _integer(text: str) -> int | float:
    return int(text) if len(text) <= _INT_DIGITS else float(text)


_INT_DIGITS = 4000
