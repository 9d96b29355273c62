"""Tool-description hygiene: tool definitions that try to steer the agent instead of describing a tool.

Policy: a tool list is untrusted input that lands in an agent's context, so every text of a tool
the model reads is scanned: name, titles, description, and the property names and strings of its
input and output schemas. The rules are data (``hygiene_rules.yaml``, loaded once); this module
interprets their kinds (``chars``, ``max_length``, ``pattern``, ``confusable``, ``charset``). Rules
match the raw text, since cleaning removes the very characters some look for; phrase rules match
a folded copy (invisible characters dropped, tag characters read as the ASCII they hide, NFKC,
whitespace collapsed, lower case) so simple obfuscation does not hide a phrase. A finding names
the rule, the tool (cleaned) and a cleaned excerpt of at most 200 characters around the match, with
invisible, format and private-use characters as ``<U+XXXX>`` and tag runs as the text they encode.

Bounds: at most 2,000 tools (as many as the probe keeps) and 2 Mi characters of text per list:
64 Ki of a tool while the first 1 Mi lasts (18 times the largest real list of the corpus), then
4 Ki of each further tool (a longer description is flagged anyway) until the other 1 Mi is spent,
then names alone; schemas are walked iteratively, to depth 32 and 4,096 nodes; the length rule
sees the full length; matching is linear in the text. No input - entries that are not objects,
fields of the wrong type, lone surrogates, huge or deep values - makes the scan raise.
"""

from __future__ import annotations

import hashlib
import logging
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, Final

from confusable_homoglyphs import confusables  # type: ignore[import-untyped]

from app.probe.text import clean_text
from app.suite.hygiene_rules import RULES, TARGETS, Pattern, Rule, char_class
from app.suite.memo import Memo
from app.textruns import cut_mark_runs

log = logging.getLogger(__name__)

MAX_TOOLS: Final = 2000
MAX_TOOL_TEXT: Final = 64 * 1024
MIN_TOOL_TEXT: Final = 4 * 1024
MAX_LIST_TEXT: Final = 2 * 1024 * 1024
LIST_RESERVE: Final = 1024 * 1024  # the part of the list's text kept for MIN_TOOL_TEXT per tool
MAX_NAME: Final = 1024
MAX_SCHEMA_DEPTH: Final = 32
MAX_SCHEMA_NODES: Final = 4096
EXCERPT_LEN: Final = 200
_IDENTIFIERS: Final = frozenset({"name", "property_names"})
_TAGS: Final = range(0xE0020, 0xE007F)  # tag characters that encode printable ASCII
_SEP: Final = "\uffff"  # joins the pieces of a target (a noncharacter, dropped from folded text)


@dataclass(frozen=True, slots=True)
class HygieneFinding:
    """One rule that matched one tool."""

    rule: str  # a rule id of hygiene_rules.yaml
    tool: str  # the tool's name, cleaned (``""`` when it has none)
    excerpt: str  # at most 200 cleaned characters around the match


_HIDDEN_RANGES: Final = tuple(r for rule in RULES for r in rule.ranges)
_HIDDEN: Final = re.compile(char_class(_HIDDEN_RANGES))  # what an excerpt never shows raw
_ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Folding drops the invisible and bidi characters (not controls, surrogates or private use: other
# rules report those), reads tags as ASCII, makes typographic quotes plain and drops emphasis.
_FOLD: Final[dict[int, str | None]] = {
    **{c: None for lo, hi in _HIDDEN_RANGES if hi - lo < 0x400 and lo >= 0xA0 for c in range(lo, hi + 1)},
    **{c: chr(c - 0xE0000) for c in _TAGS},
    **dict.fromkeys((0x2018, 0x2019), "'"),
    **dict.fromkeys((0x201C, 0x201D), '"'),
    **dict.fromkeys((ord("*"), ord(_SEP))),
}
_SPACES: Final = re.compile(r"\s+")
_WORD: Final = re.compile(r"[^\W_]+")  # a match of a cut pattern starts one of these (see _after_word)
_HUMPS: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_JOINERS: Final = re.compile(r"[_.\-]+")


def fold(text: str, identifier: bool = False) -> str:
    """The copy phrase rules match, before lower-casing: see the module docs."""
    if identifier:
        text = _JOINERS.sub(" ", _HUMPS.sub(" ", text))
    if text.isascii():  # NFKC and the folding table change nothing in ASCII but the emphasis stars
        return _SPACES.sub(" ", text.replace("*", ""))
    # (runs of marks cut first: NFKC takes time quadratic in their length, app.textruns)
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", cut_mark_runs(text).translate(_FOLD)))


def _visible(text: str) -> str:
    """``text`` with hidden characters as ``<U+XXXX>`` escapes, tag runs decoded, long runs counted."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch, j = text[i], i + 1
        if ord(ch) in _TAGS:
            while j < len(text) and ord(text[j]) in _TAGS:
                j += 1
            out.append('<tags "' + "".join(chr(ord(c) - 0xE0000) for c in text[i:j]) + '">')
        else:
            while j < len(text) and text[j] == ch:
                j += 1
            hidden = _HIDDEN.match(ch) or (unicodedata.category(ch) in _ESCAPED_CATEGORIES and not ch.isspace())
            if hidden or (ch.isspace() and j - i > 8):
                out.append(f"<U+{ord(ch):04X}>" if j - i == 1 else f"<U+{ord(ch):04X} ×{j - i}>")
            else:
                out.append(" " if ch.isspace() else ch * (j - i))
        i = j
    return "".join(out)


def _excerpt(text: str, start: int, end: int) -> str:
    """At most 200 visible, cleaned characters of ``text`` around ``text[start:end]``."""
    match = _visible(text[start : min(end, start + 400)])
    if len(match) > 120:
        match = match[:119] + "…"
    room = EXCERPT_LEN - len(match)
    before = _visible(text[max(0, start - 100) : start])[-(room // 2) :] if room >= 2 else ""
    after = _visible(text[end : end + 100])[: max(0, room - len(before))]
    if before.find(">") < before.find("<") or ("<" not in before and ">" in before):  # a cut escape
        before = before[before.find(">") + 1 :]
    if after.rfind("<") > after.rfind(">"):
        after = after[: after.rfind("<")]
    return clean_text(before + match + after, EXCERPT_LEN) or ""


class _Texts:
    """The texts of one tool by target, cut to a budget, with their folded copies made on demand."""

    def __init__(self, tool: Mapping[str, Any], budget: int) -> None:
        self.budget = budget
        self.raw: dict[str, list[str]] = {target: [] for target in TARGETS}
        self._joined: dict[str, tuple[str, str]] = {}
        self._starts: frozenset[str] | None = None
        name, description, annotations = tool.get("name"), tool.get("description"), tool.get("annotations")
        self.name = name[:MAX_NAME] if isinstance(name, str) else ""
        self.raw["name"] = [self.name] if self.name else []
        self.description_length = len(description) if isinstance(description, str) else 0
        self._take("title", tool.get("title"))
        self._take("title", annotations.get("title") if isinstance(annotations, Mapping) else None)
        self._take("description", description)
        self._walk(tool.get("inputSchema"))
        self._walk(tool.get("outputSchema"))

    def _take(self, target: str, value: object) -> None:
        if isinstance(value, str) and value and self.budget > 0:
            self.raw[target].append(value[: self.budget])
            self.budget -= len(self.raw[target][-1])

    def _walk(self, schema: object) -> None:
        """Property names and every string of a schema, depth-first in document order, bounded."""
        stack: list[tuple[object, int, bool]] = [(schema, 0, False)]
        nodes = 0
        while stack and nodes < MAX_SCHEMA_NODES and self.budget > 0:
            node, depth, is_properties = stack.pop()
            nodes += 1
            room = max(0, MAX_SCHEMA_NODES - nodes - len(stack))  # never hold more than can be visited
            if isinstance(node, str):
                self._take("schema_text", node)
            elif depth < MAX_SCHEMA_DEPTH and isinstance(node, Mapping):
                children: list[tuple[object, int, bool]] = []
                for key, value in islice(node.items(), room):
                    if is_properties:
                        self._take("property_names", key)
                    children.append((value, depth + 1, key == "properties" and not is_properties))
                stack.extend(reversed(children))
            elif depth < MAX_SCHEMA_DEPTH and isinstance(node, list | tuple):
                stack.extend(reversed([(item, depth + 1, False) for item in islice(node, room)]))

    def digest(self) -> bytes:
        """A SHA-256 of everything a scan of this tool reads (see ``_MEMO``)."""
        digest = hashlib.sha256(f"{self.description_length}\x00{self.name}".encode("utf-8", "surrogatepass"))
        for target in TARGETS:
            digest.update(b"\x01" + target.encode())
            for piece in self.raw[target]:
                digest.update(b"\x02" + piece.encode("utf-8", "surrogatepass"))
        return digest.digest()

    def starts(self) -> frozenset[str]:
        """The first one, two and three letters of every word of the tool's folded texts.

        One set for all targets: a gate that lets a pattern through for a word found in another
        target only costs a search, never a finding.
        """
        if self._starts is None:
            words = set(_WORD.findall(_SEP.join(self.text(target, True)[1] for target in TARGETS)))
            self._starts = frozenset({w[:3] for w in words} | {w[:2] for w in words} | {w[:1] for w in words})
        return self._starts

    def text(self, target: str, folded: bool) -> tuple[str, str]:
        """The pieces of ``target`` joined by _SEP: the text an excerpt is cut from, the text matched."""
        key = f"{target}/{folded}"
        if key not in self._joined:
            if not folded:
                joined = _SEP.join(self.raw[target])
                self._joined[key] = (joined, joined)
            else:  # an excerpt keeps the case unless lower-casing moved the offsets
                shown = _SEP.join(fold(piece, target in _IDENTIFIERS) for piece in self.raw[target])
                matched = shown.lower()
                self._joined[key] = (shown if len(shown) == len(matched) else matched, matched)
        return self._joined[key]


def _after_word(text: str, start: int) -> bool:
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def _find(pattern: Pattern, text: str) -> Iterator[tuple[int, int]]:
    """The spans of ``pattern`` within one piece of ``text``; a two-part one spans from its ``first``.

    ``first`` is matched once over the whole text, on the first match of the rest, and each match
    is paired with the closest ``first`` that ends before it: linear, however the text repeats.
    """
    firsts: list[tuple[int, int]] | None = None
    pos = 0
    while (found := pattern.regex.search(text, pos)) is not None:
        start, end = found.span()
        pos, across = max(end, start + 1), text.find(_SEP, start, end)
        if across >= 0:  # a match across two pieces: look again from the second
            pos = across + 1
            continue
        if pattern.word_start and _after_word(text, start):
            continue
        if pattern.first is not None:
            if firsts is None:
                firsts = [(near.start(), near.end()) for near in pattern.first.finditer(text)]
                firsts = [span for span in firsts if not (pattern.first_word_start and _after_word(text, span[0]))]
            index = bisect_right(firsts, start, key=lambda span: span[1]) - 1
            gap = text[firsts[index][1] : start] if index >= 0 else ""
            if index < 0 or len(gap) > pattern.within or ". " in gap or _SEP in gap:
                continue
            start = firsts[index][0]
        yield start, end


def _search(rule: Rule, texts: _Texts) -> str | None:
    """The excerpt of the first match of a regex rule in its targets, if any."""
    ascii_only = rule.kind == "chars" and all(lo >= 0x80 for lo, _ in rule.ranges)
    for target in rule.targets:
        shown, matched = texts.text(target, rule.folded)
        if not matched or (ascii_only and matched.replace(_SEP, "").isascii()):
            continue
        for pattern in rule.patterns:
            if pattern.anchors is not None and pattern.anchors.isdisjoint(texts.starts()):
                continue  # no word of the text starts as every match must
            for start, end in _find(pattern, matched):
                words = matched[max(0, start - 24) : start].split() if matched[start - 1 : start] == " " else []
                if not (words and words[-1] in rule.unless_after):
                    lo, hi = shown.rfind(_SEP, 0, start) + 1, shown.find(_SEP, end)
                    piece = shown[lo : hi if hi >= 0 else len(shown)]
                    return _excerpt(piece, start - lo, max(end, start + 1) - lo)
    return None


def _match(rule: Rule, texts: _Texts) -> str | None:
    """The excerpt when ``rule`` matches the tool, else ``None``."""
    if rule.kind in ("chars", "pattern"):
        return _search(rule, texts)
    if rule.kind == "max_length" and texts.description_length > rule.max_chars:
        start = _visible(texts.raw["description"][0][:120]) if texts.raw["description"] else ""
        head = f"{texts.description_length} characters: {start}"
        if len(head) > EXCERPT_LEN:  # cut, and never inside an escape
            head = head[: EXCERPT_LEN - 1]
            head = (head[: head.rfind("<")] if head.rfind("<") > head.rfind(">") else head) + "…"
        return clean_text(head, EXCERPT_LEN) or ""
    name = texts.name
    if rule.kind == "charset" and name and (len(name) > rule.max_chars or not rule.patterns[0].regex.fullmatch(name)):
        return _excerpt(name, 0, len(name))
    short = name[:256]
    if (
        rule.kind == "confusable"
        and not short.isascii()
        and bool(
            confusables.is_mixed_script(short)
            or confusables.is_dangerous(short)
            or confusables.is_confusable(short, preferred_aliases=["latin"])
        )
    ):
        return _excerpt(name, 0, len(name))
    return None


def _scan_tool(tool: Mapping[str, Any], budget: int) -> tuple[list[HygieneFinding], int]:
    texts = _Texts(tool, budget)
    key = texts.digest()
    known = _MEMO.get(key)
    if known is not None:
        return list(known[0]), known[1]
    label = clean_text(texts.name, 128) or ""
    found = [HygieneFinding(rule.id, label, excerpt) for rule in RULES if (excerpt := _match(rule, texts)) is not None]
    _MEMO.put(key, (tuple(found), budget - texts.budget))
    return found, budget - texts.budget


#: Servers list the same tools check after check: a tool's findings are remembered by a SHA-256
#: of everything a scan reads of it (the texts gathered within its budget, the name, the
#: description's length), least recently used first out (a few hundred kB at most). The texts
#: are gathered by the same bounded, iterative walk as the scan, never by a recursive encoder
#: that a hostile nesting could overflow.
_MEMO: Memo[bytes, tuple[tuple[HygieneFinding, ...], int]] = Memo(4096)


def _allowance(budget: int) -> int:
    """The text the next tool may use: up to 64 Ki while the reserve is untouched, then 4 Ki of it."""
    if budget - LIST_RESERVE >= MIN_TOOL_TEXT:
        return min(MAX_TOOL_TEXT, budget - LIST_RESERVE)
    return max(0, min(MIN_TOOL_TEXT, budget))


def scan_tools(tools: Sequence[Mapping[str, Any]]) -> list[HygieneFinding]:
    """The findings of every rule over ``tools``, raw tool objects as listed.

    At most one finding per tool and rule, in tool order then rule order. Never raises.
    """
    findings: list[HygieneFinding] = []
    budget = MAX_LIST_TEXT
    if not isinstance(tools, Sequence) or isinstance(tools, str | bytes):
        return findings
    try:
        for tool in (tool for tool in islice(tools, MAX_TOOLS) if isinstance(tool, Mapping)):
            try:
                found, spent = _scan_tool(tool, _allowance(budget))
            except Exception:  # a hostile object must not break the check; the rest is still scanned
                log.warning("hygiene scan skipped a tool it could not read", exc_info=True)
                continue
            findings.extend(found)
            budget -= spent
    except Exception:  # a sequence that fails while iterated: keep what was found
        log.warning("hygiene scan stopped on a tool list it could not read", exc_info=True)
    return findings
