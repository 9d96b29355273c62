"""The SSE parser against the WHATWG event-stream rules."""

from __future__ import annotations

import pytest

from app.probe.sse import SseEvent, SseParser


def parse(stream: bytes, chunk: int | None = None) -> list[SseEvent]:
    parser = SseParser()
    events: list[SseEvent] = []
    step = chunk or len(stream) or 1
    for i in range(0, len(stream), step):
        events += parser.feed(stream[i : i + step])
    return events + parser.close()


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("chunk", [None, 1, 2, 3])
def test_line_endings_and_chunking(end: bytes, chunk: int | None) -> None:
    stream = end.join([b"event: message", b"id: 1", b"data: a", b"data: b", b"", b"data: c", b"", b""])
    events = parse(stream, chunk)
    assert [(e.event, e.data, e.id) for e in events] == [("message", "a\nb", "1"), ("message", "c", "1")]
    assert all(e.terminated for e in events)


def test_crlf_split_across_chunks_is_one_line_end() -> None:
    parser = SseParser()
    assert parser.feed(b"data: x\r") == []
    assert [e.data for e in parser.feed(b"\n\r")] == ["x"]  # the LF pairs with the CR; the next CR is a blank line
    assert parser.feed(b"\n") == []  # the LF that completes that CRLF adds no second blank line
    assert [e.data for e in parser.feed(b"data: y\n\n")] == ["y"]


def test_comments_retry_and_unknown_fields() -> None:
    parser = SseParser()
    events = parser.feed(b": hello\nretry: 2500\nretry: soon\nfoo: bar\ndata\n\n")
    assert [e.data for e in events] == [""]
    assert parser.retry_ms == 2500


def test_empty_data_buffer_dispatches_nothing() -> None:
    assert parse(b"event: ping\n\nid: 5\n\n") == []


def test_priming_event_has_empty_data() -> None:
    events = parse(b"id: prime\ndata: \n\n")
    assert [(e.data, e.id) for e in events] == [("", "prime")]


def test_space_after_colon_is_removed_once() -> None:
    assert [e.data for e in parse(b"data:  two spaces\ndata:none\n\n")] == [" two spaces\nnone"]


def test_id_with_nul_is_ignored() -> None:
    events = parse(b"id: ok\n\nid: bad\x00\ndata: x\n\n")
    assert events[0].id == "ok"


def test_byte_order_mark_and_utf8_split() -> None:
    text = "data: héllo €\n\n".encode()
    events = parse(b"\xef\xbb\xbf" + text, chunk=1)
    assert [e.data for e in events] == ["héllo €"]


def test_invalid_utf8_is_replaced() -> None:
    assert [e.data for e in parse(b"data: \xff\xfe\n\n")] == ["\ufffd\ufffd"]


def test_stream_ending_without_blank_line() -> None:
    events = parse(b'data: {"a": 1}\n')
    assert [(e.data, e.terminated) for e in events] == [('{"a": 1}', False)]


def test_unterminated_last_line_is_discarded() -> None:
    assert parse(b"data: complete\n\ndata: partial") == [SseEvent("message", "complete", None, True)]


def test_long_line_in_tiny_chunks() -> None:
    parser = SseParser()
    parser.feed(b"data: ")
    for _ in range(50_000):
        assert parser.feed(b"a") == []
    events = parser.feed(b"\n\n")
    assert events[0].data == "a" * 50_000
