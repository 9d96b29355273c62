"""The category of a server, from its tool names alone.

Rule (``docs/categories.md``): a topic is assigned when the tools naming it are

- at least :data:`MIN_TOOLS` (3),
- at least :data:`DOMINANCE` (2) times as many as the tools naming any other topic, and
- at least a quarter (``1 / MIN_SHARE_DENOMINATOR``) of all tools considered;

otherwise there is no category. A tool names a topic when one of the words of its name is one
of the topic's keywords or a keyword's simple plural (keyword + ``s`` or + ``es``); a tool may
name several topics and counts for each. Words come from the name split into runs of letters
(so on ``_``, ``-``, ``.``, spaces, digits and any other non-letter) and at camelCase
boundaries, then lower-cased; generic words (``search``, ``get``, ``list``, ...) are dropped
before matching. There is no Unicode normalisation: NFKC can expand a character eighteenfold,
and a name that hides its words in full-width letters only loses its own category.

The topics, their keywords and the generic words live in ``categories.yaml`` (with a version
number), loaded once. Names are untrusted: only the first :data:`MAX_NAMES` names and the first
:data:`MAX_NAME_CHARS` characters of each are read.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

import yaml

MAX_NAMES = 1000
MAX_NAME_CHARS = 128
MIN_TOOLS = 3
DOMINANCE = 2
MIN_SHARE_DENOMINATOR = 4
_LETTERS = re.compile(r"[^\W\d_]+")
_TOPIC = re.compile(r"[a-z][a-z_]*\Z")


@dataclass(frozen=True, slots=True)
class Category:
    """An assigned topic.

    Attributes:
        topic: the topic, e.g. ``"travel"``.
        words: the keywords (as listed, not their plurals) that decided it, sorted, unique.
        tools: tools naming the topic.
        total: all tools considered (at most :data:`MAX_NAMES`).
    """

    topic: str
    words: tuple[str, ...]
    tools: int
    total: int


@dataclass(frozen=True, slots=True)
class Rules:
    """The parsed keyword lists: ``forms`` maps a word to the (topic, keyword) pairs it names."""

    version: int
    generic: frozenset[str]
    topics: tuple[str, ...]
    forms: Mapping[str, tuple[tuple[str, str], ...]]


def words(name: str) -> list[str]:
    """The lower-case words of a tool name (see the module docs), generic words included."""
    out: list[str] = []
    for run in _LETTERS.findall(name[:MAX_NAME_CHARS]):
        lower = run.lower()
        if run in (lower, run.upper()):  # no camelCase boundary possible
            out.append(lower)
            continue
        start = 0
        for index in range(1, len(run)):
            previous, current = run[index - 1], run[index]
            following = run[index + 1 : index + 2]
            if current.isupper() and (previous.islower() or (previous.isupper() and following.islower())):
                out.append(run[start:index].lower())
                start = index
        out.append(run[start:].lower())
    return out


def _word_list(value: object, where: str) -> list[str]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"categories: {where} must be a non-empty list")
    for word in value:
        if not isinstance(word, str) or words(word) != [word]:
            raise ValueError(f"categories: {where} holds {word!r}, which is not one lower-case word")
    return value


def parse_rules(document: object) -> Rules:
    """Check and index a parsed ``categories.yaml``; ``ValueError`` when it is malformed."""
    if not isinstance(document, dict) or set(document) != {"version", "generic", "topics"}:
        raise ValueError("categories: expected exactly the keys version, generic and topics")
    version = document["version"]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ValueError("categories: version must be a positive integer")
    generic = frozenset(_word_list(document["generic"], "generic"))
    topics = document["topics"]
    if not isinstance(topics, dict) or not topics:
        raise ValueError("categories: topics must be a non-empty mapping")
    forms: dict[str, list[tuple[str, str]]] = {}
    for topic, keywords in topics.items():
        if not isinstance(topic, str) or not _TOPIC.match(topic):
            raise ValueError(f"categories: bad topic name {topic!r}")
        for keyword in _word_list(keywords, f"topic {topic}"):
            if keyword in generic:
                raise ValueError(f"categories: {keyword!r} is both generic and a keyword of {topic}")
            for form in (keyword, keyword + "s", keyword + "es"):
                pairs = forms.setdefault(form, [])
                if (topic, keyword) not in pairs:
                    pairs.append((topic, keyword))
    return Rules(
        version=version,
        generic=generic,
        topics=tuple(topics),
        forms={form: tuple(pairs) for form, pairs in forms.items()},
    )


@functools.cache
def rules() -> Rules:
    """The packaged keyword lists, loaded and checked once."""
    text = resources.files("app.suite").joinpath("categories.yaml").read_text(encoding="utf-8")
    return parse_rules(yaml.safe_load(text))


def categorise(names: Iterable[str], *, using: Rules | None = None) -> Category | None:
    """The category of a tool list from its names, or ``None`` when the rule assigns none."""
    table = using or rules()
    counts: dict[str, int] = {}
    matched: dict[str, set[str]] = {}
    total = 0
    for name in itertools.islice(names, MAX_NAMES):
        total += 1
        if not isinstance(name, str):
            continue
        named: dict[str, set[str]] = {}
        for word in words(name):
            if word in table.generic:
                continue
            for topic, keyword in table.forms.get(word, ()):
                named.setdefault(topic, set()).add(keyword)
        for topic, keywords in named.items():
            counts[topic] = counts.get(topic, 0) + 1
            matched.setdefault(topic, set()).update(keywords)
    if not counts:
        return None
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    topic, count = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    if count < MIN_TOOLS or count < DOMINANCE * runner_up or count * MIN_SHARE_DENOMINATOR < total:
        return None
    return Category(topic=topic, words=tuple(sorted(matched[topic])), tools=count, total=total)
