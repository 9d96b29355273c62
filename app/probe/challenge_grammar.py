"""Judging a ``WWW-Authenticate`` header by its grammar, every challenge in it.

Sources: RFC 9110 sections 5.6.1 (lists), 5.6.2 (token), 5.6.3 (BWS), 5.6.4 (quoted-string),
11.2 (auth-param, token68), 11.5 (realm), 11.6.1 (``WWW-Authenticate = 1#challenge``); RFC 6750
section 3 (the Bearer challenge); RFC 9728 section 5.1 (``resource_metadata``).

Policy: the header is read as a sender has to write it,
``challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ]`` with
``auth-param = token BWS "=" BWS ( token / quoted-string )``. Every departure is a stable problem
key (each at most once, in the order found); ``well_formed`` means there is none. Reading goes on
after a fault, so every challenge that can be read is reported.

- The header is cut at 2,048 characters first (``too_long``). Control characters, DEL and lone
  surrogates are ``bad_character``. Other non-ASCII characters stand for obs-text octets (the
  value may have been decoded as UTF-8): allowed in a quoted string, nowhere else.
- A recipient accepts empty list elements and whitespace around commas, a sender must not
  generate empty elements (5.6.1.1, ``empty_list_element``) nor BWS around ``=`` (5.6.3), and
  only spaces follow the scheme (11.6.1): both ``bad_whitespace``.
- A parameter name occurs once per challenge (11.2; RFC 6750 says so of its own):
  ``duplicate_param``, the first value kept. ``realm`` is sent quoted (11.5): ``realm_not_quoted``.
- ``Basic realm=`` is, by the grammar, a token68 challenge, and is read so. Bearer alone is read
  for auth-params first: RFC 6750 requires "one or more auth-param values", so there
  ``realm=`` is a parameter without a value, a token68 is ``bearer_token68`` and a bare
  ``Bearer`` is ``bearer_without_params``.
- Bearer values, after unquoting (RFC 6750 section 3): ``scope`` is scope-tokens of
  ``%x21 / %x23-5B / %x5D-7E`` parted by single spaces; ``error`` and ``error_description`` are
  ``1*( %x20-21 / %x23-5B / %x5D-7E )``; ``error_uri`` an absolute URI of
  ``%x21 / %x23-5B / %x5D-7E``. An ``error`` code other than the three of RFC 6750 section 3.1
  is no problem: the OAuth Extensions Error Registry adds codes (RFC 9470 step-up, for one).
- ``resource_metadata`` is "the URL of the protected resource metadata" (RFC 9728 section 5.1,
  with any scheme): it must be an absolute URL with an authority, of RFC 3986 characters
  (``resource_metadata_not_url``). Whether it is https is for the target guard that judges the
  URL before it is looked up, not for the grammar.
- Reported: at most 8 challenges and 16 parameters each (the checks cover them all), names
  lower-case, values unquoted, cleaned and capped. Linear time; never raises.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from app.probe.text import clean_text

MAX_HEADER = 2048
MAX_CHALLENGES = 8
MAX_PARAMS = 16
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_UNQUOTED = re.compile(r"[^, \t]*")
_BAD_CHAR = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\ud800-\udfff]")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+(?: [\x21\x23-\x5b\x5d-\x7e]+)*")
_NQS = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]+")
_ERROR_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[\x21\x23-\x5b\x5d-\x7e]*")
_URI_CHARS = r"A-Za-z0-9\-._~!$&'()*+,;=:%\[\]@"
_URL = re.compile(rf"[A-Za-z][A-Za-z0-9+.\-]*://[{_URI_CHARS}]+(?:[/?#][{_URI_CHARS}/?#]*)?")
_BEARER_RULES = (
    ("scope", _SCOPE, "bearer_scope_invalid"),
    ("error", _NQS, "bearer_error_invalid"),
    ("error_description", _NQS, "bearer_error_description_invalid"),
    ("error_uri", _ERROR_URI, "bearer_error_uri_invalid"),
)
_CAPS = {"resource_metadata": 2048, "error_uri": 2048}


class ChallengeItem(BaseModel):
    """One challenge as read: its scheme, and its token68 or its parameters."""

    model_config = ConfigDict(extra="forbid")
    scheme: str
    token68: str | None = None
    params: dict[str, str] = Field(default_factory=dict, description="Lower-case names; at most 16.")


class ChallengeGrammar(BaseModel):
    """The grammar verdict on a whole header, and every challenge read (at most 8)."""

    model_config = ConfigDict(extra="forbid")
    well_formed: bool
    problems: list[str] = Field(default_factory=list)
    challenges: list[ChallengeItem] = Field(default_factory=list)


@dataclass
class _Raw:
    scheme: str
    token68: str | None = None
    params: dict[str, tuple[str | None, bool]] = field(default_factory=dict)  # name: (value, quoted)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t":
        i += 1
    return i


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.problems: dict[str, None] = {}
        self.challenges: list[_Raw] = []
        self.current: _Raw | None = None
        self.elements = 0

    def note(self, problem: str) -> None:
        self.problems.setdefault(problem, None)

    def ends_element(self, i: int) -> bool:
        i = _skip(self.text, i)
        return i >= len(self.text) or self.text[i] == ","

    def read(self) -> None:
        text, i, fresh, commas = self.text, 0, True, False
        while True:
            i = _skip(text, i)
            if i >= len(text):
                break
            if text[i] == ",":
                if fresh:
                    self.note("empty_list_element")
                fresh, commas, i = True, True, i + 1
                continue
            fresh = False
            self.elements += 1
            i = _skip(text, self.element(i))
            if i < len(text) and text[i] != ",":
                if _TOKEN.match(text, i):
                    self.note("missing_comma")  # and read on: the next element starts here
                else:
                    self.note("trailing_garbage")
                    i = self.skip_element(i)
        if fresh and commas:
            self.note("empty_list_element")

    def element(self, i: int) -> int:
        name = _TOKEN.match(self.text, i)
        if name is None:
            self.note("bad_scheme")
            return self.skip_element(i)
        j = _skip(self.text, name.end())
        if j < len(self.text) and self.text[j] == "=":
            target = self.current
            if target is None:
                self.note("param_before_scheme")
            elif target.token68 is not None:
                self.note("param_after_token68")
                target = None
            return self.param(name.group(), name.end(), j, target)
        return self.challenge(name.group(), name.end(), j)

    def challenge(self, scheme: str, end: int, j: int) -> int:
        text = self.text
        item = self.current = _Raw(scheme)
        self.challenges.append(item)
        if j == end or j >= len(text) or text[j] == ",":
            return j
        if "\t" in text[end:j]:
            self.note("bad_whitespace")
        t68 = _TOKEN68.match(text, j)
        t68_ok = t68 is not None and self.ends_element(t68.end())
        single_pad = t68 is not None and t68.group()[-1] == "=" and t68.group()[-2:-1] != "="
        if t68 is not None and t68_ok and not (scheme.lower() == "bearer" and single_pad):
            item.token68 = t68.group()
            return t68.end()
        name = _TOKEN.match(text, j)
        if name is not None:
            k = _skip(text, name.end())
            if k < len(text) and text[k] == "=":
                return self.param(name.group(), name.end(), k, item)
        if t68 is not None and t68_ok:  # a Bearer token68 with one "=" that is no parameter
            item.token68 = t68.group()
            return t68.end()
        self.note("bad_token68")
        return self.skip_element(j)

    def param(self, name: str, end: int, eq: int, target: _Raw | None) -> int:
        text = self.text
        j = _skip(text, eq + 1)
        if eq > end or j > eq + 1:
            self.note("bad_whitespace")
        value: str | None = None
        quoted = j < len(text) and text[j] == '"'
        if j >= len(text) or text[j] == ",":
            self.note("param_without_value")
        elif quoted:
            value, j = self.quoted(j)
        else:
            token = _TOKEN.match(text, j)
            stop = token.end() if token else j
            if stop < len(text) and text[stop] not in " \t,":
                self.note("bad_param_value")
                unquoted = _UNQUOTED.match(text, j)
                stop = unquoted.end() if unquoted else j + 1
            value, j = text[j:stop], stop
        if target is not None:
            key = name.lower()
            if key in target.params:
                self.note("duplicate_param")
            else:
                target.params[key] = (value, quoted)
        return j

    def quoted(self, start: int) -> tuple[str, int]:
        text, i = self.text, start + 1
        out: list[str] = []
        while i < len(text):
            ch = text[i]
            if ch == '"':
                return "".join(out), i + 1
            if ch == "\\":
                if i + 1 >= len(text):
                    break
                ch, i = text[i + 1], i + 1
            out.append(ch)
            i += 1
        self.note("unterminated_quoted_string")
        return "".join(out), len(text)

    def skip_element(self, i: int) -> int:
        text = self.text
        while i < len(text) and text[i] != ",":
            i = self.quoted(i)[1] if text[i] == '"' else i + 1
        return i


def _check(raw: _Raw, note: Callable[[str], None]) -> None:
    realm, quoted = raw.params.get("realm", (None, True))
    if realm is not None and not quoted:
        note("realm_not_quoted")
    metadata = raw.params.get("resource_metadata", (None, True))[0]
    if metadata is not None and not _URL.fullmatch(metadata):
        note("resource_metadata_not_url")
    if raw.scheme.lower() != "bearer":
        return
    if raw.token68 is not None:
        note("bearer_token68")
    elif not raw.params:
        note("bearer_without_params")
    for name, pattern, problem in _BEARER_RULES:
        value = raw.params.get(name, (None, True))[0]
        if value is not None and not pattern.fullmatch(value):
            note(problem)


def _item(raw: _Raw) -> ChallengeItem:
    params: dict[str, str] = {}
    for name, (value, _quoted) in raw.params.items():
        if value is not None and len(params) < MAX_PARAMS:
            params[clean_text(name, 64) or "?"] = clean_text(value, _CAPS.get(name, 512)) or ""
    return ChallengeItem(scheme=clean_text(raw.scheme, 32) or "?", token68=clean_text(raw.token68, 512), params=params)


def judge_www_authenticate(value: str) -> ChallengeGrammar:
    """The RFC 9110 grammar verdict on a ``WWW-Authenticate`` value, and every challenge in it."""
    text = value if isinstance(value, str) else ""
    reader = _Reader(text[:MAX_HEADER])
    if len(text) > MAX_HEADER:
        reader.note("too_long")
    if _BAD_CHAR.search(reader.text):
        reader.note("bad_character")
    reader.read()
    if reader.elements == 0:
        reader.note("empty")
    for raw in reader.challenges:
        _check(raw, reader.note)
    problems = list(reader.problems)
    challenges = [_item(raw) for raw in reader.challenges[:MAX_CHALLENGES]]
    return ChallengeGrammar(well_formed=not problems, problems=problems, challenges=challenges)
