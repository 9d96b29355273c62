"""Parsing ``WWW-Authenticate`` (RFC 9110 section 11.6.1; RFC 6750 section 3; RFC 9728 section 5.1).

Policy: the header is capped at 2,048 characters before parsing. When several challenges are
present, the ``Bearer`` one is reported (MCP authorization is OAuth 2.1 bearer tokens), else
the first. Parameter values are unquoted (``\\`` escapes honoured), cleaned and capped.

This reading is lenient (an unquoted URL is taken whole, say) and is what the metadata lookup
follows. Next to it every reported challenge carries the strict verdict of
:func:`app.probe.challenge_grammar.judge_www_authenticate` (RFC 9110 grammar, RFC 6750 and
RFC 9728 rules): ``well_formed``, the problem keys, and all the challenges in the header.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from app.probe.challenge_grammar import MAX_HEADER, ChallengeGrammar, ChallengeItem, judge_www_authenticate
from app.probe.text import clean_text

__all__ = [
    "MAX_HEADER",
    "AuthChallenge",
    "ChallengeGrammar",
    "ChallengeItem",
    "challenge_params",
    "judge_www_authenticate",
    "parse_www_authenticate",
]
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_SPACE = re.compile(r"[ \t]*")
_UNQUOTED = re.compile(r"[^,\s]*")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


class AuthChallenge(BaseModel):
    """One parsed challenge; ``raw`` is the whole header as received (cleaned, capped)."""

    model_config = ConfigDict(extra="forbid")
    raw: str
    scheme: str | None = None
    realm: str | None = None
    resource_metadata: str | None = None
    scope: str | None = None
    error: str | None = None
    error_description: str | None = None
    well_formed: bool | None = Field(default=None, description="The RFC 9110 grammar verdict on the whole header.")
    problems: list[str] = Field(default_factory=list, description="Grammar problem keys, in the order found.")
    challenges: list[ChallengeItem] = Field(default_factory=list, description="Every challenge read (at most 8).")


def _quoted(text: str, start: int) -> tuple[str, int]:
    out: list[str] = []
    i = start + 1
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if ch == '"':
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    return "".join(out), i


def _challenges(text: str) -> list[tuple[str, dict[str, str]]]:
    found: list[tuple[str, dict[str, str]]] = []
    i = 0
    current: tuple[str, dict[str, str]] | None = None
    while i < len(text):
        i = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if i < len(text) and text[i] == ",":
            i += 1
            continue
        token = _TOKEN.match(text, i)
        if token is None:
            i += 1
            continue
        name, i = token.group(0), token.end()
        j = _SPACE.match(text, i).end()  # type: ignore[union-attr]
        if j < len(text) and text[j] == "=" and current is not None and not text.startswith("==", j):
            j = _SPACE.match(text, j + 1).end()  # type: ignore[union-attr]
            if j < len(text) and text[j] == '"':
                value, i = _quoted(text, j)
            else:  # a token; leniently, anything up to the next comma or space (unquoted URLs occur)
                end = _UNQUOTED.match(text, j)
                value, i = (end.group(0), end.end()) if end else ("", j)
            current[1].setdefault(name.lower(), value)
            continue
        current = (name, {})  # a new challenge begins with its scheme
        found.append(current)
        i = j
        token68 = _TOKEN68.match(text, i)
        rest = text[token68.end() :].lstrip() if token68 else ""
        if token68 and (not rest or rest.startswith(",")) and "=" not in token68.group(0).rstrip("="):
            i = token68.end()  # a token68 value (RFC 9110 section 11.2), not a parameter list
    return found


def _chosen(value: str) -> tuple[str, dict[str, str]] | None:
    challenges = _challenges(value[:MAX_HEADER])
    return next((c for c in challenges if c[0].lower() == "bearer"), challenges[0] if challenges else None)


def challenge_params(value: str) -> dict[str, str]:
    """The raw (uncleaned) parameters of the reported challenge, lower-case names."""
    chosen = _chosen(value)
    return dict(chosen[1]) if chosen else {}


def parse_www_authenticate(value: str) -> AuthChallenge:
    """Parse a ``WWW-Authenticate`` header value into an :class:`AuthChallenge` (cleaned for reporting)."""
    grammar = judge_www_authenticate(value)
    chosen = _chosen(value)
    scheme, params = chosen if chosen is not None else (None, {})
    return AuthChallenge(
        raw=clean_text(value[:MAX_HEADER], MAX_HEADER) or "",
        scheme=clean_text(scheme, 32),
        realm=clean_text(params.get("realm"), 256),
        resource_metadata=clean_text(params.get("resource_metadata"), 2048),
        scope=clean_text(params.get("scope"), 512),
        error=clean_text(params.get("error"), 64),
        error_description=clean_text(params.get("error_description"), 256),
        well_formed=grammar.well_formed,
        problems=grammar.problems,
        challenges=grammar.challenges,
    )
