"""Reading the body of ``POST /v1/mcp/diff`` strictly: two tool lists, each entry checked.

Policy: the body is read as for a check (:func:`app.http.bodies.check.read_body`: at most the
``diff_max_body_bytes`` setting, within ``body_timeout_s``; ``Content-Type`` must be
``application/json``), and parsed with no key given twice anywhere (``invalid_body``). It is
``{"before": [tools], "after": [tools]}`` and nothing else (``invalid_body``), each list at most
:data:`MAX_TOOLS` entries, as many as a probe keeps (``too_many_tools``). Each entry is a
``tools/list`` entry: an object whose ``name`` is a string of 1 to 1,024 characters with a canonical form
(no lone surrogate, Unicode NFC-safe) that no earlier entry of its list has after NFC;
``description`` and ``title`` strings, ``inputSchema`` and ``outputSchema`` JSON Schemas (an
object or a boolean), ``annotations`` an object, each optional (``null`` is absent). Other
members (``_meta``, ``icons``, ...) are allowed and take no part in the comparison. An entry
that breaks a rule is ``invalid_tools`` (422), whose detail names it by an RFC 6901 pointer
into the body (``/before/3/name``); only the first such entry is named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from app import jsonsafe
from app.canonical import CanonicalFormError, nfc
from app.checking.errors import ApiError
from app.http.bodies.check import is_json, read_body

#: Most entries of one list (the probe keeps as many: ``app.probe.tools.MAX_TOOL_ENTRIES``).
MAX_TOOLS = 2000
#: Longest tool name (as a check's baseline takes, :class:`app.baselines.request.ToolEntry`).
MAX_NAME = 1024
_TEXTS = ("description", "title")
_SCHEMAS = ("inputSchema", "outputSchema")
_SHAPE = 'the body must be {"before": [tools], "after": [tools]}, each tool a tools/list entry'


@dataclass(frozen=True, slots=True)
class DiffRequest:
    """The two lists, checked."""

    before: list[dict[str, Any]]
    after: list[dict[str, Any]]


def _refuse(pointer: str, what: str) -> ApiError:
    return ApiError("invalid_tools", f"{pointer}: {what}", 422)


def _entry(tool: Any, pointer: str) -> str:
    """The NFC name of a valid entry (see the module docs)."""
    if not isinstance(tool, dict):
        raise _refuse(pointer, "a tool is a JSON object")
    name = tool.get("name")
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME:
        raise _refuse(f"{pointer}/name", f"a tool's name is a string of 1 to {MAX_NAME} characters")
    try:
        key = nfc(name)
    except CanonicalFormError as exc:
        raise _refuse(f"{pointer}/name", f"the name has no canonical form ({exc.reason})") from None
    for member in _TEXTS:
        if tool.get(member) is not None and not isinstance(tool[member], str):
            raise _refuse(f"{pointer}/{member}", f"{member} is a string")
    for member in _SCHEMAS:
        if tool.get(member) is not None and not isinstance(tool[member], dict | bool):
            raise _refuse(f"{pointer}/{member}", f"{member} is a JSON Schema (an object or a boolean)")
    if tool.get("annotations") is not None and not isinstance(tool["annotations"], dict):
        raise _refuse(f"{pointer}/annotations", "annotations is an object")
    return key


def _tools(value: Any, side: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ApiError("invalid_body", f"{_SHAPE}; {side} is not an array")
    if len(value) > MAX_TOOLS:
        raise ApiError("too_many_tools", f"{side} has {len(value):,} tools; a list may have at most {MAX_TOOLS:,}")
    seen: dict[str, int] = {}
    for index, tool in enumerate(value):
        key = _entry(tool, f"/{side}/{index}")
        if key in seen:
            raise _refuse(f"/{side}/{index}/name", f"the name of /{side}/{seen[key]} again (after Unicode NFC)")
        seen[key] = index
    return value


def parse(payload: Any) -> DiffRequest:
    """The request in a parsed body.

    Raises:
        ApiError: ``invalid_body``, ``too_many_tools`` or ``invalid_tools`` (422).
    """
    if not isinstance(payload, dict) or set(payload) != {"before", "after"}:
        raise ApiError("invalid_body", _SHAPE)
    return DiffRequest(before=_tools(payload["before"], "before"), after=_tools(payload["after"], "after"))


async def read_diff_body(request: Request, max_bytes: int, timeout_s: float) -> bytes:
    """The raw body of a diff request (:func:`decode` it on a worker thread: a full body takes a
    quarter of a second to parse and check).

    Raises:
        ApiError: ``unsupported_media_type`` (415), ``body_too_large`` (413), ``body_timeout`` (408)
            or ``body_incomplete`` (400).
    """
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "send the body as application/json")
    return await read_body(request, max_bytes, timeout_s)


def decode(body: bytes) -> DiffRequest:
    """Parse and check a diff request's body (blocking).

    Raises:
        ApiError: ``invalid_json`` (400), ``invalid_body``, ``too_many_tools`` or ``invalid_tools`` (422).
    """
    try:
        payload = jsonsafe.loads(body, object_pairs_hook=jsonsafe.unique_keys)
    except jsonsafe.DuplicateKey:
        raise ApiError("invalid_body", "a key appears twice in the body; say each once", 422) from None
    except (ValueError, RecursionError) as exc:
        raise ApiError("invalid_json", "the body is not valid JSON") from exc
    return parse(payload)
