"""One HTTP/1.1 connection against raw servers on loopback that answer with scripted bytes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from app.net.dial import SocketDialler, open_connection
from app.net.h1 import connection as h1
from app.net.h1.connection import Connection
from app.net.h1.head import HEAD_LIMIT, request_head

pytestmark = pytest.mark.anyio

REQUEST = request_head("POST", b"/mcp", b"127.0.0.1", {"Accept": "application/json"}, b"{}") + b"{}"


@asynccontextmanager
async def connected(*answers: bytes, close: bool = False) -> AsyncIterator[Connection]:
    """A connection to a server that sends each of ``answers`` after a request head (then ends when ``close``)."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for answer in answers:
                await reader.readuntil(b"\r\n\r\n")
                writer.write(answer)
                await writer.drain()
            if close:
                writer.close()
            else:
                await reader.read()  # until the client closes
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    connection = await open_connection(await SocketDialler().connect_tcp("127.0.0.1", port, 10.0), None, 10.0)
    try:
        yield connection
    finally:
        connection.close()
        server.close()


async def exchange(connection: Connection) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    connection.send(REQUEST)
    status, fields = await connection.receive_head(10.0)
    body = bytearray()
    while chunk := await connection.read(10.0):
        body += chunk
    return status, fields, bytes(body)


async def test_a_response_read_to_its_end_leaves_the_connection_for_the_next_request() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    async with connected(answer, answer) as connection:
        assert (await exchange(connection))[::2] == (200, b"hi")
        assert connection.finished() and connection.usable
        assert (await exchange(connection))[::2] == (200, b"hi")


async def test_a_repeated_identical_content_length_is_read_as_that_length() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length:  2\r\n\r\nhi"
    async with connected(answer) as connection:
        status, fields, body = await exchange(connection)
    assert (status, body) == (200, b"hi") and [name.lower() for name, _ in fields] == [b"content-length"]


async def test_repeated_content_lengths_that_differ_are_an_invalid_response() -> None:
    async with connected(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi") as connection:
        with pytest.raises(httpx2.RemoteProtocolError, match="invalid HTTP response"):
            await exchange(connection)


async def test_bare_lf_line_ends_and_leading_empty_lines_are_read() -> None:
    async with connected(b"\r\nHTTP/1.1 200 OK\nContent-Length: 2\n\nhi") as connection:
        assert (await exchange(connection))[::2] == (200, b"hi")


async def test_interim_responses_are_skipped() -> None:
    answer = (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        b"HTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx"
    )
    async with connected(answer) as connection:
        status, fields, body = await exchange(connection)
    assert (status, fields, body) == (201, [(b"Content-Length", b"1")], b"x")


async def test_a_head_past_the_limit_is_refused() -> None:
    answer = b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * (HEAD_LIMIT + 10) + b"\r\n\r\n"
    async with connected(answer) as connection:
        with pytest.raises(httpx2.RemoteProtocolError, match="too large"):
            await exchange(connection)


async def test_a_body_without_framing_ends_with_the_connection_and_is_not_reused() -> None:
    async with connected(b"HTTP/1.1 200 OK\r\n\r\nuntil the end", close=True) as connection:
        assert (await exchange(connection))[::2] == (200, b"until the end")
        assert not connection.finished()


async def test_a_body_cut_short_is_a_framing_fault_after_what_arrived() -> None:
    async with connected(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", close=True) as connection:
        connection.send(REQUEST)
        assert (await connection.receive_head(10.0))[0] == 200
        assert await connection.read(10.0) == b"abc"
        with pytest.raises(httpx2.RemoteProtocolError, match="complete message body"):
            await connection.read(10.0)


async def test_a_connection_closed_before_a_head_is_a_disconnection() -> None:
    async with connected(close=True) as connection:
        await asyncio.sleep(0)
        with pytest.raises(httpx2.RemoteProtocolError, match="disconnected"):
            connection.send(REQUEST)
            await connection.receive_head(10.0)


async def test_no_head_in_time_is_a_read_timeout() -> None:
    async with connected() as connection:
        connection.send(REQUEST)
        with pytest.raises(httpx2.ReadTimeout):
            await connection.receive_head(0.2)


async def test_a_large_body_pauses_reading_until_the_caller_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(h1, "HIGH_WATER", 1024)
    size = 4 * 1024 * 1024
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(size).encode() + b"\r\n\r\n" + b"x" * size
    async with connected(answer) as connection:
        connection.send(REQUEST)
        await connection.receive_head(10.0)
        await asyncio.sleep(0.3)  # (time for the server to send what the socket takes)
        assert connection._paused and connection._buffered < size // 2  # not all of it read into memory
        read = 0
        while chunk := await connection.read(10.0):
            read += len(chunk)
    assert read == size


async def test_bytes_nobody_asked_for_make_the_connection_unusable() -> None:
    async with connected(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiEXTRA") as connection:
        await exchange(connection)
        await asyncio.sleep(0.05)
        assert not connection.finished() and not connection.usable


@pytest.mark.parametrize("value", ["a\r\nX-Injected: 1", "a\nb", "a\0b"])
def test_a_field_with_a_line_break_or_nul_is_refused(value: str) -> None:
    with pytest.raises(httpx2.LocalProtocolError):
        request_head("GET", b"/", b"h", {"Authorization": value}, None)


def test_regression_a_field_value_beyond_latin_1_is_refused_as_a_transport_error() -> None:
    """A server's event id sent back as ``Last-Event-ID`` raised UnicodeEncodeError: the probe ended in
    ``probe_internal_error`` instead of its verdict (``no_response_in_stream``)."""
    with pytest.raises(httpx2.LocalProtocolError):
        request_head("GET", b"/", b"h", {"Last-Event-ID": "ev-\u20ac"}, None)
    assert b"Last-Event-ID: caf\xe9\r\n" in request_head("GET", b"/", b"h", {"Last-Event-ID": "caf\u00e9"}, None)


def test_a_bodyless_post_says_its_length_is_zero() -> None:
    assert b"Content-Length: 0\r\n" in request_head("POST", b"/", b"h", {}, None)
    assert b"Content-Length" not in request_head("DELETE", b"/", b"h", {}, None)


async def test_regression_thousands_of_interim_responses_in_one_packet_are_refused_not_recursed() -> None:
    answer = b"HTTP/1.1 100 Continue\r\n\r\n" * 5000 + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    async with connected(answer) as connection:
        with pytest.raises(httpx2.RemoteProtocolError, match="interim responses"):
            await exchange(connection)


async def test_regression_a_second_response_in_the_same_bytes_changes_nothing_of_the_first() -> None:
    first = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    for second in (
        b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nJUNK",
    ):
        async with connected(first + second) as connection:
            status, fields, body = await exchange(connection)
            assert (status, fields, body) == (200, [(b"Content-Length", b"2")], b"hi")
            assert not connection.finished()  # (not reused: what followed was no answer to a request)
