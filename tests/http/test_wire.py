"""The service's HTTP/1.1 protocol bounds a request's head (app/http/wire.py), on a real uvicorn."""

from __future__ import annotations

import contextlib
import socket

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.http.wire import MAX_HEAD_BYTES, BoundedHttpTools
from tests.servers.uvicorn_thread import serve


async def echo(request: Request) -> PlainTextResponse:
    return PlainTextResponse(f"{len(await request.body())} {len(request.headers.get('x-big', ''))}")


APP = Starlette(routes=[Route("/", echo, methods=["GET", "POST"])])


def exchange(port: int, raw: bytes) -> bytes:
    """Send ``raw`` on one connection and read until the server closes it (or 30 s pass)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # (refused while we were still sending)
            sock.sendall(raw)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass
        return received


def test_a_huge_header_is_answered_431_and_the_connection_closed() -> None:
    with serve(APP, http=BoundedHttpTools) as port:
        huge = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"A" * (4 * 1024 * 1024) + b"\r\nConnection: close\r\n\r\n"
        answer = exchange(port, huge)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]
        after = exchange(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")  # (the server is fine)
        assert after.startswith(b"HTTP/1.1 200 ") and after.endswith(b"0 0")


def test_a_huge_request_line_is_answered_431() -> None:
    with serve(APP, http=BoundedHttpTools) as port:
        answer = exchange(port, b"GET /?" + b"q" * (MAX_HEAD_BYTES * 4) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:80]


def test_a_head_within_the_bound_and_a_large_body_are_served() -> None:
    with serve(APP, http=BoundedHttpTools) as port:
        value = b"v" * (MAX_HEAD_BYTES - 1024)
        body = b"b" * (1024 * 1024)
        first = b"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + value + b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body
        second = b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + value + b"\r\nConnection: close\r\n\r\n"
        answer = exchange(port, first + second)  # (pipelined: the body is never counted as a head)
        assert answer.count(b"HTTP/1.1 200 ") == 2, answer[:200]
        assert f"{len(body)} {len(value)}".encode() in answer and answer.endswith(f"0 {len(value)}".encode())
