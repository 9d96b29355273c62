"""A scripted legacy HTTP+SSE server (MCP 2024-11-05) for the raw fixture server.

``GET <stream path>`` answers an event stream that first sends ``endpoint`` (with whatever
data the test chooses), then relays responses to the POSTs the message route accepted.
"""

from __future__ import annotations

import json
import queue
import socket
from dataclasses import dataclass, field
from typing import Any

from tests.servers.raw import RawServer, Request, send

STOP = object()


@dataclass
class MiniSse:
    """Knobs: ``endpoint`` (event data; ``None`` sends no endpoint event), ``answer`` (relay
    responses), ``post_status`` (the POST reply status), ``tools``, ``close_after_endpoint``."""

    endpoint: str | None = "/messages?sessionId=abc"
    answer: bool = True
    post_status: int = 202
    tools: list[Any] = field(default_factory=lambda: ["one", "two"])
    close_after_endpoint: bool = False
    streams: list[queue.Queue[object]] = field(default_factory=list)

    def install(self, server: RawServer, stream_path: str = "/sse", message_path: str = "/messages") -> None:
        """Register the stream route (GET; POST answers 405) and the message route."""
        server.routes[stream_path] = self.stream
        server.routes[message_path] = self.message

    def stream(self, request: Request, conn: socket.socket) -> bool:
        if request.method != "GET":
            send(conn, 405, {"allow": "GET"})
            return False
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n\r\n")
        if self.endpoint is not None:
            conn.sendall(f"event: endpoint\ndata: {self.endpoint}\n\n".encode())
        if self.close_after_endpoint:
            return True
        outbox: queue.Queue[object] = queue.Queue()
        self.streams.append(outbox)
        while True:
            try:
                item = outbox.get(timeout=15)
            except queue.Empty:
                return True
            if item is STOP:
                return True
            conn.sendall(f"event: message\ndata: {json.dumps(item)}\n\n".encode())

    def message(self, request: Request, conn: socket.socket) -> None:
        message = request.message
        send(conn, self.post_status, {"content-type": "text/plain"}, b"Accepted")
        if not self.answer or "id" not in message or not self.streams:
            return
        method = message.get("method")
        result: dict[str, Any] = {}
        if method == "initialize":
            info = {"name": "mini-sse", "version": "2.0"}
            result = {"protocolVersion": "2024-11-05", "capabilities": {"tools": {}}, "serverInfo": info}
        elif method == "tools/list":
            result = {
                "tools": [
                    {"name": n, "inputSchema": {"type": "object"}} if isinstance(n, str) else n for n in self.tools
                ]
            }
        self.streams[-1].put({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "noise"}})
        self.streams[-1].put({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def stop(self) -> None:
        """End every open stream."""
        for outbox in self.streams:
            outbox.put(STOP)
