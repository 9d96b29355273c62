"""The response fields' container: names without case, every line kept, values always readable."""

from __future__ import annotations

from app.net.fields import Conflict, singleton
from app.net.h1.fields import Fields


def test_names_are_read_without_case_and_lines_combine_in_order() -> None:
    fields = Fields([(b"Allow", b"GET"), (b"Content-Type", b"application/json"), (b"allow", b"POST")])
    assert fields["ALLOW"] == "GET, POST"
    assert fields.get("allow") == "GET, POST"
    assert fields.get_list("Allow") == ["GET", "POST"]
    assert "content-type" in fields and "Content-Type" in fields and "location" not in fields
    assert fields.get("location") is None and fields.get_list("location") == []
    assert list(fields) == ["allow", "content-type"] and len(fields) == 2
    assert fields.multi_items() == [("allow", "GET"), ("content-type", "application/json"), ("allow", "POST")]


def test_a_singleton_on_two_lines_reads_through_the_field_rules() -> None:
    assert singleton(Fields([(b"Mcp-Session-Id", b"abc"), (b"mcp-session-id", b" abc\t")]), "mcp-session-id") == "abc"
    conflict = singleton(Fields([(b"Location", b"/a"), (b"Location", b"/b")]), "location")
    assert isinstance(conflict, Conflict) and conflict.values == ("/a", "/b")


def test_values_beyond_ascii_never_fail_to_read() -> None:
    fields = Fields([(b"X-Utf8", "caf\u00e9".encode()), (b"X-Latin", b"caf\xe9"), (b"X-Bad", b"\xff\xfe")])
    assert fields["x-utf8"] == "caf\u00e9"
    assert fields["x-latin"] == "caf\u00e9"
    assert fields["x-bad"] == "\u00ff\u00fe"


def test_the_list_handed_out_is_a_copy() -> None:
    fields = Fields([(b"Allow", b"GET")])
    fields.get_list("allow").append("POST")
    assert fields.get_list("allow") == ["GET"]
