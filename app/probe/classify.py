"""Turning what the wire showed into a reason key (and so a status class).

Policy, in order of precedence for a reply to a request:
1. 3xx is ``redirect`` (never followed).
2. 401 is ``auth``; 403 is ``auth`` only with a ``WWW-Authenticate`` challenge (RFC 9110
   section 11.6.1; MCP 2025-11-25 authorization), otherwise a WAF page, an Origin rejection
   (MCP 2025-11-25 transports: bad ``Origin`` -> 403) or a plain ``forbidden``.
3. Other 4xx/5xx map by status, refined by the body (session, protocol version, WAF).
4. A 2xx must carry the JSON-RPC response to our request. A JSON-RPC error body is never
   ``not_mcp``; a 2xx HTML page is.
Transport failures map by exception type and the OS/TLS error underneath.
"""

from __future__ import annotations

import errno
import re
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx2

from app.net.fields import single_value
from app.probe.exchange import Reply
from app.probe.jsonrpc import JsonObject, error_of
from app.probe.text import clean_text

_SESSION_WORDS = re.compile(rb"session|not initialized|not initialised", re.IGNORECASE)
_VERSION_WORDS = re.compile(rb"protocol[ -_]?version", re.IGNORECASE)
_ORIGIN_WORDS = re.compile(rb"origin", re.IGNORECASE)
_WAF_MARKERS = re.compile(
    rb"just a moment\.\.\.|attention required! \| cloudflare|cf-chl|challenge-platform|_incapsula_resource|"
    rb"incapsula incident|sucuri website firewall|ddos-guard|awswafintegration|captcha|"
    rb"access denied.{0,200}reference #",
    re.IGNORECASE | re.DOTALL,
)
_WAF_HEADERS = ("cf-mitigated", "x-amzn-waf-action", "x-sucuri-block", "x-datadome")
_MAX_RETRY_AFTER_S = 86_400


@dataclass(frozen=True, slots=True)
class Verdict:
    """A reason key plus the facts that go with it."""

    reason: str
    detail: str | None = None
    retry_after: int | None = None
    location: str | None = None


def retry_after_seconds(value: str | None, now: datetime | None = None) -> int | None:
    """Seconds to wait from a ``Retry-After`` value (RFC 9110 section 10.2.3): delta-seconds or an HTTP-date.

    Anything else (non-ASCII digits, absurd lengths, dates that overflow) gives ``None``.
    """
    if not value:
        return None
    value = value.strip()
    if len(value) > 64:
        return None
    if value.isascii() and value.isdigit():
        return min(int(value), _MAX_RETRY_AFTER_S)
    try:
        when = parsedate_to_datetime(value)
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        delta = (when - (now or datetime.now(UTC))).total_seconds()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    return max(0, min(int(delta + 0.999), _MAX_RETRY_AFTER_S))


def _is_waf(reply: Reply) -> bool:
    if any(name in reply.headers for name in _WAF_HEADERS):
        return True
    return reply.kind in ("html", "text") and bool(_WAF_MARKERS.search(reply.head))


def _error(reply: Reply) -> JsonObject | None:
    """The JSON-RPC error in a reply: our response's, or an id-less one in the body."""
    return error_of(reply.response) or reply.error_body


def _body_mentions(reply: Reply, pattern: re.Pattern[bytes]) -> bool:
    error = _error(reply)
    message = error.get("message") if error else None
    text = message.encode("utf-8", "replace") if isinstance(message, str) else reply.head[:2048]
    return bool(pattern.search(text))


def _detail(reply: Reply) -> str | None:
    error = _error(reply)
    if error is not None:
        return clean_text(error.get("message"), 200)
    return None


def classify_status(reply: Reply) -> Verdict | None:
    """The verdict for a non-2xx reply, or ``None`` for 2xx (see :func:`classify_reply`)."""
    status = reply.status
    detail = _detail(reply)
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        location = clean_text(single_value(reply.headers, "location"), 2048)
        return Verdict("redirect", detail, location=location)
    challenged = "www-authenticate" in reply.headers
    if status == 401:
        return Verdict("auth_required" if challenged else "auth_challenge_missing", detail)
    if status == 403:
        if challenged:
            return Verdict("auth_insufficient", detail)
        if _is_waf(reply):
            return Verdict("waf_challenge")
        return Verdict("origin_rejected" if _body_mentions(reply, _ORIGIN_WORDS) else "forbidden", detail)
    if status == 400:
        if _body_mentions(reply, _SESSION_WORDS):
            return Verdict("session_required", detail)
        if _body_mentions(reply, _VERSION_WORDS):
            return Verdict("protocol_version_rejected", detail)
        return Verdict("bad_request", detail)
    if status in (429, 503) and _is_waf(reply):
        return Verdict("waf_challenge")
    error = _error(reply)
    if status == 404 and error is not None and error.get("code") == -32601:
        return Verdict("method_not_found", detail)  # MCP 2026-07-28: unknown method -> 404 + -32601
    fixed = {402: "payment_required", 404: "http_not_found", 405: "method_not_allowed", 406: "accept_rejected"}
    fixed |= {421: "host_rejected", 429: "rate_limited"}
    if status in fixed:
        reason = fixed[status]
        if status == 404 and error is not None and _body_mentions(reply, _SESSION_WORDS):
            reason = "session_required"
        retry = retry_after_seconds(single_value(reply.headers, "retry-after")) if status == 429 else None
        return Verdict(reason, detail, retry_after=retry)
    if 400 <= status < 500:
        return Verdict("http_client_error", detail)
    if status >= 500 and _is_waf(reply):
        return Verdict("waf_challenge")
    if status == 501:
        return Verdict("http_not_implemented", detail)
    retry = retry_after_seconds(single_value(reply.headers, "retry-after")) if status == 503 else None
    return Verdict("http_server_error" if status >= 500 else "http_client_error", detail, retry_after=retry)


def classify_reply(reply: Reply) -> Verdict | None:
    """The verdict for a reply that should carry our JSON-RPC response; ``None`` when it does.

    A JSON-RPC *error* response is returned as ``None`` too: what it means depends on the
    step (see :func:`classify_error`).
    """
    verdict = classify_status(reply)
    if verdict is not None:
        return verdict
    if reply.response is not None:
        return None
    if reply.error_body is not None:
        return classify_error(reply.error_body)
    if reply.body_incomplete:
        return Verdict("reply_incomplete")
    if reply.unsupported_encoding:
        return Verdict("unsupported_encoding")
    if reply.truncated:
        return Verdict("reply_too_large")
    if reply.kind == "html":
        return Verdict("waf_challenge" if _is_waf(reply) else "html_page")
    if reply.invalid_json:
        return Verdict("invalid_json")
    if reply.kind == "sse":
        return Verdict("no_response_in_stream")
    if reply.kind == "json":
        return Verdict("not_jsonrpc")
    if reply.kind == "empty":
        return Verdict("empty_reply")
    return Verdict("unexpected_content")


def classify_error(error: JsonObject) -> Verdict:
    """The verdict for a JSON-RPC error object answered to the handshake (JSON-RPC 2.0 section 5.1)."""
    code = error.get("code")
    detail = clean_text(error.get("message"), 200)
    if code == -32601:
        return Verdict("method_not_found", detail)
    if code == -32602 and detail and "version" in detail.lower():
        return Verdict("protocol_version_rejected", detail)
    if code in (-32600, -32602, -32700):
        return Verdict("jsonrpc_request_rejected", detail)
    return Verdict("jsonrpc_error", detail)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    stack: list[BaseException] = [exc]
    while stack and len(seen) < 32:
        current = stack.pop()
        if any(current is s for s in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None:
                stack.append(linked)
    return seen


_VERIFY_CODES = {10: "cert_expired", 9: "cert_not_yet_valid", 62: "hostname_mismatch", 18: "self_signed"}
_VERIFY_CODES |= {19: "self_signed", 20: "unknown_issuer", 21: "unknown_issuer", 2: "unknown_issuer"}


def _tls_reason(error: ssl.SSLCertVerificationError) -> str:
    reason = _VERIFY_CODES.get(error.verify_code)
    if reason:
        return reason
    message = (error.verify_message or "").lower()
    if "hostname" in message or "ip address mismatch" in message:
        return "hostname_mismatch"
    return "tls_handshake_failed"


def classify_exception(exc: BaseException) -> Verdict:
    """The verdict for a transport failure (timeouts, refused connections, TLS, protocol errors)."""
    chain = _chain(exc)
    for item in chain:
        if isinstance(item, ssl.SSLCertVerificationError):
            return Verdict(_tls_reason(item))
    if isinstance(exc, httpx2.ConnectTimeout):
        return Verdict("connect_timeout")
    if isinstance(exc, TimeoutError | httpx2.TimeoutException):
        return Verdict("read_timeout")
    if any(isinstance(item, ssl.SSLError) for item in chain):
        return Verdict("tls_handshake_failed")
    if isinstance(exc, httpx2.RemoteProtocolError):
        text = str(exc).lower()
        return Verdict("connection_closed" if "disconnect" in text or "closed" in text else "invalid_http")
    for item in chain:
        if isinstance(item, OSError) and item.errno is not None:
            if item.errno == errno.ECONNREFUSED:
                return Verdict("connection_refused")
            if item.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED):
                return Verdict("connection_reset")
            if item.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH, errno.EADDRNOTAVAIL):
                return Verdict("network_unreachable")
    if isinstance(exc, httpx2.ReadError | httpx2.WriteError):
        return Verdict("connection_reset")
    return Verdict("connect_failed")
