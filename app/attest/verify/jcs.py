"""The canonical form, verifier side: RFC 8785 (JCS) over Unicode NFC, written from the RFC.

This module does not use the ``rfc8785`` package or :mod:`app.canonical` (the signer's):

- **Parsing** (:func:`parse`): RFC 8259 text through :func:`json.loads` with a hook that refuses
  an object holding a key twice (:class:`DuplicateKey`; I-JSON, RFC 7493 section 2.3) and
  refuses ``NaN``/``Infinity``, which are not JSON. Text nested deeper than
  :data:`MAX_NESTING` is refused before :func:`json.loads` sees it (:func:`app.jsonsafe.too_deep`):
  the decoder would otherwise stop at the interpreter's recursion limit, which differs from one
  process to another (and a raised one lets deep text crash the process); every verifier
  input is read under this one bound.
- **Serialising** (:func:`serialise`): section 3.2. No whitespace. Literals as written. Strings
  as ECMAScript's ``JSON.stringify`` writes them (section 3.2.2.2): ``\\"`` and ``\\\\``, the
  short escapes ``\\b \\f \\n \\r \\t``, other control characters as ``\\u00xx`` (lower-case
  hex), everything else as itself. Numbers as ECMAScript's ``Number.prototype.toString``
  (section 3.2.2.3, ECMA-262 ``Number::toString``), from the shortest digits that read back to
  the same double (Python's ``repr`` gives those). Object members sorted by the UTF-16 code
  units of their names (section 3.2.3). UTF-8 (section 3.2.4).
- **NFC**: every string and key of a canonical payload is already in Normalization Form C
  (our form is JCS over NFC, ``docs/fingerprints.md``); one that is not makes the payload
  non-canonical.

Integers follow the signer's rule (``docs/fingerprints.md``, "Integers"): every integer with
``|n| <= 2**53`` is written as itself; a larger one only if its decimal digits are exactly what
JCS writes for its nearest double (``100000000000000000000`` is, ``2**53 + 1`` is not), since
that is the one integer the double stands for. Other integers, lone surrogates and nesting
deeper than 64 levels have no canonical form (:class:`NotCanonical`); so has text Python's
``json`` cannot read (an integer of more than 4,300 digits, say).
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from typing import Any

from app import jsonsafe
from app.textruns import has_long_mark_run

MAX_DEPTH = 64
#: Deepest nesting of any JSON text the verifier reads (the input, the key document, the payload).
MAX_NESTING = 512
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f]')
_SURROGATE = re.compile("[\ud800-\udfff]")


class NotCanonical(ValueError):
    """A value with no canonical form (see the module docs)."""


class DuplicateKey(ValueError):
    """An object holds one key twice."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise DuplicateKey(name)
        out[name] = value
    return out


def _constant(name: str) -> Any:
    raise NotCanonical(f"{name} is not JSON")


def parse(text: bytes) -> Any:
    """Parse UTF-8 JSON text.

    Raises:
        DuplicateKey: an object holds a key twice.
        NotCanonical: not UTF-8 JSON (or ``NaN``/``Infinity``, nested deeper than
            :data:`MAX_NESTING`, an integer of more than 4,300 digits).
    """
    if jsonsafe.too_deep(text, MAX_NESTING):
        raise NotCanonical(f"JSON nested deeper than {MAX_NESTING} levels")
    try:
        return json.loads(text.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant)
    except (DuplicateKey, NotCanonical):
        raise
    except (ValueError, RecursionError) as exc:  # ValueError: also an integer too long for int()
        raise NotCanonical("not UTF-8 JSON text") from exc


def _stream_safe(value: str) -> str:
    """``value``, or :class:`NotCanonical` for more than 30 combining marks in a row: checked
    before any normalisation, whose cost grows with the square of such a run (UAX #15 section 13)."""
    if has_long_mark_run(value):
        raise NotCanonical("more than 30 combining marks in a row")
    return value


def _string(value: str, normalise: bool = False) -> str:
    if _SURROGATE.search(value):
        raise NotCanonical("a lone surrogate")
    _stream_safe(value)
    if normalise:
        value = unicodedata.normalize("NFC", value)
    elif unicodedata.normalize("NFC", value) != value:
        raise NotCanonical("a string not in Unicode NFC")
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), value) + '"'


def _number(value: float) -> str:
    if not math.isfinite(value):
        raise NotCanonical("NaN or an infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    # n: the position of the decimal point relative to the digits (ECMA-262 Number::toString).
    point = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(digits))
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= point <= 21:
        text = digits + "0" * (point - k)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * -point + digits
    else:
        power = point - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + ("e+" if power > 0 else "e-") + str(abs(power))
    return sign + text


def _integer(value: int) -> str:
    if abs(value) <= 2**53:
        return _number(float(value))
    # Beyond 2**53 only the integer its double's JCS form spells; from 10**21 up JCS writes an exponent.
    if abs(value) < 10**21 and _number(float(value)) == str(value):
        return str(value)
    raise NotCanonical("an integer beyond 2**53 that is not the JCS form of its double")


def _serialise(value: Any, depth: int, out: list[str], normalise: bool) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_string(value, normalise))
    elif isinstance(value, int):
        out.append(_integer(value))
    elif isinstance(value, float):
        out.append(_number(value))
    elif depth >= MAX_DEPTH:
        raise NotCanonical("nested deeper than 64 levels")
    elif isinstance(value, list):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _serialise(item, depth + 1, out, normalise)
        out.append("]")
    elif isinstance(value, dict):
        if len({unicodedata.normalize("NFC", _stream_safe(name)) for name in value}) != len(value):
            raise NotCanonical("two keys of an object are equal after Unicode NFC")
        out.append("{")
        # Sorted by the UTF-16 code units of the names themselves, not of their escaped form.
        order = sorted(value, key=lambda n: unicodedata.normalize("NFC", n).encode("utf-16-be", "surrogatepass"))
        for index, name in enumerate(order):
            if index:
                out.append(",")
            out.append(_string(name, normalise))
            out.append(":")
            _serialise(value[name], depth + 1, out, normalise)
        out.append("}")
    else:
        raise NotCanonical(f"{type(value).__name__} is not a JSON value")


def serialise(value: Any, *, normalise: bool = False) -> bytes:
    """The canonical bytes of a parsed JSON value.

    Args:
        value: the parsed value.
        normalise: put strings and keys in NFC first (for a value that was not signed as it is,
            such as a check answer); without it, a string not in NFC has no canonical form.

    Raises:
        NotCanonical: the value has none (see the module docs).
    """
    out: list[str] = []
    _serialise(value, 0, out, normalise)
    return "".join(out).encode("utf-8")
