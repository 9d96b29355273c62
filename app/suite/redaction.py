"""Credential redaction: a credentialed check's values appear in no answer, however a server echoes them.

A server may copy the caller's header values into its own text: its name, version, title,
instructions, tool names and descriptions, schema keys, capability names. It may copy them as
sent, or changed so an exact search misses them. Policy:

- **What is secret.** Each credential header's value; for ``Authorization``, the part after
  the scheme instead (``Bearer`` alone is no secret, so the value with its scheme is not
  searched in pieces), and for ``Basic`` (RFC 7617 §2) its decoded user-id and password too.
- **Where it is looked for.** Every string of the result, keys included, except the values of
  our own members (:data:`OURS`: status, reason, verdict states...) where we write them.
- **In which forms.** Each string is read as sent and decoded: percent-encoding (RFC 3986
  §2.1), every base64 or base64url run (RFC 4648 §4 and §5) at each of its four alignments,
  every hex run (RFC 4648 §8) at both. Each reading is compared without case and without
  separators (spaces, ``-``, ``_``, ``.``, ``:`` and the like, so a value spaced out or
  re-punctuated is found), with the value forwards and reversed.
- **What counts.** Any run of :data:`RUN` or more characters of a value, in order, or a whole
  value of 4 or 5 characters. A shorter value is not looked for (it would match ordinary text).
- **What is done.** A string holding one is replaced whole by :data:`MARK`: nothing around
  the run is served, signed or stored either, since a server splitting a value across strings
  and their neighbours leaves no safe part.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import unquote

#: A run of this many characters of a value, in order, gives it away.
RUN = 6
#: What a string holding a credential is replaced with.
MARK = "[credential]"
#: Values of these members are ours (enumerations), never server text, where we write them: at
#: the top of the result and in each check's verdict.
OURS = frozenset({"status", "reason", "state", "id", "era", "transport", "failed_step", "checked_at", "kind"})
_SEPARATORS = re.compile(r"[\s\-_.:,;|'\"`~*+/\\=]+")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{8,}")
_HEX_RUN = re.compile(r"[0-9A-Fa-f]{12,}")
_SHORTEST = 4


def _basic(credentials: str) -> list[str]:
    """The user-id and password of Basic credentials (none when they do not decode)."""
    try:
        decoded = base64.b64decode(credentials, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return []
    return [part for part in decoded.partition(":")[::2] if part]


def _plain(text: str) -> str:
    """``text`` as compared: case folded, separators dropped."""
    return _SEPARATORS.sub("", text.casefold())


class Secrets:
    """The credential values of one check, ready to be looked for (see the module docs)."""

    def __init__(self, headers: Iterable[tuple[str, str]]) -> None:
        values: set[str] = set()
        for name, value in headers:
            scheme, _, rest = value.strip().partition(" ")
            if name.lower() == "authorization" and rest.strip():
                values.add(rest.strip())  # (the scheme is a public word: not part of the secret)
                if scheme.lower() == "basic":  # RFC 7617: user-id ":" password, base64
                    values.update(_basic(rest.strip()))
            else:
                values.add(value)
        self.runs: set[str] = set()
        self.whole: set[str] = set()
        for value in map(_plain, values):
            for form in (value, value[::-1]):
                if len(form) >= RUN:
                    self.runs.update(form[i : i + RUN] for i in range(len(form) - RUN + 1))
                elif len(form) >= _SHORTEST:
                    self.whole.add(form)

    def __bool__(self) -> bool:
        return bool(self.runs or self.whole)

    def found_in(self, text: str) -> bool:
        """Whether ``text``, in any reading of the module docs, holds a value."""
        return any(self._in(_plain(reading)) for reading in _readings(text))

    def _in(self, plain: str) -> bool:
        if any(value in plain for value in self.whole):
            return True
        runs = self.runs
        return any(plain[i : i + RUN] in runs for i in range(len(plain) - RUN + 1))


def _readings(text: str) -> Iterator[str]:
    """``text`` as sent and as decoded from each encoding it may hold (latin-1 keeps bytes as characters)."""
    yield text
    if "%" in text:
        yield unquote(text, errors="replace")
    for run in _BASE64_RUN.findall(text):
        standard = run.replace("-", "+").replace("_", "/")
        for offset in range(4):
            chunk = standard[offset:]
            chunk = chunk[: len(chunk) - len(chunk) % 4]
            if len(chunk) >= 8:
                try:
                    yield base64.b64decode(chunk, validate=True).decode("latin-1")
                except (binascii.Error, ValueError):
                    continue
    for run in _HEX_RUN.findall(text):
        for offset in range(2):
            chunk = run[offset:]
            yield bytes.fromhex(chunk[: len(chunk) - len(chunk) % 2]).decode("latin-1")


def scrubbed(document: dict[str, Any], secrets: Secrets) -> tuple[dict[str, Any], bool]:
    """``document`` (a result's JSON form) with every string holding a value replaced by
    :data:`MARK`, and whether anything was replaced."""
    changed = False

    def clean(text: str) -> str:
        nonlocal changed
        if secrets.found_in(text):
            changed = True
            return MARK
        return text

    def scrub(value: Any, ours: frozenset[str] = frozenset()) -> Any:
        if isinstance(value, str):
            return clean(value)
        if isinstance(value, dict):
            return {clean(k): v if k in ours and isinstance(v, str) else scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [scrub(v) for v in value]
        return value

    cleaned = {
        k: v if k in OURS and isinstance(v, str) else [scrub(c, OURS) for c in v] if k == "checks" else scrub(v)
        for k, v in document.items()
    }
    return cleaned, changed
