"""The check route's request body: strict JSON, small, exactly the known fields."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx2
import pytest

from tests.conftest import Service

FREE = {"X-Free-Pool": "1"}


@pytest.fixture
def base(service: Service) -> Iterator[str]:
    with service() as url:
        yield url


@pytest.mark.parametrize(
    ("content", "headers", "status", "reason"),
    [
        (b'{"url": "https://mcp.example.com/mcp"}', {"content-type": "text/plain"}, 415, "unsupported_media_type"),
        (b'{"url": "https://mcp.example.com/mcp"}', {}, 415, "unsupported_media_type"),
        (b"{not json", {"content-type": "application/json"}, 400, "invalid_json"),
        (b"", {"content-type": "application/json"}, 400, "invalid_json"),
        (b"[" * 5000, {"content-type": "application/json"}, 400, "invalid_json"),
        (b'{"url": "https://a.example.com/", "x": 1}', {"content-type": "application/json"}, 422, "invalid_body"),
        (b"{}", {"content-type": "application/json"}, 422, "invalid_body"),
        (b'{"url": 5}', {"content-type": "application/json"}, 422, "invalid_body"),
        (b'["https://a.example.com/"]', {"content-type": "application/json"}, 422, "invalid_body"),
        (b'{"url": null}', {"content-type": "application/json"}, 422, "invalid_body"),
    ],
)
def test_bad_bodies(base: str, content: bytes, headers: dict[str, str], status: int, reason: str) -> None:
    response = httpx2.post(f"{base}/v1/mcp/check", content=content, headers=headers | FREE)
    assert response.status_code == status
    problem = response.json()
    assert response.headers["content-type"] == "application/problem+json"
    assert set(problem) == {"type", "title", "status", "detail", "reason"}
    assert (problem["reason"], problem["status"]) == (reason, status)
    assert problem["detail"] and problem["title"]
    # The type URI resolves to the problem type's description, with the same title.
    page = httpx2.get(f"{base}{urlsplit(problem['type']).path}")
    assert page.json() | {"type": problem["type"]} == {
        "type": problem["type"],
        "reason": reason,
        "title": problem["title"],
        "status": status,
        "body": "application/problem+json",
    }


def test_body_over_8_kb_declared(base: str) -> None:
    content = b'{"url": "https://a.example.com/' + b"a" * 9000 + b'"}'
    response = httpx2.post(f"{base}/v1/mcp/check", content=content, headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["reason"]) == (413, "body_too_large")


def test_body_over_8_kb_chunked(base: str) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"url": "https://a.example.com/'
        for _ in range(20):
            yield b"a" * 1000
        yield b'"}'

    response = httpx2.post(f"{base}/v1/mcp/check", content=chunks(), headers={"content-type": "application/json"})
    assert (response.status_code, response.json()["reason"]) == (413, "body_too_large")


def test_unknown_route_and_method(base: str) -> None:
    assert httpx2.get(f"{base}/nope").json()["reason"] == "not_found"
    response = httpx2.get(f"{base}/v1/mcp/check")
    assert (response.status_code, response.json()["reason"]) == (405, "method_not_allowed")


def test_body_that_trickles_gets_408(service: Service) -> None:
    with service(body_timeout_s=0.5) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(
                b"POST /v1/mcp/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                b"content-length: 40\r\n\r\n{"
            )
            sock.settimeout(5)
            started = time.monotonic()
            answer = b""
            while b"body_timeout" not in answer and time.monotonic() - started < 5:
                chunk = sock.recv(4096)  # headers and body may come in separate segments
                if not chunk:
                    break
                answer += chunk
    assert answer.startswith(b"HTTP/1.1 408")
    assert b'"body_timeout"' in answer
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("path", ["/mcp", "/v1/mcp/check"])
def test_client_leaving_mid_body_is_not_a_500(service: Service, path: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR)
    with service() as base:
        port = int(base.rsplit(":", 1)[1])
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                head += "Content-Length: 100\r\n\r\n{"
                sock.sendall(head.encode())
            time.sleep(0.1)
        after = httpx2.get(f"{base}/metrics").text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    assert 'status="500"' not in after
