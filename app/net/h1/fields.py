"""A response's header fields as they arrived: each line kept, names read without case.

RFC 9110 section 5.1: field names are case-insensitive; section 5.3: a recipient may combine
the lines of one name into one value joined by commas, in order (:meth:`Fields.get`), which is
right only for list fields (:mod:`app.net.fields` reads singletons from :meth:`Fields.get_list`).
Values are read as ASCII, else as UTF-8, else as ISO-8859-1 (RFC 9110 section 5.5: field values
are octets; a non-ASCII value is opaque, and these readings never fail). The index is built
once per response, so each lookup is one dictionary read.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping


def _text(raw: bytes) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("iso-8859-1")


class Fields(Mapping[str, str]):
    """The fields of one response; a mapping of lower-cased name to the lines' combined value."""

    __slots__ = ("_by_name", "_lines")

    def __init__(self, lines: list[tuple[bytes, bytes]]) -> None:
        self._lines = [(_text(name).lower(), _text(value)) for name, value in lines]
        by_name: dict[str, list[str]] = {}
        for name, value in self._lines:
            if name in by_name:
                by_name[name].append(value)
            else:
                by_name[name] = [value]
        self._by_name = by_name

    def get_list(self, name: str) -> list[str]:
        """Every line's value of field ``name``, in the order they came (empty when absent)."""
        return list(self._by_name.get(name.lower(), ()))

    def multi_items(self) -> list[tuple[str, str]]:
        """``(lower-cased name, value)`` for each line, in order."""
        return list(self._lines)

    def __getitem__(self, name: str) -> str:
        return ", ".join(self._by_name[name.lower()])

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._by_name

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return f"Fields({self._lines!r})"
