"""Tool fingerprints: SHA-256 of the canonical form of the tool set and of its input schemas.

Policy (``docs/fingerprints.md`` has the rules, a worked example and a recomputation):

- Only the allow-listed fields :data:`FINGERPRINT_FIELDS` (``name``, ``inputSchema``) enter a
  fingerprint, so a field a server adds or changes elsewhere (``_meta``, ``annotations``,
  ``title``, ``outputSchema``, ``description``) never changes one.
- ``toolset`` is the SHA-256 of the canonical form (:mod:`app.canonical`: Unicode NFC,
  then RFC 8785) of the JSON array of tool names, sorted.
- ``schema`` is the SHA-256 of the canonical form of the JSON array of
  ``{"name": ..., "inputSchema": ...}`` objects, sorted by name; a missing ``inputSchema`` is
  ``null``.
- Sorting is by the NFC form of the name, compared as sequences of Unicode code points (Python's
  ``sorted`` on ``str``). This is not the UTF-16 code unit order RFC 8785 section 3.2.3 uses for
  object keys: the two differ only between characters above U+FFFF and characters from U+E000
  to U+FFFF.
- Two tools whose names are equal after NFC make the list ambiguous, like keys that collide
  after NFC in an object (RFC 7493 section 2.3): ``CanonicalFormError(reason="duplicate_name")``.
- A digest is plain lower-case hex, 64 characters, without an algorithm prefix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.canonical import REASONS as CANONICAL_REASONS
from app.canonical import CanonicalFormError, nfc, sha256_hex

#: The fields of a tool that enter a fingerprint; nothing else does.
FINGERPRINT_FIELDS: tuple[str, ...] = ("name", "inputSchema")
#: Every ``reason`` :func:`fingerprints` may raise with.
REASONS = (*CANONICAL_REASONS, "duplicate_name")


@dataclass(frozen=True, slots=True)
class Fingerprints:
    """The two fingerprints of a tool list, each a lower-case hex SHA-256 (64 characters).

    Attributes:
        toolset: of the sorted tool names.
        schema: of the sorted ``{"name", "inputSchema"}`` objects.
    """

    toolset: str
    schema: str


def fingerprints(tools: Sequence[Mapping[str, Any]]) -> Fingerprints:
    """The fingerprints of raw ``tools/list`` entries (distinct names, each a string).

    Raises:
        CanonicalFormError: a name or schema has no canonical form, or two names are equal
            after NFC (``reason`` is one of :data:`REASONS`).
    """
    entries: dict[str, dict[str, Any]] = {}
    for tool in tools:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if not isinstance(name, str):
            raise CanonicalFormError("unsupported_type", "a tool without a string name")
        key = nfc(name)
        if key in entries:
            raise CanonicalFormError("duplicate_name", "two tool names are equal after Unicode NFC")
        entries[key] = {field: tool.get(field) for field in FINGERPRINT_FIELDS} | {"name": key}
    names = sorted(entries)
    return Fingerprints(
        toolset=sha256_hex(names),
        schema=sha256_hex([entries[name] for name in names]),
    )
