"""The recorded answers of the HTTP routes: what one answer is recorded as, with its volatile parts
(times, ids made per run, nonces, signatures, latencies, rate-limit clocks) replaced by fixed
placeholders, and a readable comparison of two recordings.

- Values made per run (attestation ids, key ids, proof tokens) are learnt from the answers as
  they come and replaced everywhere (bodies, headers, HTML, URLs) by an alias numbered in the
  order they were first seen (``<attestation-1>``), so the recording still says which answer
  points at which.
- JSON is normalised recursively: by key (latencies ``*_ms``, public keys, signatures, digests
  of signed results), by value (ISO 8601 times, dates as days before today, ``<today-3>``; the
  MCP protocol revisions, which are dates too, stay), a DSSE envelope's payload decoded, a
  string holding a JSON document (an MCP tool result's text) parsed.
- HTML is recorded as the digest of the normalised page and its text; SVG and other text in
  full; PNG as its signature and size; Prometheus text as its metric families; the OpenAPI
  document as its digest and its operations.
- Headers: all but those of the request or the connection (``Date``, ``X-Request-Id``,
  ``Content-Length``), with clocks (``X-RateLimit-Reset``, ``Retry-After``), nonces and
  HTTP dates replaced, the ``ETag`` of a body with volatile parts learnt as an id (a badge
  holds its date), and the x402 ``PAYMENT-REQUIRED`` header decoded.
"""

from __future__ import annotations

import base64
import binascii
import difflib
import hashlib
import json
import re
import struct
from datetime import UTC, date, datetime
from html.parser import HTMLParser
from typing import Any, Final

import httpx2
import yaml

#: JSON keys whose string value is an id made per run: the alias kind of each.
ID_KEYS: Final = {
    "attestation_id": "attestation",
    "run_id": "attestation",
    "latest_attestation_id": "attestation",
    "keyid": "key",
    "token": "token",
}
#: JSON keys whose value changes from run to run whatever the inputs: replaced by ``<key>``.
VOLATILE_KEYS: Final = frozenset({"public_key", "sig", "retryAfter"})
#: Keys whose value is a digest of something that holds a time (the signed result).
DIGEST_KEYS: Final = frozenset({"result_sha256"})
#: ``*_ms`` keys that are settings, not measurements.
FIXED_MS: Final = frozenset({"slow_ms"})
#: The MCP protocol revisions: dates that are names, never replaced.
REVISIONS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"})

ISO_TIME: Final = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])"
)
DATE: Final = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
HTTP_DATE: Final = re.compile(r"\b[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\b")
NONCE: Final = re.compile(r"(nonce-|nonce=\")[A-Za-z0-9_-]{16,}")
ATTESTATION_LINK: Final = re.compile(r"/v1/attestations/([0-9a-f]{64})\b")
#: A latency as the pages print it.
MILLISECONDS: Final = re.compile(r"\b\d[\d,]*(?:\.\d+)? ms\b")
#: A latency in evidence JSON as a page shows it (``"total_ms": 9.4,``), settings kept.
_SETTINGS_MS: Final = "|".join(sorted(FIXED_MS))
EVIDENCE_MS: Final = re.compile(r'(?<=(?:"|;))(?!(?:' + _SETTINGS_MS + r')\b)(\w+_ms)(&#34;|"): \d+(?:\.\d+)?')


def _latencies(text: str) -> str:
    """``text`` with the latencies a page prints replaced (``12 ms``, and evidence's ``"total_ms": 9.4``)."""
    return EVIDENCE_MS.sub(lambda found: f"{found.group(1)}{found.group(2)}: <ms>", MILLISECONDS.sub("<ms>", text))


DROPPED_HEADERS: Final = frozenset({"date", "server", "x-request-id", "content-length", "connection"})
CLOCK_HEADERS: Final = frozenset({"x-ratelimit-reset", "retry-after"})
RATE_CLOCK: Final = re.compile(r";t=\d+")
PNG: Final = b"\x89PNG\r\n\x1a\n"


class Normaliser:
    """Replaces the volatile parts of answers (see the module docs); one per recording.

    Args:
        fixed: values known before the run (temp paths, ports) and their placeholders.
        today: the UTC day dates are counted back from (default: today).
    """

    def __init__(self, fixed: dict[str, str], today: date | None = None) -> None:
        self.fixed = dict(fixed)
        self.today = today or datetime.now(UTC).date()
        self.aliases: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    def learn(self, kind: str, value: str) -> None:
        """Take ``value`` as an id made per run, of ``kind``."""
        if len(value) >= 8 and value not in self.aliases:
            self._counts[kind] = self._counts.get(kind, 0) + 1
            self.aliases[value] = f"<{kind}-{self._counts[kind]}>"

    def learn_json(self, value: Any) -> None:
        """Learn the ids of a JSON document, in document order."""
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ID_KEYS and isinstance(item, str):
                    self.learn(ID_KEYS[key], item)
                self.learn_json(item)
        elif isinstance(value, list):
            for item in value:
                self.learn_json(item)
        elif isinstance(value, str) and value.startswith("{"):
            self.learn_json(_json_or_none(value))

    def learn_text(self, text: str) -> None:
        """Learn the attestation ids a page links to."""
        for found in ATTESTATION_LINK.finditer(text):
            self.learn("attestation", found.group(1))

    def _day(self, found: re.Match[str]) -> str:
        text = found.group(0)
        if text in REVISIONS:
            return text
        try:
            days = (self.today - date(*(int(part) for part in found.groups()))).days
        except ValueError:
            return text
        return "<today>" if days == 0 else f"<today{-days:+d}>"

    def text(self, text: str) -> str:
        """``text`` with every known value, time, date and nonce replaced."""
        for value, placeholder in sorted([*self.fixed.items(), *self.aliases.items()], key=lambda p: -len(p[0])):
            text = text.replace(value, placeholder)
        text = HTTP_DATE.sub("<http-date>", text)
        text = ISO_TIME.sub("<time>", text)
        text = DATE.sub(self._day, text)
        return NONCE.sub(lambda found: found.group(1) + "<nonce>", text)

    def json(self, value: Any, key: str | None = None) -> Any:
        """A JSON value with its volatile parts replaced, recursively, by key and by pattern."""
        if value is None or isinstance(value, bool):
            return value
        if key in VOLATILE_KEYS:
            return f"<{key}>"
        if key in DIGEST_KEYS and isinstance(value, str):
            return "<digest>"
        if key is not None and key.endswith("_ms") and key not in FIXED_MS and isinstance(value, int | float):
            return "<ms>"
        if isinstance(value, dict):
            if "payloadType" in value and isinstance(value.get("payload"), str):
                return {k: self._envelope_member(k, v) for k, v in value.items()}
            return {k: self.json(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, str):
            document = _json_or_none(value) if value.startswith(("{", "[")) else None
            if isinstance(document, dict | list):
                return {"json": self.json(document)}
            return self.text(value)
        return value

    def _envelope_member(self, key: str, value: Any) -> Any:
        """A DSSE envelope's payload is recorded decoded (the statement), its signatures without their bytes."""
        if key != "payload":
            return self.json(value, key)
        statement = _b64_json(value)
        if statement is None:
            return "<payload>"
        self.learn_json(statement)
        predicate = statement.get("predicate") if isinstance(statement, dict) else None
        if isinstance(predicate, dict) and predicate.get("subject_digest") == "result":
            # (the subject is then the digest of the result itself, which holds its times)
            statement["subject"] = [subject | {"digest": "<digest>"} for subject in statement.get("subject", [])]
        return {"decoded": self.json(statement)}

    def headers(self, response: httpx2.Response, volatile_body: bool) -> dict[str, str]:
        """The answer's headers (lower-cased names, sorted) but the dropped ones, normalised."""
        kept: dict[str, str] = {}
        for name, value in sorted((n.lower(), v) for n, v in response.headers.multi_items()):
            if name in DROPPED_HEADERS:
                continue
            if name in CLOCK_HEADERS and value.isdigit():
                value = "<seconds>"
            elif name == "etag" and volatile_body:
                self.learn("etag", value)  # (a 304 or a HEAD of the same badge shows it again)
            elif name == "payment-required":
                value = json.dumps(self.json(_b64_json(value)), sort_keys=True)
            value = RATE_CLOCK.sub(";t=<seconds>", self.text(value))
            kept[name] = f"{kept[name]}, {value}" if name in kept else value
        return kept


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _b64_json(value: str) -> Any:
    try:
        return json.loads(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError):
        return None


class _Text(HTMLParser):
    """The text of a page (entity references decoded), one stripped line per text node."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []

    def handle_data(self, data: str) -> None:
        self.lines.extend(line.strip() for line in data.splitlines() if line.strip())


def page_text(html: str) -> list[str]:
    """The text lines of a page."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return parser.lines


def metric_families(text: str) -> list[str]:
    """Prometheus text: the service's own metric families and their types (the samples' values
    and label sets follow the clock, the polling and the platform)."""
    return [
        line.removeprefix("# TYPE ")
        for line in text.splitlines()
        if line.startswith("# TYPE mcp_sonde_") and not line.split()[2].endswith("_created")
    ]


def openapi_outline(document: dict[str, Any], normalised: Any) -> dict[str, Any]:
    """An OpenAPI document: the digest of its normalised form, its version, servers and operations."""
    canonical = json.dumps(normalised, sort_keys=True, ensure_ascii=False).encode()
    operations = sorted(f"{method.upper()} {path}" for path, item in document["paths"].items() for method in item)
    return {
        "sha256": hashlib.sha256(canonical).hexdigest(),
        "openapi": document.get("openapi"),
        "info_version": document.get("info", {}).get("version"),
        "servers": normalised.get("servers"),
        "operations": operations,
    }


def png_facts(raw: bytes) -> dict[str, Any]:
    """A PNG's signature and size (its pixels hold the badge's date: not recorded)."""
    width, height = struct.unpack(">II", raw[16:24]) if raw[12:16] == b"IHDR" else (None, None)
    return {"png_signature": raw.startswith(PNG), "width": width, "height": height}


def record(response: httpx2.Response, normaliser: Normaliser) -> dict[str, Any]:
    """What one answer is recorded as: status, content type, headers and the normalised body."""
    media = response.headers.get("content-type", "")
    kind = media.split(";")[0].strip().lower()
    raw = response.content
    body: Any = None
    volatile = False
    if kind == "image/png" and raw:
        body, volatile = png_facts(raw), True
    elif (kind.endswith("json") or kind == "application/yaml") and raw:
        document = yaml.load(raw, Loader=yaml.BaseLoader) if kind == "application/yaml" else json.loads(raw)
        is_openapi = isinstance(document, dict) and "openapi" in document and "paths" in document
        if not is_openapi:  # (its examples are fixed values, not ids of this run)
            normaliser.learn_json(document)
        normalised = normaliser.json(document)
        volatile = normalised != document
        body = openapi_outline(document, normalised) if is_openapi else normalised
    elif raw:
        text = raw.decode("utf-8")
        normaliser.learn_text(text)
        normalised_text = normaliser.text(text)
        volatile = normalised_text != text
        if kind == "text/html":  # (the text read from the page as sent: placeholders look like tags)
            digest = hashlib.sha256(_latencies(normalised_text).encode()).hexdigest()
            lines = [_latencies(normaliser.text(line)) for line in page_text(text)]
            body = {"sha256": digest, "text": lines}
        elif kind == "text/plain" and "# TYPE" in text:
            body, volatile = {"metric_families": metric_families(text)}, True
        else:
            body = normalised_text.splitlines()
    headers = normaliser.headers(response, volatile)
    return {"status": response.status_code, "content_type": media, "headers": headers, "body": body}


def differences(recorded: dict[str, Any], answered: dict[str, Any]) -> list[str]:
    """A readable account of how two recordings (case name -> recorded case) differ."""
    lines: list[str] = []
    for name in sorted(recorded.keys() - answered.keys()):
        lines.append(f"- case {name!r} is recorded but was not answered")
    for name in sorted(answered.keys() - recorded.keys()):
        lines.append(f"+ case {name!r} was answered but is not recorded")
    for name in [name for name in answered if name in recorded and recorded[name] != answered[name]]:
        before = json.dumps(recorded[name], indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        after = json.dumps(answered[name], indent=1, sort_keys=True, ensure_ascii=False).splitlines()
        lines.append(f"~ case {name!r} ({answered[name].get('route')}) differs:")
        diff = difflib.unified_diff(before, after, "recorded", "answered", lineterm="", n=2)
        lines.extend("    " + line for line in diff)
    return lines
