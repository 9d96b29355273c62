"""The canonical form: RFC 8785 test vectors, the NFC step, and every refusal."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import pickle
import struct
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from enum import IntEnum
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from app.canonical import (
    MAX_DEPTH,
    REASONS,
    CanonicalFormError,
    canonical_bytes,
    canonical_text,
    nfc,
    sha256_hex,
)

DATA = Path(__file__).resolve().parent / "data" / "rfc8785"
VECTORS = DATA / "json-canonicalization"
VECTOR_NAMES = sorted(path.name for path in (VECTORS / "input").glob("*.json"))

#: Vectors whose reference output differs from ours because of the NFC step, with our bytes
#: (``docs/fingerprints.md``, "Vectors where NFC makes us differ").
NFC_DIFFERS: dict[str, bytes] = {
    # "A" + U+030A (combining ring above) composes to U+00C5.
    "unicode.json": '{"Unnormalized Unicode":"\u00c5"}'.encode(),
    # U+FB33 (a composition exclusion) decomposes to U+05D3 U+05BC, which sorts before U+20AC.
    "weird.json": (
        '{"\\n":"Newline","\\r":"Carriage Return","1":"One","</script>":"Browser Challenge",'
        '"\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis",'
        '"\u05d3\u05bc":"Hebrew Letter Dalet With Dagesh","\u20ac":"Euro Sign","\U0001f602":"Smiley"}'
    ).encode(),
}


def _reference(name: str) -> bytes:
    return (VECTORS / "output" / name).read_bytes()


def _input(name: str) -> Any:
    return json.loads((VECTORS / "input" / name).read_bytes())


def _nfc_copy(value: Any) -> Any:
    """An independent NFC walk, for comparing with plain RFC 8785."""
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, list):
        return [_nfc_copy(item) for item in value]
    if isinstance(value, dict):
        return {unicodedata.normalize("NFC", key): _nfc_copy(item) for key, item in value.items()}
    return value


def _reason(value: object) -> str:
    with pytest.raises(CanonicalFormError) as caught:
        canonical_bytes(value)
    assert caught.value.reason in REASONS
    return caught.value.reason


# --- RFC 8785 test vectors -------------------------------------------------------------------


def test_every_reference_vector_is_present() -> None:
    assert VECTOR_NAMES == [
        "arrays.json",
        "french.json",
        "structures.json",
        "unicode.json",
        "values.json",
        "weird.json",
    ]
    for name in VECTOR_NAMES:
        hex_bytes = bytes.fromhex((VECTORS / "outhex" / name.replace(".json", ".txt")).read_text())
        assert hex_bytes == _reference(name)


@pytest.mark.parametrize("name", [name for name in VECTOR_NAMES if name not in NFC_DIFFERS])
def test_reference_vectors_match_byte_for_byte(name: str) -> None:
    assert canonical_bytes(_input(name)) == _reference(name)


@pytest.mark.parametrize("name", sorted(NFC_DIFFERS))
def test_reference_vectors_that_nfc_changes(name: str) -> None:
    value = _input(name)
    assert rfc8785.dumps(value) == _reference(name)  # plain JCS agrees with the reference
    ours = canonical_bytes(value)
    assert ours != _reference(name)
    assert ours == NFC_DIFFERS[name] == rfc8785.dumps(_nfc_copy(value))


def _appendix_b() -> Iterator[tuple[str, str, str]]:
    with (DATA / "rfc8785-appendix-b.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            yield row["ieee754"], row["json"], row["comment"]


@pytest.mark.parametrize(("bits", "expected", "comment"), list(_appendix_b()))
def test_rfc8785_appendix_b_numbers(bits: str, expected: str, comment: str) -> None:
    number = struct.unpack(">d", bytes.fromhex(bits))[0]
    if expected:
        assert canonical_bytes(number) == expected.encode(), comment
        assert canonical_bytes([number]) == f"[{expected}]".encode()
    else:
        assert not math.isfinite(number)
        assert _reason(number) == "non_finite_number"


def _es6_numbers() -> Iterator[int]:
    """The IEEE-754 bit patterns of the reference ``es6testfile`` (its ``numgen`` sequence)."""
    yield from (int(word, 16) for word in (DATA / "es6-numgen-static.txt").read_text().split())
    yield from (0x0010000000000000 + index for index in range(2000))
    block = bytes(32)
    while True:
        block = hashlib.sha256(block).digest()
        for offset in range(0, 32, 8):
            bits = int.from_bytes(block[offset : offset + 8], "little")
            number = struct.unpack("<d", block[offset : offset + 8])[0]
            if number != 0 and math.isfinite(number):
                yield bits


def test_es6_number_file_checksums() -> None:
    """The first 100,000 lines of es6testfile100m.txt, rebuilt with our numbers, hash as published."""
    published = {
        1000: "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687",
        10000: "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892",
        100000: "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7",
    }
    digest = hashlib.sha256()
    for line, bits in enumerate(_es6_numbers(), start=1):
        number = struct.unpack("<d", bits.to_bytes(8, "little"))[0]
        digest.update(f"{bits:x},".encode() + canonical_bytes(number) + b"\n")
        if line in published:
            assert digest.hexdigest() == published[line], line
        if line == max(published):
            break


def test_rfc8785_property_sorting_sample() -> None:
    """RFC 8785 section 3.2.3: the sample sorts as printed, except the key NFC decomposes."""
    value = json.loads((DATA / "rfc8785-sorting.json").read_bytes())
    printed = (DATA / "rfc8785-sorting.expected.txt").read_text().splitlines()
    assert list(json.loads(rfc8785.dumps(value)).values()) == printed
    ours = list(json.loads(canonical_bytes(value)).values())
    hebrew = "Hebrew Letter Dalet With Dagesh"
    assert ours == [*printed[:4], hebrew, *[item for item in printed[4:] if item != hebrew]]


# --- The NFC step ----------------------------------------------------------------------------


def test_nfc_applies_to_keys_and_values_at_every_depth() -> None:
    decomposed = {"cafe\u0301": ["cafe\u0301", {"n\u0303": "A\u030a"}]}
    assert canonical_bytes(decomposed) == '{"caf\u00e9":["caf\u00e9",{"\u00f1":"\u00c5"}]}'.encode()
    assert canonical_bytes(decomposed) == canonical_bytes(_nfc_copy(decomposed))


@pytest.mark.parametrize(
    "value",
    [
        {"e\u0301": 1, "\u00e9": 2},  # decomposed and precomposed e acute
        {"\u1100\u1161": 1, "\uac00": 2},  # Hangul jamo and syllable
        {"\u212b": 1, "\u00c5": 2},  # Angstrom sign is canonically Å
        [{"x": {"o\u0308": True, "\u00f6": False}}],  # nested
    ],
)
def test_keys_that_collide_after_nfc_are_refused(value: object) -> None:
    assert _reason(value) == "duplicate_key"


def test_nfc_keeps_compatibility_characters() -> None:
    # NFC, not NFKC: the ligature and the full-width letter stay, so they do not collide.
    assert (
        canonical_bytes({"\ufb01": 1, "fi": 2, "\uff21": 3, "A": 4}) == '{"A":4,"fi":2,"\ufb01":1,"\uff21":3}'.encode()
    )


def test_nfc_helper() -> None:
    assert nfc("A\u030a") == "\u00c5"
    with pytest.raises(CanonicalFormError) as caught:
        nfc("\udc00")
    assert caught.value.reason == "lone_surrogate"


# --- Sorting ---------------------------------------------------------------------------------


def test_keys_sort_by_utf16_code_units() -> None:
    # U+1F600 is D83D DE00 in UTF-16, so it sorts before U+E000 and U+FB01, though its code
    # point is larger; by code point (Python's order) it would come last.
    value = {"\ufb01x": 1, "\U0001f600": 2, "\ue000": 3, "z": 4}
    assert sorted(value) == ["z", "\ue000", "\ufb01x", "\U0001f600"]
    assert canonical_bytes(value) == '{"z":4,"\U0001f600":2,"\ue000":3,"\ufb01x":1}'.encode()


def test_keys_sort_as_raw_strings() -> None:
    assert canonical_bytes({"b": 1, "a\n": 2, "a": 3, "": 4, "aa": 5}) == b'{"":4,"a":3,"a\\n":2,"aa":5,"b":1}'


# --- Refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, [1.0, {"x": math.nan}]])
def test_non_finite_numbers_are_refused(value: object) -> None:
    assert _reason(value) == "non_finite_number"


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", '{"a": [NaN]}'])
def test_non_finite_numbers_python_json_accepts_are_refused(text: str) -> None:
    assert _reason(json.loads(text)) == "non_finite_number"


@pytest.mark.parametrize(
    "value",
    [
        "\ud800",
        "a\udfffb",
        "\ud83d\ude00",  # a pair held as two code points is not a character in Python
        {"\udead": 1},
        [{"ok": ["x", "\ud800"]}],
        json.loads('"\\ud800"'),
        json.loads('{"\\udc00": 1}'),
    ],
)
def test_lone_surrogates_are_refused(value: object) -> None:
    assert _reason(value) == "lone_surrogate"


def test_surrogate_pairs_in_json_text_are_characters() -> None:
    assert canonical_bytes(json.loads('"\\ud83d\\ude00"')) == '"\U0001f600"'.encode()


@pytest.mark.parametrize(
    "value",
    [
        2**53 + 1,
        -(2**53) - 1,
        2**63 - 1,
        2**64 - 1,
        2**68,  # exactly a double, but JCS writes it 295147905179352830000
        10**21,  # JCS writes 1e+21
        10**400,  # no double at all
        [1, {"big": 12345678901234567890}],
    ],
)
def test_integers_a_double_would_round_are_refused(value: object) -> None:
    assert _reason(value) == "number_out_of_range"


def test_integers_too_long_to_print_are_refused() -> None:
    assert _reason(-(10**5000)) == "number_out_of_range"  # beyond Python's int-to-str limit


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2**53 - 1, b"9007199254740991"),
        (2**53, b"9007199254740992"),
        (-(2**53), b"-9007199254740992"),
        (100000000000000000000, b"100000000000000000000"),
        (295147905179352830000, b"295147905179352830000"),
        (999999999999999900000, b"999999999999999900000"),
        (1e21, b"1e+21"),
        (float(2**68), b"295147905179352830000"),
        (-0.0, b"0"),
        (4.50, b"4.5"),
        (True, b"true"),
        (False, b"false"),
        (None, b"null"),
    ],
)
def test_numbers_and_literals(value: object, expected: bytes) -> None:
    assert canonical_bytes(value) == expected


class _Level(IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    "value",
    [
        b"bytes",
        bytearray(b"x"),
        {1, 2},
        frozenset(),
        object(),
        Decimal("1.5"),
        datetime(2026, 1, 1, tzinfo=UTC),
        {1: "int key"},
        {None: "null key"},
        {("a",): "tuple key"},
        [1, 2, {"x": b"nested"}],
        1j,
    ],
)
def test_non_json_types_are_refused(value: object) -> None:
    assert _reason(value) == "unsupported_type"


def test_json_subclasses_are_their_base_types() -> None:
    class Text(str):
        def __str__(self) -> str:
            return "not this"

    assert (
        canonical_bytes({"level": _Level.HIGH, Text("k"): Text("v"), "t": (1, 2)}) == b'{"k":"v","level":3,"t":[1,2]}'
    )


def _nested(levels: int, kind: str) -> object:
    value: object = 0
    for _ in range(levels):
        value = [value] if kind == "list" else {"k": value}
    return value


@pytest.mark.parametrize("kind", ["list", "dict"])
def test_nesting_up_to_64_levels_and_no_deeper(kind: str) -> None:
    assert canonical_bytes(_nested(MAX_DEPTH, kind)).count(b"0") == 1
    assert _reason(_nested(MAX_DEPTH + 1, kind)) == "too_deep"
    assert _reason(_nested(100_000, kind)) == "too_deep"


def test_cycles_are_too_deep() -> None:
    loop: list[object] = []
    loop.append(loop)
    assert _reason(loop) == "too_deep"


def test_error_is_a_value_error_with_a_stable_reason() -> None:
    with pytest.raises(ValueError) as caught:
        canonical_bytes(math.nan)
    assert isinstance(caught.value, CanonicalFormError)
    assert caught.value.reason == "non_finite_number"
    copied = pickle.loads(pickle.dumps(caught.value))
    assert (copied.reason, str(copied)) == ("non_finite_number", str(caught.value))
    assert str(CanonicalFormError("too_deep")) == "too_deep"
    assert set(REASONS) == {
        "duplicate_key",
        "non_finite_number",
        "number_out_of_range",
        "lone_surrogate",
        "unsupported_type",
        "too_deep",
        "not_stream_safe",
    }


def test_regression_a_long_run_of_combining_marks_is_refused_before_normalising() -> None:
    """240 kB of alternating marks in a tool schema held the event loop for 15 s in NFC."""
    bomb = {"description": "a" + "\u0301\u0316" * 60000}
    for write in (canonical_bytes, lambda v: canonical_text(json.dumps(v, ensure_ascii=False).encode())):
        with pytest.raises(CanonicalFormError) as refused:
            write(bomb)
        assert refused.value.reason == "not_stream_safe"
    assert canonical_bytes(["a" + "\u0316" * 30]) == '["a{}"]'.format("\u0316" * 30).encode()


# --- sha256_hex and idempotence --------------------------------------------------------------


def test_sha256_hex_is_the_digest_of_the_canonical_bytes() -> None:
    value = {"b": [1, 2.5], "a": "caf\u0065\u0301"}
    digest = sha256_hex(value)
    assert digest == hashlib.sha256('{"a":"caf\u00e9","b":[1,2.5]}'.encode()).hexdigest()
    assert len(digest) == 64
    assert digest == digest.lower()


@pytest.mark.parametrize("name", VECTOR_NAMES)
def test_canonical_bytes_are_idempotent_on_the_vectors(name: str) -> None:
    once = canonical_bytes(_input(name))
    assert canonical_bytes(json.loads(once)) == once


@pytest.mark.parametrize("value", [1e20, 2**53, 9.999999999999997e22, [5e-324, -1.7976931348623157e308], {"x": 1e-7}])
def test_canonical_numbers_read_back_to_the_same_bytes(value: object) -> None:
    once = canonical_bytes(value)
    assert canonical_bytes(json.loads(once)) == once


# --- Properties ------------------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_json = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_json)
def test_property_generated_json(value: Any) -> None:
    try:
        once = canonical_bytes(value)
    except CanonicalFormError as exc:  # only keys that collide after NFC may be refused
        assert exc.reason == "duplicate_key"
        return
    assert once == rfc8785.dumps(_nfc_copy(value))
    assert canonical_bytes(json.loads(once.decode("utf-8"))) == once


@settings(max_examples=300, deadline=None)
@given(st.integers() | st.integers(min_value=2**52, max_value=2**70).map(lambda n: int(float(n))))
def test_property_integers_are_written_as_themselves_or_refused(number: int) -> None:
    try:
        written = canonical_bytes(number)
    except CanonicalFormError as exc:
        assert exc.reason == "number_out_of_range"
        assert abs(number) > 2**53
        return
    assert written == str(number).encode()
    assert canonical_bytes(json.loads(written)) == written


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_property_floats_round_trip(number: float) -> None:
    written = canonical_bytes(number)
    assert float(written) == number
    assert canonical_bytes(json.loads(written)) == written


# --- The two writers: Python's JSON encoder where it agrees with RFC 8785, else rfc8785 --------


@pytest.mark.parametrize(
    "number",
    [1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 2.0**53, -(2.0**53), 2.0**53 - 1, 41.0, -0.0,
     0.1, 123.456, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 4.35, 0.30000000000000004],
)  # fmt: skip
def test_floats_at_the_writers_boundaries_are_written_as_rfc8785_does(number: float) -> None:
    assert canonical_bytes({"n": number, "list": [number, -number]}) == rfc8785.dumps(
        {"n": number, "list": [number, -number]}
    )


def test_keys_whose_code_point_and_utf16_orders_differ_are_sorted_by_utf16() -> None:
    # U+1F600 is the surrogate pair D83D DE00 in UTF-16, which sorts before U+E000 and U+FFFD.
    value = {"\ue000": 1, "\U0001f600": 2, "\ufffd": 3, "a": 4}
    assert canonical_bytes(value) == rfc8785.dumps(value)
    assert canonical_bytes(value).decode().index("\U0001f600") < canonical_bytes(value).decode().index("\ue000")


@settings(max_examples=1500, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
        | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4),
        max_leaves=20,
    )
)  # fmt: skip
def test_property_both_writers_agree_with_rfc8785(value: Any) -> None:
    try:
        written = canonical_bytes(value)
    except CanonicalFormError as exc:
        assert exc.reason == "duplicate_key"
        return
    assert written == rfc8785.dumps(_nfc_copy(value))


# --- canonical_text: the form of JSON text, at C speed where it can --------------------------


def _outcome(function: Any, value: Any) -> bytes | str:
    try:
        result: bytes = function(value)
        return result
    except CanonicalFormError as exc:
        return exc.reason


_ODD_TEXT = ["e\u0301", "\u00e9", "\ue000", "\U0001f600", "\ufffd", "\x00\x1f\x7f", "\u2028"]


@settings(max_examples=2000, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
        | st.text() | st.sampled_from(_ODD_TEXT),
        lambda children: st.lists(children, max_size=4) | st.dictionaries(
            st.text(max_size=4) | st.sampled_from(["\ue000", "\U0001f600", "e\u0301", "\u00e9"]), children, max_size=4
        ),
        max_leaves=25,
    ),
    st.booleans(),
)  # fmt: skip
def test_property_canonical_text_is_the_canonical_form_of_the_parsed_text(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    try:
        parsed = json.loads(text)
    except ValueError:
        return  # (text.encode of a lone surrogate: not UTF-8)
    assert _outcome(canonical_text, text) == _outcome(canonical_bytes, parsed)


@pytest.mark.parametrize("depth", [63, 64, 65, 200])
def test_canonical_text_refuses_what_is_nested_too_deep_as_canonical_bytes_does(depth: int) -> None:
    text = ("[" * depth + "]" * depth).encode()
    assert _outcome(canonical_text, text) == _outcome(canonical_bytes, json.loads(text))
    brackets_in_a_string = json.dumps({"s": "[" * 100}).encode()
    assert canonical_text(brackets_in_a_string) == canonical_bytes(json.loads(brackets_in_a_string))


@pytest.mark.parametrize(
    "text",
    [b'{"a":41.0}', b'{"a":1E3}', b'[9007199254740993]', b'[9007199254740992.0]', b'[1e-5,1e16,0.0001]',
     b'{"\\u00e9":1}', b'{"e\\u0301":1}', b'["\\ud83d\\ude00"]', b'["\\ud800"]', b'{"a":-0.0}', b'[NaN]'],
)  # fmt: skip
def test_canonical_text_on_the_tokens_its_fast_path_leaves_to_the_walk(text: bytes) -> None:
    assert _outcome(canonical_text, text) == _outcome(canonical_bytes, json.loads(text))
