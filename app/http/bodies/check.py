"""Reading the check request body strictly: JSON, small, exactly the fields we know.

Policy: the body is read up to ``max_bytes`` and no further (a larger one is refused with 413
without reading it all), within ``timeout_s`` (a body that trickles gets 408);
``Content-Type`` must be ``application/json``; the object has ``url`` (a string) and may have
``include`` (``["tools"]``: the tool definitions in the result), ``headers`` (credentials
for a credentialed check, see :mod:`app.probe.credentials`) and ``baseline`` (what to compare
the tool list with: exactly one of a stored ``run_id``, a ``schema_fingerprint`` or ``tools``,
see :mod:`app.checking.comparison`), nothing else. Anything else is a 4xx with a stable reason;
no message ever repeats a header value.

A body is at most ``max_bytes`` (8 kB by default), except one whose baseline holds tool
definitions, which may take up to ``baseline_max_bytes`` (1 MiB by default): a tool list does
not fit in a few kB, and every other request does.
"""

from __future__ import annotations

from typing import Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError
from starlette.requests import ClientDisconnect, Request

from app import jsonsafe
from app.baselines.request import BASELINE_TOOLS, BaselineRequest
from app.checking.errors import ApiError
from app.probe.credentials import CredentialRefused, Credentials, validate


class CheckRequest(BaseModel):
    """``POST /v1/mcp/check`` body."""

    model_config = ConfigDict(extra="forbid")
    url: StrictStr
    include: list[Literal["tools"]] = Field(default_factory=list, max_length=1)
    headers: dict[StrictStr, StrictStr] | None = Field(default=None, max_length=64)  # the policy says fewer
    baseline: BaselineRequest | None = None

    @property
    def include_tools(self) -> bool:
        """The tool definitions were asked for."""
        return "tools" in self.include

    def credentials(self) -> Credentials | None:
        """The validated credential headers, or ``None`` for an anonymous check.

        Raises:
            ApiError: 422 with the credential reason key (``header_not_allowed``, ...).
        """
        if not self.headers:
            return None
        try:
            return validate(self.headers)
        except CredentialRefused as exc:
            raise ApiError(exc.reason, exc.message, 422) from None


def is_json(content_type: str) -> bool:
    """Whether a ``Content-Type`` value names ``application/json`` (parameters aside)."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


async def read_body(request: Request, max_bytes: int, timeout_s: float) -> bytes:
    """The whole request body: at most ``max_bytes``, within ``timeout_s`` seconds.

    Raises:
        ApiError: ``body_too_large`` (413), ``body_timeout`` (408), or ``body_incomplete`` (400)
            when the client closed the connection before the body ended.
    """
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > max_bytes):
        raise ApiError("body_too_large", f"the body may be at most {max_bytes} bytes")
    body = bytearray()
    try:
        with anyio.fail_after(timeout_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise ApiError("body_too_large", f"the body may be at most {max_bytes} bytes")
    except TimeoutError as exc:
        raise ApiError("body_timeout", f"the body did not arrive within {timeout_s} s") from exc
    except ClientDisconnect as exc:
        raise ApiError("body_incomplete", "the connection closed before the body ended") from exc
    return bytes(body)


class _Twice(dict[str, object]):
    """A JSON object that gave a key twice (RFC 8259 section 4 leaves such objects undefined)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """Each object as a dict; one with a key given twice as a :class:`_Twice`, found afterwards."""
    made = dict(pairs)
    return _Twice(made) if len(made) != len(pairs) else made


def _holds_twice(value: object) -> bool:
    """Whether ``value`` holds an object that gave a key twice (iterative: bodies nest 64 deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Twice):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _duplicate_reason(payload: object) -> str | None:
    """The reason for a body with a key given twice: in ``headers``, ``header_duplicate``; within
    ``baseline``, ``invalid_baseline``; anywhere else, ``invalid_body``; ``None`` without one."""
    if not _holds_twice(payload):
        return None
    if isinstance(payload, dict) and not isinstance(payload, _Twice):
        if isinstance(payload.get("headers"), _Twice):
            return "header_duplicate"
        if _holds_twice(payload.get("baseline")):
            return "invalid_baseline"
    return "invalid_body"


async def read_check_request(
    request: Request, max_bytes: int, timeout_s: float = 10.0, baseline_max_bytes: int = 0
) -> CheckRequest:
    """Parse the body of a check request (larger than ``max_bytes`` only with baseline tools).

    Raises:
        ApiError: ``unsupported_media_type`` (415), ``body_too_large`` (413), ``body_timeout`` (408),
            ``invalid_json`` (400), ``invalid_body`` or ``invalid_baseline`` (422).
    """
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "send the body as application/json")
    body = await read_body(request, max(max_bytes, baseline_max_bytes), timeout_s)
    try:
        payload = jsonsafe.loads(body, object_pairs_hook=_unique_keys)
    except jsonsafe.TooDeep as exc:  # (measured once, before parsing)
        raise ApiError("invalid_json", f"the body nests deeper than {jsonsafe.MAX_DEPTH} levels") from exc
    except (ValueError, RecursionError) as exc:
        raise ApiError("invalid_json", "the body is not valid JSON") from exc
    twice = _duplicate_reason(payload)
    if twice is not None:
        raise ApiError(twice, "a key appears twice in an object of the body; say each once", 422)
    if len(body) > max_bytes and not _has_baseline_tools(payload):
        raise ApiError("body_too_large", f"the body may be at most {max_bytes} bytes (more only with baseline tools)")
    try:
        return CheckRequest.model_validate(payload)
    except ValidationError as exc:
        if any(error["loc"][:1] == ("baseline",) for error in exc.errors()):
            raise ApiError(
                "invalid_baseline",
                "baseline is an object with exactly one of run_id (64 hex), schema_fingerprint (64 hex) or "
                f"tools (at most {BASELINE_TOOLS} tool objects, each with a string name)",
                422,
            ) from None
        raise ApiError(
            "invalid_body",
            'the body must be {"url": "<https URL>"}, optionally with "include": ["tools"] and "headers": '
            "{name: value} (Authorization and up to 8 more)",
        ) from None


def _has_baseline_tools(payload: object) -> bool:
    baseline = payload.get("baseline") if isinstance(payload, dict) else None
    return isinstance(baseline, dict) and isinstance(baseline.get("tools"), list)
