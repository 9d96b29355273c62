"""The MCP clients agents run, driven from the tests, each reduced to what it read.

- the Python SDK client (``mcp``), in this process, in both eras (``legacy``: 2025-11-25
  ``initialize``; ``auto``: 2026-07-28 ``server/discover`` against our server);
- the TypeScript SDK clients through ``tests/npm/clients/call.mjs``: ``@modelcontextprotocol/sdk``
  1.x (2025-11-25) and ``@modelcontextprotocol/client`` 2.x in both eras;
- the MCP Inspector CLI (``@modelcontextprotocol/inspector``, on the TypeScript SDK), in both eras,
  one process per call as an agent's shell would run it.

Each client lists the tools before it calls one, so the ones that validate ``structuredContent``
against the listed output schema do so; a result the client cannot read shows up as ``thrown``.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import RequestParamsMeta

from tests.servers.node import MODULES, NODE22, NPM, require

CALL_SCRIPT = NPM / "clients" / "call.mjs"
INSPECTOR = MODULES / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
#: A client process's whole run, sized for a loaded 2-core machine (a call takes about a second).
PROCESS_TIMEOUT_S = 180


@dataclass(frozen=True)
class Call:
    """One tool call of a plan (``pay``: the payer's private key, for the x402 MCP flow)."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] | None = None
    pay: str | None = None


@dataclass(frozen=True)
class Read:
    """What a client read from one call: a result, or the error the client raised instead."""

    is_error: bool | None = None
    document: Any = None  # structuredContent
    text: str | None = None  # the first text content
    meta: dict[str, Any] | None = None
    thrown: str | None = None  # the client's error message (a result it could not read)
    code: int | None = None  # a JSON-RPC error's code

    @property
    def reason(self) -> str | None:
        """The refusal's reason key as a reading agent finds it (x402 ``error``, else ``reason``)."""
        if not isinstance(self.document, dict):
            return None
        return cast(
            "str | None", self.document.get("error") if "x402Version" in self.document else self.document.get("reason")
        )


def from_result(result: Mapping[str, Any]) -> Read:
    """A ``CallToolResult`` as JSON (camelCase, as the TypeScript clients hand it on)."""
    texts = [item.get("text") for item in result.get("content", []) if item.get("type") == "text"]
    return Read(
        is_error=bool(result.get("isError", False)),
        document=result.get("structuredContent"),
        text=texts[0] if texts else None,
        meta=result.get("_meta"),
    )


def from_outcome(outcome: Mapping[str, Any]) -> Read:
    if "result" in outcome:
        return from_result(outcome["result"])
    thrown = outcome["thrown"]
    code = thrown.get("code")
    return Read(thrown=str(thrown.get("message")), code=code if isinstance(code, int) else None)


@dataclass(frozen=True)
class Session:
    """What one client run read: the negotiated protocol version, the tools listed, each call."""

    protocol_version: str | None
    tools: list[str]
    reads: list[Any]  # a Read, or for a paid call a dict of Reads: unpaid, paid, replayed


def python_sdk(url: str, era: str, calls: list[Call], headers: Mapping[str, str] | None = None) -> Session:
    """The calls through the Python SDK client (``era``: ``legacy`` or ``modern``)."""

    async def run() -> Session:
        reads: list[Any] = []
        async with (
            httpx2.AsyncClient(headers=dict(headers or {}), timeout=60) as http,
            Client(
                streamable_http_client(url, http_client=http), mode="legacy" if era == "legacy" else "auto"
            ) as client,
        ):
            tools = [tool.name for tool in (await client.list_tools()).tools]
            for call in calls:
                assert call.pay is None, "the Python SDK's paid flow is tests/payment/test_mcp_paid.py"
                try:
                    result = await client.call_tool(
                        call.tool, call.arguments, meta=cast("RequestParamsMeta | None", call.meta)
                    )
                except MCPError as exc:
                    reads.append(Read(thrown=exc.message, code=exc.code))
                    continue
                except Exception as exc:  # (what the client raises on a result it cannot read)
                    reads.append(Read(thrown=f"{type(exc).__name__}: {exc}"))
                    continue
                reads.append(from_result(result.model_dump(mode="json", by_alias=True, exclude_none=True)))
            version = getattr(client, "protocol_version", None)
        return Session(version if isinstance(version, str) else None, tools, reads)

    return anyio.run(run)


def typescript_sdk(
    url: str,
    sdk: str,
    era: str,
    calls: list[Call],
    headers: Mapping[str, str] | None = None,
    allowed_assets: list[dict[str, str]] | None = None,
) -> Session:
    """The calls through ``call.mjs`` (``sdk``: ``sdk`` for 1.x, ``client`` for 2.x;
    ``allowed_assets``: the x402 client's opt-in assets beyond the ones it knows)."""
    require(CALL_SCRIPT)
    plan = {"url": url, "sdk": sdk, "era": era, "headers": dict(headers or {}),
            "calls": [{k: v for k, v in vars(call).items() if v is not None} for call in calls]}  # fmt: skip
    if allowed_assets:
        plan["allowedAssets"] = allowed_assets
    done = subprocess.run(
        ["node", str(CALL_SCRIPT), json.dumps(plan)], cwd=NPM, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert "thrown" not in out, out["thrown"]  # (connecting and listing never fail here)
    reads = [
        {step: from_outcome(value) for step, value in outcome.items()} if "unpaid" in outcome else from_outcome(outcome)
        for outcome in out["calls"]
    ]
    return Session(out["protocolVersion"], out["tools"], reads)


def inspector(url: str, era: str, calls: list[Call], headers: Mapping[str, str] | None = None) -> Session:
    """The calls through the Inspector CLI, one process each (``--format json``)."""
    require(INSPECTOR)
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "MCP_CATALOG_PATH": f"{home}/mcp.json",
               "MCP_CLIENT_CONFIG_PATH": f"{home}/client.json"}  # fmt: skip
        base = [
            str(NODE22),
            str(INSPECTOR),
            "--cli",
            url,
            "--transport",
            "http",
            "--protocol-era",
            era,
            "--format",
            "json",
        ]
        for name, value in (headers or {}).items():
            base += ["--header", f"{name}: {value}"]

        def run(*args: str) -> tuple[int, str, str]:
            done = subprocess.run(
                [*base, *args], cwd=home, env=env, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S
            )
            return done.returncode, done.stdout, done.stderr

        code, out, err = run("--method", "tools/list")
        assert code == 0, err[-2000:]
        tools = [tool["name"] for tool in json.loads(out)["result"]["tools"]]
        reads: list[Any] = []
        for call in calls:
            assert call.pay is None and call.meta is None, "the Inspector CLI sends no _meta of a call's own"
            code, out, err = run("--method", "tools/call", "--tool-name", call.tool,
                                 "--tool-args-json", json.dumps(call.arguments))  # fmt: skip
            reads.append(inspector_read(code, out, err))
    return Session(None, tools, reads)


#: The Inspector CLI's exit code for a result it read with ``isError: true``.
INSPECTOR_TOOL_IS_ERROR = 5


def inspector_read(code: int, out: str, err: str) -> Read:
    """One Inspector CLI run: its result line (exit 0, or 5 for ``isError``), else its error."""
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    results = [line["result"] for line in lines if "result" in line]
    if results and code in (0, INSPECTOR_TOOL_IS_ERROR):
        read = from_result(results[0])
        assert read.is_error == (code == INSPECTOR_TOOL_IS_ERROR), (code, out)
        return read
    errors = [line["error"] for line in (*lines, *(json.loads(x) for x in err.splitlines() if x.startswith("{")))]
    message = errors[0].get("message", "") if errors else (err or out)[-2000:]
    return Read(thrown=f"exit {code}: {message}")
