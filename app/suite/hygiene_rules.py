"""The hygiene rules (``hygiene_rules.yaml``), compiled once: what :mod:`app.suite.hygiene` runs.

Each rule has a kind (``chars``, ``max_length``, ``pattern``, ``confusable``, ``charset``), the
targets it reads and its parameters; the YAML's header explains them. A folded pattern loses its
leading ``\\b`` (checked by hand after the match, which keeps ``re``'s literal prefix scan) and
gets *anchors*: the first letters of the word every match begins, read from its leading literal
or group of literal alternatives, so a tool whose text has no such word skips the pattern.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final

import yaml

TARGETS: Final = ("name", "title", "description", "property_names", "schema_text")


@dataclass(frozen=True, slots=True)
class Pattern:
    """One compiled pattern: ``regex``, or ``regex`` preceded within ``within`` characters by ``first``."""

    regex: re.Pattern[str]
    word_start: bool = False  # the match must not begin right after a letter, digit or _
    first: re.Pattern[str] | None = None
    first_word_start: bool = False
    within: int = 0
    anchors: frozenset[str] | None = None  # a match starts a word beginning with one of these (1-3 letters)


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of ``hygiene_rules.yaml``, compiled."""

    id: str
    kind: str
    targets: tuple[str, ...]
    meaning: str
    patterns: tuple[Pattern, ...] = ()
    folded: bool = False  # a pattern rule that matches the folded text
    max_chars: int = 0
    unless_after: tuple[str, ...] = ()  # words a match must not follow
    ranges: tuple[tuple[int, int], ...] = ()  # a chars rule's code point ranges


def char_class(ranges: Sequence[tuple[int, int]]) -> str:
    return "[" + "".join(f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges) + "]"


def _compile(source: str, folded: bool) -> tuple[re.Pattern[str], bool]:
    """A folded pattern loses its leading \\b (checked by hand) and IGNORECASE: both stop re's prefix scan."""
    if folded and any(ch.isupper() for ch in re.sub(r"\\.", "", source)):
        raise ValueError(f"folded patterns are written in lower case: {source}")
    cut = folded and source.startswith("\\b")
    return re.compile(source[2:] if cut else source, 0 if folded else re.IGNORECASE), cut


_LITERAL = re.compile(r"[a-z0-9]+")


def _alternatives(body: str) -> list[str] | None:
    """The top-level alternatives of a group body, or ``None`` when the group does not close."""
    parts: list[str] = []
    depth = start = i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return [*parts, body[start:i]]
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
        i += 1
    return None


def _anchors(source: str) -> frozenset[str] | None:
    """The first letters (at most 3) of the word every match of a cut folded pattern starts with.

    Read from the pattern's leading literal or leading group of literal alternatives; ``None``
    when it has neither (then the pattern is always searched). Exact as a gate: a match of such a
    pattern begins a word, and that word begins with one of the anchors.
    """
    body = source[2:] if source.startswith("\\b") else source
    alternatives = _alternatives(body[3:]) if body.startswith("(?:") else [body]
    if alternatives is None:
        return None
    anchors: set[str] = set()
    for alternative in alternatives:
        literal = _LITERAL.match(alternative)
        if literal is None:
            return None
        anchors.add(literal.group(0)[:3])
    return frozenset(anchors)


def _pattern(source: object, folded: bool) -> Pattern:
    if isinstance(source, Mapping):
        then = str(source["then"])
        (regex, cut), (first, first_cut) = _compile(then, folded), _compile(str(source["first"]), folded)
        return Pattern(regex, cut, first, first_cut, int(source["within"]), _anchors(then) if cut else None)
    regex, cut = _compile(str(source), folded)
    return Pattern(regex, cut, anchors=_anchors(str(source)) if cut else None)


def compile_rule(entry: Mapping[str, Any]) -> Rule:
    kind, targets, rule_id = str(entry["kind"]), tuple(str(t) for t in entry["targets"]), str(entry["id"])
    if not targets or set(targets) - set(TARGETS):
        raise ValueError(f"rule {rule_id}: unknown targets {targets}")
    folded = kind == "pattern" and entry.get("text", "folded") == "folded"
    ranges = tuple((int(lo[2:], 16), int(hi[2:], 16)) for lo, hi in entry.get("ranges", ()))
    patterns: tuple[Pattern, ...] = ()
    if kind == "chars":
        patterns = (Pattern(re.compile(char_class(ranges) + "+")),)  # the whole run, for the excerpt
    elif kind == "pattern":
        patterns = tuple(_pattern(source, folded) for source in entry["patterns"])
    elif kind == "charset":
        patterns = (Pattern(re.compile(str(entry["allowed"]))),)
    elif kind not in ("max_length", "confusable"):
        raise ValueError(f"rule {rule_id}: unknown kind {kind}")
    unless_after = tuple(str(word) for word in entry.get("unless_after", ()))
    meaning, max_chars = str(entry["meaning"]), int(entry.get("max_chars", 0))
    return Rule(rule_id, kind, targets, meaning, patterns, folded, max_chars, unless_after, ranges)


def _load() -> tuple[Rule, ...]:
    document = yaml.safe_load(resources.files("app.suite").joinpath("hygiene_rules.yaml").read_text("utf-8"))
    rules = tuple(compile_rule(entry) for entry in document["rules"])
    if len({rule.id for rule in rules}) != len(rules):
        raise ValueError("hygiene rule ids must be unique")
    return rules


RULES: Final = _load()
