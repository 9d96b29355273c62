"""Tool results every MCP client reads: one shape for answers and refusals alike.

MCP 2025-06-18 and later ("Tools", "Structured Content" and "Output Schema"): a tool that
declares an ``outputSchema`` must return ``structuredContent`` that conforms to it, and a
tool's own failure is a result with ``isError: true`` ("Error Handling"). Clients differ on
what they check: the Python SDK client validates ``structuredContent`` against the schema only
when ``isError`` is false; the TypeScript SDK client (and the MCP Inspector built on it)
validates it whenever it is present, error or not. The x402 MCP transport (tool-result binding)
requires a payment requirement in ``structuredContent``. So the rule, for every tool here:

- an answer is a result whose ``structuredContent`` is the tool's document, its JSON also in
  the first text content (for clients that cannot read structured content);
- a refusal is a result with ``isError: true`` whose ``structuredContent`` is the problem
  details object of the HTTP route (RFC 9457, ``RefusalProblem``), or for a payment answer the
  x402 ``PaymentRequired`` document (``RefusalPaymentRequired``), the same JSON in the first text
  content;
- each tool's published ``outputSchema`` admits the three: ``{"type": "object", "anyOf":
  [<the document>, RefusalProblem, RefusalPaymentRequired]}``. The branches cannot be confused:
  a document has none of a problem's required members (and the check result's schema admits no
  others), and only a payment document has ``x402Version`` and ``accepts``.

A call with arguments that do not match the tool's input schema, or that hold a lone surrogate
(:func:`app.jsonsafe.has_lone_surrogate`), is a refusal like any other (``invalid_arguments``,
naming the fields, never their values): MCP 2025-11-25 "Error
Handling" makes input validation a tool execution error, so the model can correct its call. A
call of a tool that is not listed is the spec's protocol error, JSON-RPC ``-32602``; a fault of
our own is a refusal with ``internal_error``, its text kept in the log.

The refusal schemas are data (``refusals.json``); the document's schema is the one the SDK
derives from the tool's return annotation, whose ``$defs`` move to the root.
"""

from __future__ import annotations

import functools
import json
import logging
from importlib import resources
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult, TextContent, Tool
from pydantic import ValidationError

from app import jsonsafe
from app.checking.errors import ApiError
from app.http.problems import problem

logger = logging.getLogger(__name__)

#: The refusal branches' names in each output schema's ``$defs``.
REFUSALS = ("RefusalProblem", "RefusalPaymentRequired")


@functools.cache
def refusal_schemas() -> dict[str, Any]:
    """The refusal branches (``refusals.json``)."""
    loaded: dict[str, Any] = json.loads(resources.files(__package__).joinpath("refusals.json").read_text("utf-8"))
    assert set(loaded) == set(REFUSALS)
    return loaded


def admitting_refusals(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """A tool's output schema that admits its refusals too (see the module docs)."""
    if schema is None:
        return None
    document = {key: value for key, value in schema.items() if key != "$defs"}
    definitions = dict(schema.get("$defs", {}))
    clash = set(definitions) & set(REFUSALS)
    assert not clash, f"a tool's own schema defines {clash}"
    definitions.update(refusal_schemas())
    return {
        "type": "object",
        "$defs": definitions,
        "anyOf": [document, *({"$ref": f"#/$defs/{name}"} for name in REFUSALS)],
    }


class ToolServer(MCPServer):
    """The SDK server, listing each tool's output schema with its refusal branches and
    answering a call it cannot run in the same shape (see the module docs)."""

    def __init__(self, name: str, *, version: str, base_url: str) -> None:
        super().__init__(name, version=version)
        self.base_url = base_url

    async def list_tools(self) -> list[Tool]:
        """The tools, as :class:`MCPServer` lists them, each output schema admitting refusals."""
        listed = await super().list_tools()
        return [tool.model_copy(update={"output_schema": admitting_refusals(tool.output_schema)}) for tool in listed]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """The tool's result; a call it cannot run as a refusal, an unknown tool as ``-32602``."""
        if self._tool_manager.get_tool(name) is None:
            raise MCPError(INVALID_PARAMS, f"unknown tool: {name}")
        unencodable = sorted(
            "(a name that is no text)" if jsonsafe.has_lone_surrogate(field) else field
            for field, value in arguments.items()
            if jsonsafe.has_lone_surrogate([field, value])
        )
        if unencodable:
            message = f"these arguments hold a lone surrogate (U+D800-U+DFFF): {', '.join(unencodable)}"
            return tool_error(ApiError("invalid_arguments", message, 422), self.base_url)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError) or not isinstance(exc.__cause__, ValidationError):
                logger.exception("tool %r failed", name)  # (our tools raise nothing: a fault of ours)
                message = "the tool failed through a fault of its own; nothing was charged"
                return tool_error(ApiError("internal_error", message, 500), self.base_url)
            fields = sorted(
                {".".join(str(part) for part in err["loc"]) or "arguments" for err in exc.__cause__.errors()}
            )
            message = f"these arguments do not match the tool's input schema: {', '.join(fields)}"
            return tool_error(ApiError("invalid_arguments", message, 422), self.base_url)


def answer(document: dict[str, Any], *more: TextContent) -> CallToolResult:
    """A tool's answer: ``document`` as structured content and as the first text content."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(document)), *more], structured_content=document
    )


def tool_error(exc: ApiError, base_url: str) -> CallToolResult:
    """An API error as a refusal: the x402 document for payment answers, else the problem
    details object the HTTP route answers with (RFC 9457)."""
    document: dict[str, Any] = exc.body or problem(exc.reason, exc.message, exc.status_code, base_url)
    retry_after = exc.headers.get("Retry-After", "")
    if retry_after.isdigit():  # the HTTP route's Retry-After, as a field: seconds
        document = document | {"retryAfter": int(retry_after)}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(document))], structured_content=document, is_error=True
    )
