"""JSON-RPC 2.0 messages the probe sends, and how it reads what comes back.

Sources: JSON-RPC 2.0 specification (request, notification, response objects); MCP 2025-11-25
``basic/lifecycle`` (``initialize``, ``notifications/initialized``); MCP 2025-11-25
``server/utilities/pagination`` (``nextCursor``); MCP 2025-11-25 ``server/tools`` (``tools/call``);
MCP 2026-07-28 ``server/discover``, ``basic/index`` (request ``_meta`` keys) and
``basic/versioning`` (modern error codes).

Tolerance of response ids (JSON-RPC 2.0 section 5: the response "MUST be the same as the value
of the id member in the Request Object"): the probe sends integer ids only, and accepts a
response whose id is the same number spelled as another JSON type (``"3"`` or ``3.0`` for
``3``), as the JavaScript SDK's loose lookup does; :func:`id_key` gives the common key and the
reply notes the change (a warning, never a failure). ``true`` is never an id.
"""

from __future__ import annotations

from typing import Any, Final

JsonObject = dict[str, Any]

MODERN_VERSION: Final = "2026-07-28"
HANDSHAKE_VERSION: Final = "2025-11-25"
#: Versions negotiated through ``initialize`` (MCP 2024-11-05 to 2025-11-25).
HANDSHAKE_VERSIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
#: Versions spoken without a handshake (MCP 2026-07-28 and later) that this probe speaks.
MODERN_VERSIONS: Final = frozenset({MODERN_VERSION})

#: MCP 2026-07-28 ``basic/versioning`` error codes that only a modern server emits.
HEADER_MISMATCH: Final = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY: Final = -32021
UNSUPPORTED_PROTOCOL_VERSION: Final = -32022
METHOD_NOT_FOUND: Final = -32601
MODERN_ERROR_CODES: Final = frozenset(
    {HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)

_META_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
_META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"


def modern_meta(client_info: JsonObject) -> JsonObject:
    """The request ``_meta`` every 2026-07-28 request carries."""
    return {_META_VERSION: MODERN_VERSION, _META_CAPABILITIES: {}, _META_CLIENT_INFO: client_info}


def discover_request(request_id: int, client_info: JsonObject) -> JsonObject:
    """A ``server/discover`` JSON-RPC request offering 2026-07-28."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "server/discover",
        "params": {"_meta": modern_meta(client_info)},
    }


def initialize_request(request_id: int, client_info: JsonObject) -> JsonObject:
    """An ``initialize`` JSON-RPC request offering 2025-11-25 with no client capabilities."""
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": client_info},
    }


def initialized_notification() -> JsonObject:
    """The ``notifications/initialized`` JSON-RPC notification."""
    return {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tools_list_request(request_id: int, cursor: str | None, *, modern_client_info: JsonObject | None) -> JsonObject:
    """A ``tools/list`` JSON-RPC request; ``modern_client_info`` adds the 2026-07-28 ``_meta``."""
    params: JsonObject = {}
    if cursor is not None:
        params["cursor"] = cursor
    if modern_client_info is not None:
        params["_meta"] = modern_meta(modern_client_info)
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": params}


def is_response(message: object) -> bool:
    """A JSON-RPC response: an object with ``jsonrpc`` 2.0, an ``id``, and ``result`` or ``error``, no ``method``."""
    return (
        isinstance(message, dict)
        and "method" not in message
        and "id" in message
        and ("result" in message or "error" in message)
    )


def error_of(message: object) -> JsonObject | None:
    """The ``error`` object of a JSON-RPC error response (or of a bare error body), else ``None``.

    Accepts the id-less error bodies servers put in HTTP 4xx replies (MCP 2025-11-25
    ``basic/transports``: "a JSON-RPC error response that has no id").
    """
    if not isinstance(message, dict) or "method" in message:
        return None
    error = message.get("error")
    if isinstance(error, dict) and isinstance(error.get("code"), int) and not isinstance(error.get("code"), bool):
        return error
    return None


def tools_call_request(
    request_id: int, name: str, arguments: JsonObject, *, modern_client_info: JsonObject | None
) -> JsonObject:
    """A ``tools/call`` JSON-RPC request; ``modern_client_info`` adds the 2026-07-28 ``_meta``."""
    params: JsonObject = {"name": name, "arguments": arguments}
    if modern_client_info is not None:
        params["_meta"] = modern_meta(modern_client_info)
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def id_key(value: object) -> str | None:
    """A key under which ids of the same value meet: ``3``, ``3.0`` and ``"3"`` all give ``"3"``.

    ``None`` for values that cannot be an id of ours (booleans, null, objects, fractions).
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else None
    if isinstance(value, str) and len(value) <= 64:
        return value
    return None


def matches(message: object, request_id: int) -> bool:
    """``True`` when ``message`` is the response to our request ``request_id`` (see :func:`id_key`)."""
    if not is_response(message):
        return False
    assert isinstance(message, dict)
    return id_key(message.get("id")) == str(request_id)


def id_type_changed(message: JsonObject) -> bool:
    """The response's id is our integer spelled as another JSON type."""
    value = message.get("id")
    return not isinstance(value, int) or isinstance(value, bool)


def is_modern_error(error: JsonObject) -> bool:
    """A recognised 2026-07-28 JSON-RPC error (``basic/versioning``): proof the server speaks a modern version."""
    code = error.get("code")
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        data = error.get("data")
        return isinstance(data, dict) and isinstance(data.get("supported"), list)
    return code in MODERN_ERROR_CODES


def supported_versions(error: JsonObject) -> list[str]:
    """The ``data.supported`` list of a -32022 error, strings only."""
    data = error.get("data")
    supported = data.get("supported") if isinstance(data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
