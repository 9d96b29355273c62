"""A scripted MCP server for the raw fixture server, with knobs for odd framings and rules.

It speaks just enough of MCP (``server/discover``, ``initialize``, ``tools/list``,
notifications, DELETE) to drive the probe through each path, and every oddity is a field.
"""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.servers.raw import Request, send, send_json


@dataclass
class MiniMcp:
    """A raw route handler acting as an MCP server; see the field names for the knobs."""

    reply: Literal["json", "sse"] = "json"
    line_end: str = "\n"
    priming: bool = False
    notifications_before: int = 0
    server_request_before: bool = False
    issue_session: str | None = None
    require_session: bool = False
    discover: Literal["modern", "not_initialized"] = "not_initialized"
    tools: list[str] = field(default_factory=lambda: ["alpha", "beta"])
    schemas: dict[str, Any] = field(default_factory=dict)  # a tool's inputSchema, else {"type": "object"}
    require_accept_both: bool = True
    protocol_version: str = "2025-11-25"
    initialize_lines: list[tuple[str, str]] = field(default_factory=list)  # field lines as sent, repeats kept

    def __call__(self, request: Request, conn: socket.socket) -> bool | None:
        accept = request.headers.get("accept", "")
        if self.require_accept_both and not ("application/json" in accept and "text/event-stream" in accept):
            error = {"code": -32000, "message": "Not Acceptable: Client must accept both"}
            send_json(conn, 406, {"jsonrpc": "2.0", "id": None, "error": error})
            return None
        if request.method == "DELETE":
            send(conn, 200)
            return None
        message = request.message
        method = message.get("method")
        if method == "server/discover" and self.discover == "not_initialized":
            error = {"code": -32000, "message": "Bad Request: Server not initialized"}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return None
        if (
            self.require_session
            and method != "initialize"
            and (self.issue_session is None or request.headers.get("mcp-session-id") != self.issue_session)
        ):
            error = {"code": -32000, "message": "Bad Request: Missing session ID"}
            send_json(conn, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return None
        if "id" not in message:
            send(conn, 202)
            return None
        headers = {"mcp-session-id": self.issue_session} if method == "initialize" and self.issue_session else {}
        repeated = self.initialize_lines if method == "initialize" else []
        self._answer(conn, message["id"], self._result(method), headers, repeated)
        return None

    def _result(self, method: object) -> dict[str, Any]:
        info = {"name": "mini", "version": "0.9", "title": "Mini"}
        if method == "server/discover":
            return {
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": info},
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "private",
            }
        if method == "initialize":
            return {"protocolVersion": self.protocol_version, "capabilities": {"tools": {}}, "serverInfo": info}
        if method == "tools/list":
            return {"tools": [{"name": n, "inputSchema": self.schemas.get(n, {"type": "object"})} for n in self.tools]}
        return {}

    def _answer(
        self,
        conn: socket.socket,
        request_id: object,
        result: dict[str, Any],
        headers: dict[str, str],
        repeated: list[tuple[str, str]],
    ) -> None:
        response = {"jsonrpc": "2.0", "id": request_id, "result": result}
        if self.reply == "json":
            send_json(conn, 200, response, headers, repeated)
            return
        end = self.line_end
        events: list[str] = []
        if self.priming:
            events.append(f"id: prime-1{end}data: {end}{end}")
        for i in range(self.notifications_before):
            note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": i}}
            events.append(f"event: message{end}data: {json.dumps(note)}{end}{end}")
        if self.server_request_before:
            ping = {"jsonrpc": "2.0", "id": "srv-1", "method": "ping"}
            events.append(f"data: {json.dumps(ping)}{end}{end}")
        events.append(f": keep-alive comment{end}event: message{end}id: 7{end}data: {json.dumps(response)}{end}{end}")
        body = "".join(events).encode()
        if not any(name.lower() == "content-type" for name, _ in repeated):
            headers = {"content-type": "text/event-stream"} | headers
        send(conn, 200, headers, body, repeated)
