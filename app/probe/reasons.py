"""The status classes of a probe result and the documented table of reason keys.

Every result has one status class and one reason key from :data:`REASONS`; a reason belongs to
exactly one status. Reason keys are a stable API: add new ones, never rename or reuse one.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

Status = Literal[
    "ok",
    "auth",
    "not_found",
    "client_error",
    "server_error",
    "redirect",
    "not_mcp",
    "timeout",
    "tls",
    "dns",
    "unreachable",
]
STATUSES: Final[tuple[str, ...]] = get_args(Status)

#: reason key -> (status class, meaning)
REASONS: Final[dict[str, tuple[Status, str]]] = {
    "ok": ("ok", "The handshake succeeded (and, in a full probe, tools/list answered)."),
    # auth
    "auth_required": ("auth", "401 with a WWW-Authenticate challenge: the server wants credentials."),
    "auth_challenge_missing": ("auth", "401 without the WWW-Authenticate header the MCP spec requires."),
    "auth_insufficient": ("auth", "403 with a WWW-Authenticate challenge (for example insufficient_scope)."),
    # not_found
    "http_not_found": ("not_found", "404: nothing answers at this URL."),
    # client_error
    "bad_request": ("client_error", "400 without a more specific cause."),
    "session_required": ("client_error", "400/404 citing a missing or unknown session (Mcp-Session-Id)."),
    "protocol_version_rejected": ("client_error", "The server rejected every protocol version the probe offers."),
    "unsupported_protocol_version": (
        "client_error",
        "A modern server that supports only protocol versions the probe does not speak.",
    ),
    "modern_only": ("client_error", "A modern-only server that refused both server/discover and initialize."),
    "payment_required": ("client_error", "402: the server asks for payment."),
    "forbidden": ("client_error", "403 without a challenge: refused, not for want of credentials."),
    "origin_rejected": ("client_error", "403 naming the Origin header."),
    "waf_challenge": ("client_error", "A web application firewall or bot-check page answered instead of the server."),
    "method_not_allowed": ("client_error", "405: POST is not allowed at this URL."),
    "accept_rejected": ("client_error", "406: the server rejected the Accept header."),
    "host_rejected": ("client_error", "421: the server rejected the Host header (DNS-rebinding protection)."),
    "rate_limited": ("client_error", "429: rate limited; see retry_after."),
    "http_client_error": ("client_error", "Another 4xx status."),
    "jsonrpc_request_rejected": (
        "client_error",
        "A JSON-RPC error saying the request was invalid (-32600, -32602, -32700).",
    ),
    "method_not_found": ("client_error", "A JSON-RPC -32601 error to a method every MCP server must answer."),
    "sse_endpoint_cross_origin": (
        "client_error",
        "The legacy SSE endpoint event names another origin; the probe does not follow it.",
    ),
    # server_error
    "http_server_error": ("server_error", "A 5xx status."),
    "jsonrpc_error": ("server_error", "A JSON-RPC error response to the handshake (internal or server-defined)."),
    "invalid_result": ("server_error", "A JSON-RPC result that is not an object where the MCP spec requires one."),
    "session_id_conflict": (
        "server_error",
        "The initialize answer carried Mcp-Session-Id on several lines with different values (RFC 9110 section 5.3).",
    ),
    "reply_incomplete": (
        "server_error",
        "The reply body broke off (closed early, shorter than its Content-Length, or stalled) before the response.",
    ),
    # redirect
    "redirect": ("redirect", "A 3xx redirect; never followed. See location."),
    # not_mcp
    "html_page": ("not_mcp", "A 2xx HTML page instead of a JSON-RPC response."),
    "not_jsonrpc": ("not_mcp", "2xx JSON that holds no JSON-RPC response to the request."),
    "invalid_json": ("not_mcp", "A 2xx body that claims or looks like JSON but does not parse."),
    "empty_reply": ("not_mcp", "A 2xx reply with an empty body to a request."),
    "no_response_in_stream": ("not_mcp", "An SSE stream that ended without the JSON-RPC response."),
    "sse_endpoint_missing": ("not_mcp", "An event stream that sent no endpoint event within 10 s."),
    "sse_endpoint_invalid": ("not_mcp", "The endpoint event's data is not a usable URL."),
    "unexpected_content": ("not_mcp", "A 2xx body that is neither JSON, SSE nor HTML."),
    "unsupported_encoding": ("not_mcp", "The reply used a content coding other than identity, gzip or deflate."),
    "reply_too_large": ("not_mcp", "The reply exceeded the size cap before the JSON-RPC response was complete."),
    "http_not_implemented": ("not_mcp", "501: the server does not implement POST here, so no MCP endpoint."),
    "invalid_http": ("not_mcp", "The peer did not speak HTTP/1.1 correctly."),
    # timeout
    "connect_timeout": ("timeout", "No TCP/TLS connection within the connect budget."),
    "read_timeout": ("timeout", "The reply did not arrive completely within the step budget."),
    "probe_deadline": ("timeout", "The whole probe ran out of time; what was learned is kept."),
    # tls
    "cert_expired": ("tls", "The certificate has expired."),
    "cert_not_yet_valid": ("tls", "The certificate is not valid yet."),
    "hostname_mismatch": ("tls", "The certificate does not cover the host name."),
    "self_signed": ("tls", "The certificate (chain) is self-signed."),
    "unknown_issuer": ("tls", "The certificate's issuer is not trusted."),
    "tls_handshake_failed": ("tls", "The TLS handshake failed for another reason."),
    # dns
    "dns_nxdomain": ("dns", "The host name does not exist."),
    "dns_no_records": ("dns", "The host name has no A or AAAA records."),
    "dns_timeout": ("dns", "The resolver did not answer in time."),
    "dns_failure": ("dns", "The resolver failed."),
    # unreachable
    "connection_refused": ("unreachable", "The connection was refused."),
    "connection_reset": ("unreachable", "The connection was reset."),
    "connection_closed": ("unreachable", "The server closed the connection without a response (after one retry)."),
    "network_unreachable": ("unreachable", "No route to the host."),
    "connect_failed": ("unreachable", "The connection failed for another reason."),
}


def status_of(reason: str) -> Status:
    """The status class a reason key belongs to.

    Raises:
        KeyError: for an unknown reason key.
    """
    return REASONS[reason][0]
