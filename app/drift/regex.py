"""Regular expressions of ``pattern`` and ``patternProperties``, run only where it is safe.

JSON Schema 2020-12 (validation, section 6.3.3; core, section 6.4) says ECMA-262 regular
expressions, unanchored. This module runs them with Python's ``re`` (as the ``jsonschema``
package does) under three limits, and answers ``None`` ("cannot tell") outside them:

- the subject is at most as long as the pattern's backtracking allows (:func:`longest`): for a
  subject of ``n`` characters a match may try about ``n`` times the product, over every repeat,
  of ``min(width, n) + 1`` (the width of ``*``/``+`` is ``n``, of ``{m,k}`` ``k - m``), and that
  bound must stay under :data:`MAX_COST`; the longest of :data:`SUBJECTS` that keeps it there is
  taken (a pattern no subject of :data:`MIN_SUBJECT` characters keeps under it never runs).
  Narrow repeats count too: ``a{0,16}`` six times over is 17**6 tries per start, a service-wide
  stall under Python's ``re``, which holds the GIL for the whole match. The subject has no line
  break when the pattern
  has a ``$`` (Python's ``$`` also matches before a final newline, ECMA-262's does not), and is
  ASCII when the pattern uses ``\\d``, ``\\w`` or ``\\b`` (Unicode classes in Python, ASCII in
  ECMA-262);
- the pattern compiles, has no backreference, no repeated group that itself repeats or
  alternates (the shape of catastrophic backtracking: ``(a+)+``, ``(a|aa)*``) and at most
  :data:`MAX_UNBOUNDED` wide repeats (unbounded, or ranges over :data:`WIDE` apart), so a
  match costs at most a small polynomial of a short subject;
- compiled patterns are cached (:data:`CACHE` of them).

:func:`example` writes one string a simple pattern matches (the first alternative, each repeat
at its minimum), for building example instances; whatever it writes is checked by a search.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache
from typing import Any

MAX_SUBJECT = 32
MAX_UNBOUNDED = 3
#: A bounded repeat wider than this (``{0,100}``) counts as unbounded.
WIDE = 16
#: Subject lengths tried, longest first; the shortest a pattern may run on.
SUBJECTS = (256, 128, 64, MAX_SUBJECT, 16)
MIN_SUBJECT = SUBJECTS[-1]
#: The most backtracking steps (the bound of the module docs) one search may take: milliseconds.
MAX_COST = 200_000
CACHE = 512
#: The parser ``re.compile`` runs (CPython's ``re._parser``), so repeats are read as they will run.
sre_parse: Any = importlib.import_module("re._parser")
_CLASS_ESCAPES = re.compile(r"\\[dDwWbB]")
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")


def _class_end(pattern: str, start: int) -> int:
    """The index after the ``]`` closing the class opened at ``start``; -1 when unclosed."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return -1


_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_NESTS = frozenset({"SUBPATTERN", "ATOMIC_GROUP", "ASSERT", "ASSERT_NOT"})
_REFERS = frozenset({"GROUPREF", "GROUPREF_EXISTS", "GROUPREF_IGNORE", "GROUPREF_LOC_IGNORE", "GROUPREF_UNI_IGNORE"})


class _Risky(Exception):
    """A shape of catastrophic backtracking, or a reference back."""


def _walk(items: Any, widths: list[int | None]) -> bool:
    """Add the widths of ``items`` (a parsed sequence) to ``widths``; whether it repeats or branches."""
    varies = False
    for op, arg in items:
        name = str(op)
        if name in _REFERS:
            raise _Risky
        if name in _REPEATS:
            low, high, inner = arg
            inner_varies = _walk(inner, widths)
            if inner_varies and high > 1:  # a repeated group that itself repeats or branches
                raise _Risky
            if high != low:
                widths.append(None if high == sre_parse.MAXREPEAT else high - low)
                varies = True
            varies = varies or inner_varies
        elif name == "BRANCH":
            _none, branches = arg
            widths.append(len(branches) - 1)
            for branch in branches:
                _walk(branch, widths)
            varies = True
        elif name in _NESTS:
            inner = arg[-1] if isinstance(arg, tuple) else arg
            varies = _walk(inner, widths) or varies
    return varies


def _repeats(pattern: str) -> list[int | None] | None:
    """The width of every repeat of a pattern as Python's own parser reads it (``None``:
    unbounded; an alternation of ``k`` branches counts as a repeat of width ``k - 1``), or
    ``None`` when it does not parse, may backtrack badly or refers back (see the module docs).
    The parser is the one ``re.compile`` runs, so every spelling of a repeat it accepts
    (``{,16}``, possessive and lazy forms) is counted as it will run."""
    widths: list[int | None] = []
    try:
        _walk(sre_parse.parse(pattern), widths)
    except (_Risky, re.error, OverflowError, RecursionError, ValueError, TypeError):
        return None
    return widths


def _cost(widths: list[int | None], length: int) -> int:
    cost = length
    for width in widths:
        cost *= (length if width is None else min(width, length)) + 1
        if cost > MAX_COST:
            break
    return cost


@lru_cache(maxsize=CACHE)
def longest(pattern: str) -> int:
    """The longest subject :func:`search` runs ``pattern`` on (0: none; see the module docs)."""
    widths = _repeats(pattern)
    if widths is None or sum(w is None or w > WIDE for w in widths) > MAX_UNBOUNDED:
        return 0
    return next((length for length in SUBJECTS if _cost(widths, length) <= MAX_COST), 0)


def risky(pattern: str) -> bool:
    """Whether ``pattern`` may backtrack badly or refers back (see the module docs)."""
    return longest(pattern) == 0


@lru_cache(maxsize=CACHE)
def _compile(pattern: str) -> re.Pattern[str] | None:
    if len(pattern) > 1024 or risky(pattern):
        return None
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return None


def supported(pattern: str) -> bool:
    """Whether :func:`search` may run ``pattern`` at all."""
    return _compile(pattern) is not None


def search(pattern: str, subject: str) -> bool | None:
    """Whether ``pattern`` matches somewhere in ``subject``; ``None`` when it cannot be told safely."""
    if len(subject) > longest(pattern):
        return None
    if "\n" in subject and "$" in pattern:
        return None
    if not subject.isascii() and _CLASS_ESCAPES.search(pattern):
        return None
    compiled = _compile(pattern)
    if compiled is None:
        return None
    return compiled.search(subject) is not None


def literal_prefix(pattern: str) -> str | None:
    """The literal text every match starts with, for a pattern anchored by ``^`` without ``|``."""
    if not pattern.startswith("^") or "|" in pattern:
        return None
    out: list[str] = []
    i = 1
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            char, step = pattern[i + 1], 2
        elif char.isalnum() or char in "_-:/@ ":
            step = 1
        else:
            break
        if i + step < len(pattern) and pattern[i + step] in "*+?{":
            break
        out.append(char)
        i += step
    return "".join(out)


def disjoint(first: str, second: str) -> bool:
    """Whether no name can match both patterns (shown by their literal prefixes only)."""
    a, b = literal_prefix(first) or "", literal_prefix(second) or ""
    return bool(a) and bool(b) and not (a.startswith(b) or b.startswith(a))


class _Unwritable(Exception):
    """A pattern :func:`example` does not write."""


_ESCAPE_TEXT = {"d": "0", "w": "a", "s": " ", "D": "a", "W": "-", "S": "a", "n": "\n", "t": "\t"}
_PROBES = "a0_-A .x"


def _class_text(body: str) -> str:
    """One character of a character class body (``a-z0-9``, ``^...``)."""
    negated = body.startswith("^")
    members = body[1:] if negated else body
    singles: set[str] = set()
    ranges: list[tuple[str, str]] = []
    i = 0
    while i < len(members):
        char = members[i]
        if char == "\\" and i + 1 < len(members):
            char = _ESCAPE_TEXT.get(members[i + 1], members[i + 1])
            i += 1
        if i + 2 < len(members) and members[i + 1] == "-" and members[i + 2] != "\\":
            ranges.append((char, members[i + 2]))
            i += 3
            continue
        singles.add(char)
        i += 1
    if not negated:
        if ranges:
            return ranges[0][0]
        if singles:
            return sorted(singles)[0]
        raise _Unwritable
    for probe in _PROBES:
        if probe not in singles and not any(low <= probe <= high for low, high in ranges):
            return probe
    raise _Unwritable


def _sequence(pattern: str, i: int, depth: int) -> tuple[str, int]:
    """The text of the first alternative from ``i`` to the closing ``)`` or the end."""
    if depth > 16:
        raise _Unwritable
    chosen: list[str] | None = None
    out: list[str] = []
    while i < len(pattern) and pattern[i] != ")":
        char = pattern[i]
        if char == "|":
            chosen = out if chosen is None else chosen
            out, i = [], i + 1
            continue
        if char in "^$":
            atom, i = "", i + 1
        elif char == ".":
            atom, i = "a", i + 1
        elif char == "\\":
            if i + 1 >= len(pattern):
                raise _Unwritable
            letter = pattern[i + 1]
            atom = "" if letter in "bB" else _ESCAPE_TEXT.get(letter, letter)
            if letter.isalnum() and letter not in _ESCAPE_TEXT and letter not in "bB":
                raise _Unwritable
            i += 2
        elif char == "[":
            end = _class_end(pattern, i)
            if end < 0:
                raise _Unwritable
            atom, i = _class_text(pattern[i + 1 : end - 1]), end
        elif char == "(":
            i += 1
            look = pattern.startswith(("?=", "?!", "?<=", "?<!"), i)
            if pattern.startswith("?:", i):
                i += 2
            elif pattern.startswith(("?P<", "?<"), i) and not look:
                i = pattern.index(">", i) + 1
            elif pattern.startswith("?", i) and not look:
                raise _Unwritable
            atom, i = _sequence(pattern, i, depth + 1)
            if i >= len(pattern):
                raise _Unwritable
            i += 1
            atom = "" if look else atom
        elif char in "*+?{":
            raise _Unwritable
        else:
            atom, i = char, i + 1
        times = 1
        if i < len(pattern) and pattern[i] in "*+?":
            times = 1 if pattern[i] == "+" else 0
            i += 1
        elif i < len(pattern) and pattern[i] == "{" and (match := _QUANTIFIER.match(pattern, i)):
            times = int(match.group(1))
            i = match.end()
        if i < len(pattern) and pattern[i] == "?":
            i += 1
        out.append(atom * min(times, 64))
    return "".join(chosen if chosen is not None else out), i


def example(pattern: str) -> str | None:
    """One string that a simple ``pattern`` likely matches (check it with :func:`search`)."""
    try:
        text, end = _sequence(pattern, 0, 0)
    except (_Unwritable, ValueError, IndexError):
        return None
    return text if end == len(pattern) and len(text) <= 256 else None
