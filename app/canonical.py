"""The canonical JSON form: Unicode NFC, then the JSON Canonicalization Scheme (RFC 8785).

Used for tool fingerprints (``docs/fingerprints.md``) and signed payloads (``docs/attestations.md``).
The form of a value is built in three steps:

1. Every string value and every object key is put in Unicode Normalization Form C (NFC),
   recursively. RFC 8785 section 3.1 says JCS itself leaves strings "as is"; we normalise on
   purpose, so that two spellings of one text (``"e" + U+0301`` and ``U+00E9``) give one form.
   The vectors where this makes us differ from plain JCS are listed in ``docs/fingerprints.md``.
2. An object whose keys collide after NFC (two different keys that become equal) is refused:
   I-JSON (RFC 7493 section 2.3) and RFC 8785 section 3.1 forbid duplicate property names.
3. The result is serialised as RFC 8785 sections 3.2.1 to 3.2.4 say (no whitespace, ECMAScript
   string and number serialisation, properties sorted by their UTF-16 code units, UTF-8
   output): by Python's JSON encoder where its bytes are those (:class:`_Walk` says when), by
   the ``rfc8785`` package otherwise.

What RFC 8785 and I-JSON cannot represent is refused with a :class:`CanonicalFormError` whose
``reason`` is a stable key:

- ``non_finite_number``: NaN or an infinity (section 3.2.2.3; Python's ``json`` parser accepts
  ``NaN`` and ``Infinity``).
- ``number_out_of_range``: an integer that an I-JSON reader would round (RFC 7493 section 2.2,
  RFC 8785 sections 3.1 and 3.2.2.3, Appendix B note 1). Every integer with ``|n| <= 2**53`` is
  accepted. A larger one is accepted only if its decimal digits are exactly what JCS writes for
  the nearest IEEE-754 double (``100000000000000000000`` or ``295147905179352830000`` pass,
  ``2**53 + 1`` and ``2**64 - 1`` do not), so two different integers never share one form and
  re-reading canonical bytes with ``json.loads`` always succeeds.
- ``lone_surrogate``: a string or key holding a surrogate code point (section 3.2.2.2).
- ``unsupported_type``: anything but ``dict``/``Mapping`` with string keys, ``list``/``tuple``,
  ``str``, ``int``, ``float``, ``bool`` and ``None``.
- ``too_deep``: containers nested deeper than :data:`MAX_DEPTH` (64, as :mod:`app.jsonsafe`).
- ``duplicate_key``: keys that collide after NFC (step 2).
- ``not_stream_safe``: a string with more than 30 combining marks in a row (UAX #15 section 13),
  refused before normalising it, whose cost grows with the square of such a run.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

import rfc8785

from app.textruns import cut_mark_runs, has_long_mark_run

MAX_DEPTH = 64
#: Integers up to this magnitude are IEEE-754 doubles without rounding (RFC 7493 section 2.2).
EXACT_INT = 2**53
_SURROGATE = re.compile("[\ud800-\udfff]")

REASONS = (
    "not_stream_safe",
    "duplicate_key",
    "non_finite_number",
    "number_out_of_range",
    "lone_surrogate",
    "unsupported_type",
    "too_deep",
)


class CanonicalFormError(ValueError):
    """A value has no canonical form; ``reason`` is a stable key (see the module docs)."""

    reason: str

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message or reason)
        self.reason = reason

    def __reduce__(self) -> tuple[type[CanonicalFormError], tuple[str, str]]:
        return type(self), (self.reason, str(self))


def nfc(value: str) -> str:
    """The NFC form of a string as a plain ``str``; ``lone_surrogate`` for surrogate code points,
    ``not_stream_safe`` for more than 30 combining marks in a row (:mod:`app.textruns`)."""
    if _SURROGATE.search(value):
        raise CanonicalFormError("lone_surrogate", "a string holds a lone surrogate code point")
    if has_long_mark_run(value):
        raise CanonicalFormError("not_stream_safe", "a string holds more than 30 combining marks in a row")
    return unicodedata.normalize("NFC", str.__str__(value))


def _integer(value: int) -> int | float:
    """An integer as JCS sees it: itself when exact, else its double if that spells it exactly."""
    number = int(value)
    if -EXACT_INT < number < EXACT_INT:
        return number
    try:
        double = float(number)
    except OverflowError:
        double = math.inf
    # Integers of 1e21 and above are written with an exponent by JCS, so never match; the
    # magnitude check keeps ``str`` away from huge integers.
    if abs(double) < 1e21 and rfc8785.dumps(double) == str(number).encode():
        return double
    raise CanonicalFormError("number_out_of_range", "an integer outside the IEEE-754 double exact range")


class _Walk:
    """One preparation: whether Python's JSON encoder writes the prepared value as RFC 8785 does.

    It does for every value but two kinds (``plain`` turns false): floats written with an
    exponent by either side: integral from 2**53 up, or non-integral outside ``[1e-4, 1e16)``
    (integral floats below 2**53 become ints, which both write as plain digits; in between, ``repr`` and ECMAScript's
    ``Number::toString`` both write the shortest round-trip digits without an exponent), and
    object keys holding a character from U+E000 up (there code point order, which
    ``sort_keys`` uses, may differ from the UTF-16 code unit order of section 3.2.3). Strings
    are escaped alike: ``\\"``, ``\\\\``, the short forms of ``\\b \\f \\n \\r \\t`` and
    ``\\u00xx`` (lower case) for the other control characters, everything else as itself.
    """

    __slots__ = ("plain",)

    def __init__(self) -> None:
        self.plain = True

    def value(self, value: Any, depth: int) -> Any:
        """A plain copy of ``value`` with NFC strings, or :class:`CanonicalFormError`."""
        kind = type(value)  # the exact JSON types first: a parsed document holds nothing else
        if kind is str:
            return value if value.isascii() else nfc(value)
        if kind is dict or kind is list:
            if depth >= MAX_DEPTH:
                raise CanonicalFormError("too_deep", f"nested deeper than {MAX_DEPTH} levels")
            if kind is dict:
                return self._object(value, depth + 1)
            return [self.value(item, depth + 1) for item in value]
        if kind is int and -EXACT_INT < value < EXACT_INT:
            return value
        if kind is float and value.is_integer() is False and 1e-4 <= abs(value) < 1e16:
            return value
        return self._other(value, depth)

    def _other(self, value: object, depth: int) -> Any:
        """:meth:`value` for the rest: literals, other numbers, subclasses, mappings and tuples."""
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, str):
            return str.__str__(value) if value.isascii() else nfc(value)
        if isinstance(value, int):
            number = _integer(value)
            return self._float(number) if isinstance(number, float) else number
        if isinstance(value, float):
            if not math.isfinite(value):
                raise CanonicalFormError("non_finite_number", "NaN and infinities have no JSON form")
            return self._float(float(value))
        if isinstance(value, Mapping | list | tuple):
            if depth >= MAX_DEPTH:
                raise CanonicalFormError("too_deep", f"nested deeper than {MAX_DEPTH} levels")
            if isinstance(value, Mapping):
                return self._object(value, depth + 1)
            return [self.value(item, depth + 1) for item in value]
        raise CanonicalFormError("unsupported_type", f"{type(value).__name__} has no JSON form")

    def _float(self, number: float) -> float | int:
        if number.is_integer():
            if -EXACT_INT < number < EXACT_INT:
                return int(number)
            self.plain = False  # (from 2**53 up, repr writes "9007199254740992.0" or an exponent)
        elif not 1e-4 <= abs(number) < 1e16:
            self.plain = False
        return number

    def _object(self, value: Mapping[Any, Any], depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                if not isinstance(key, str):
                    raise CanonicalFormError("unsupported_type", "object keys must be strings")
                key = str.__str__(key)
            if key.isascii():
                normal = key
            else:
                normal = nfc(key)
                if self.plain and max(normal) >= "\ue000":
                    self.plain = False
            if normal in out:
                raise CanonicalFormError("duplicate_key", "two object keys are equal after Unicode NFC")
            out[normal] = self.value(item, depth)
        return out


def canonical_bytes(value: object) -> bytes:
    """The canonical form of a JSON value: NFC strings and keys, then RFC 8785 (UTF-8 bytes).

    The prepared value is written by Python's JSON encoder (C) when that gives RFC 8785's bytes
    (:class:`_Walk`), else by the ``rfc8785`` package; the tests hold both to the RFC's vectors,
    to ``rfc8785`` and to the ``canonicalize`` reference implementation.

    Raises:
        CanonicalFormError: the value has no canonical form (``reason`` says why).
    """
    walk = _Walk()
    prepared = walk.value(value, 0)
    if walk.plain:
        return json.dumps(prepared, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False).encode()
    try:
        return rfc8785.dumps(prepared)
    except rfc8785.FloatDomainError as exc:  # pragma: no cover - refused above
        raise CanonicalFormError("non_finite_number", str(exc)) from exc
    except rfc8785.IntegerDomainError as exc:  # pragma: no cover - refused above
        raise CanonicalFormError("number_out_of_range", str(exc)) from exc
    except rfc8785.CanonicalizationError as exc:  # pragma: no cover - refused above
        raise CanonicalFormError("unsupported_type", str(exc)) from exc


class _NotPlain(Exception):
    """A token :func:`canonical_text`'s fast path does not write as RFC 8785 does."""


def _plain_float(token: str) -> float | int:
    number = float(token)
    if number.is_integer() and -EXACT_INT < number < EXACT_INT:
        return int(number)
    if number.is_integer() or not 1e-4 <= abs(number) < 1e16:
        raise _NotPlain
    return number


def _not_json(token: str) -> object:
    raise _NotPlain


#: UTF-8 lead bytes of the characters from U+E000 up (where code point and UTF-16 orders of
#: object names may differ: :class:`_Walk`).
_HIGH_LEADS = (b"\xee", b"\xef", b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")


def _plain_tree(value: Any) -> bool:
    """Whether a parsed value nests at most :data:`MAX_DEPTH` deep and holds only integers within
    2**53 (containers only are walked, without recursion); otherwise the walk decides."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if depth > MAX_DEPTH:
            return False
        for child in node.values() if type(node) is dict else node:
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
            elif kind is int and not -EXACT_INT < child < EXACT_INT:
                return False
    return True


def canonical_text(text: bytes) -> bytes:
    """:func:`canonical_bytes` of the value of UTF-8 JSON text whose objects have distinct names
    (text this service wrote; a name given twice counts once, the last, as with ``json.loads``).

    Text without ``\\u`` escapes (they may hide a surrogate or text not in NFC) and without
    characters from U+E000 up, in NFC as a whole (ASCII, usually), is parsed with integral floats
    read as ints and written by Python's JSON encoder at C speed; a value it would write otherwise
    (see :class:`_Walk`) goes the walk's way. NFC of the whole text is NFC of each string in it:
    the quote that delimits a string is a stable code point (UAX #15 section 9), across which
    normalisation never reaches.

    Raises:
        CanonicalFormError: the value has no canonical form; ``ValueError`` for text that is not JSON.
    """
    decoded = text.decode("utf-8")
    if has_long_mark_run(decoded):  # (refused before any normalisation: see nfc)
        raise CanonicalFormError("not_stream_safe", "a string holds more than 30 combining marks in a row")
    plain = b"\\u" not in text and (
        text.isascii() or (not any(lead in text for lead in _HIGH_LEADS) and unicodedata.is_normalized("NFC", decoded))
    )
    if plain:
        try:
            value = json.loads(decoded, parse_float=_plain_float, parse_constant=_not_json)
        except _NotPlain:
            pass
        else:
            if type(value) not in (dict, list) or _plain_tree(value):
                if type(value) is int and not -EXACT_INT < value < EXACT_INT:
                    return canonical_bytes(value)
                return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    return canonical_bytes(json.loads(decoded))


def safe_copy(value: Any, depth: int = 0) -> Any:
    """A copy of a parsed JSON value that has a canonical form, whatever the value held.

    For answers holding what a server sent as it sent it (capabilities, schemas): an integer
    beyond what I-JSON holds becomes its decimal string, a lone surrogate U+FFFD, a run of more
    than 30 combining marks is cut to 30, an object name equal after NFC to an earlier one is
    dropped with its value, and a container nested 64 deep becomes the string
    ``"[nested deeper than 64 levels]"``.
    """
    if isinstance(value, str):
        return cut_mark_runs(_SURROGATE.sub("\ufffd", value))
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        try:
            _integer(value)
        except CanonicalFormError:
            return str(value)
        return value
    if depth >= MAX_DEPTH:
        return f"[nested deeper than {MAX_DEPTH} levels]"
    if isinstance(value, list):
        return [safe_copy(item, depth + 1) for item in value]
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for name, item in value.items():
        name = safe_copy(name)
        normal = unicodedata.normalize("NFC", name)
        if normal not in seen:
            seen.add(normal)
            out[name] = safe_copy(item, depth + 1)
    return out


def sha256_hex(value: object) -> str:
    """The lower-case hex SHA-256 of :func:`canonical_bytes` of ``value`` (64 characters)."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
