"""Header fields that arrive on several lines (RFC 9110 sections 5.2 and 5.3).

A recipient may combine the field lines of one name into a single value, joined with commas,
in the order they came (section 5.3), and that is how a combined value reads back (httpx2's
``Headers.get``). That is right only for a field whose definition is a list (the ``#rule`` of
section 5.6.1). A field defined as one value, a *singleton*, cannot be a list: several lines of
it are the sender's error, and joining them makes a value that was never sent (``abc, abc``).
Where every line carries the same value (after the optional whitespace around it), the field
says that value once; RFC 9112 section 6.3 rule 5 lets a recipient read repeated identical
``Content-Length`` values that way, and the same reading is the only sound one for any
singleton. Different values are a conflict: the field says nothing the recipient may act on.

Each field the probe and the guarded client read, decided from its definition:

=====================  =========================================  ================================
Field                  Definition                                 Several lines
=====================  =========================================  ================================
Content-Type           singleton (RFC 9110 section 8.3)           same value: that value;
                                                                  different: none (the body is
                                                                  sniffed; ``content_type_conflict``)
Content-Length         singleton (section 8.6)                    read by the HTTP/1.1 parser
                                                                  (RFC 9112 section 6.3 rule 5):
                                                                  same value: that length;
                                                                  different: unrecoverable framing
                                                                  error (``invalid_http``)
Content-Encoding       list (section 8.4)                         combined
Allow                  list (section 10.2.1)                      combined
Location               singleton (section 10.2.2)                 same: that URL; different: none
                                                                  (``location_conflict``)
Retry-After            singleton (section 10.2.3); an HTTP-date   same: that value; different:
                       holds a comma, so a combined value cannot  no hint (``retry_after_conflict``)
                       be split back
WWW-Authenticate       list of challenges (section 11.6.1)        every line's challenges, in order
Mcp-Session-Id         singleton (MCP 2025-11-25 transports,      same: that id; different: the
                       "Session Management": visible ASCII, so    server's fault, the probe fails
                       never a comma or a space)                  with ``session_id_conflict``
MCP-Protocol-Version   singleton (MCP 2025-11-25 transports,      same: that version; different:
                       "Protocol Version Header")                 ``protocol_version_conflict``
=====================  =========================================  ================================
"""

from __future__ import annotations

from typing import Protocol


class FieldLines(Protocol):
    """Fields that give each line of a name (:class:`app.net.h1.fields.Fields`, ``httpx2.Headers``)."""

    def get_list(self, name: str) -> list[str]: ...


class Conflict:
    """Several lines of a singleton field with different values (the field says nothing usable)."""

    __slots__ = ("values",)

    def __init__(self, values: tuple[str, ...]) -> None:
        self.values = values

    def __repr__(self) -> str:
        return f"Conflict({self.values!r})"


def singleton(headers: FieldLines, name: str) -> str | Conflict | None:
    """The one value of singleton field ``name``: ``None`` when absent, :class:`Conflict` when its
    lines disagree, else the value (lines that repeat one value say it once)."""
    lines = headers.get_list(name)
    if not lines:
        return None
    values = tuple(dict.fromkeys(line.strip(" \t") for line in lines))
    if len(values) > 1:
        return Conflict(values)
    return values[0]


def single_value(headers: FieldLines, name: str) -> str | None:
    """:func:`singleton` for a caller that treats a conflict as absence."""
    value = singleton(headers, name)
    return value if isinstance(value, str) else None


def conflicted(headers: FieldLines, name: str) -> bool:
    """Whether singleton field ``name`` came on several lines with different values."""
    return isinstance(singleton(headers, name), Conflict)
