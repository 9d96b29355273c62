"""What the monitor routes read and answer: the ``POST /v1/monitors`` body, and monitors,
runs and deliveries as JSON.

The body is read as the check's is (:func:`app.http.bodies.check.read_body`: capped at
``max_body_bytes``, within the body timeout, ``application/json`` only); JSON with a key given
twice is refused (:func:`app.jsonsafe.unique_keys`), and so is any member but ``url``,
``interval_s`` (a whole number of seconds, from the settings' ``monitor_min_interval_s``
(:data:`app.settings.MIN_INTERVAL_S`, or the staging switch's) to :data:`MAX_INTERVAL_S`)
and ``webhook``. Neither URL may hold a query string: both are kept in stored records, which
never hold one (a query often carries a key), so a monitor for such a URL is refused (422
``query_not_allowed``) before anything is paid.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StringConstraints, ValidationError
from starlette.requests import Request

from app import jsonsafe
from app.checking.errors import ApiError
from app.guard import MAX_URL_LENGTH
from app.http.bodies.check import is_json, read_body
from app.monitors.alerts import moment
from app.monitors.store import Monitor, MonitorRun
from app.settings import MIN_INTERVAL_S, STAGING_MIN_INTERVAL_S
from app.webhooks.store import Delivery

MAX_INTERVAL_S = 7 * 86_400
Url = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_URL_LENGTH)]


class MonitorRequest(BaseModel):
    """``POST /v1/monitors`` body."""

    model_config = ConfigDict(extra="forbid")
    url: Url
    interval_s: StrictInt = Field(ge=STAGING_MIN_INTERVAL_S, le=MAX_INTERVAL_S)
    webhook: Url


async def read_monitor_request(
    request: Request, max_bytes: int, timeout_s: float, min_interval_s: int = MIN_INTERVAL_S
) -> MonitorRequest:
    """The body (see the module docs).

    Raises:
        ApiError: ``unsupported_media_type`` (415), ``body_too_large`` (413), ``body_timeout`` (408),
            ``invalid_json`` (400), ``invalid_body`` or ``query_not_allowed`` (422).
    """
    if not is_json(request.headers.get("content-type", "")):
        raise ApiError("unsupported_media_type", "send the body as application/json")
    body = await read_body(request, max_bytes, timeout_s)
    refused = ApiError(
        "invalid_body",
        f'the body is {{"url": "<https URL>", "interval_s": <{min_interval_s} to {MAX_INTERVAL_S}>, '
        '"webhook": "<https URL>"}, each member once and no other',
    )
    try:
        payload = jsonsafe.loads(body, object_pairs_hook=jsonsafe.unique_keys)
    except jsonsafe.DuplicateKey:
        raise refused from None
    except jsonsafe.TooDeep as exc:
        raise ApiError("invalid_json", f"the body nests deeper than {jsonsafe.MAX_DEPTH} levels") from exc
    except (ValueError, RecursionError) as exc:
        raise ApiError("invalid_json", "the body is not valid JSON") from exc
    try:
        parsed = MonitorRequest.model_validate(payload)
    except ValidationError:
        raise refused from None
    if parsed.interval_s < min_interval_s:
        raise refused
    for name, url in (("url", parsed.url), ("webhook", parsed.webhook)):
        try:
            query = urlsplit(url).query
        except ValueError:
            continue  # (malformed: the target guard says so)
        if query or "?" in url:
            message = f"{name} may not hold a query string (it would be kept in a stored record)"
            raise ApiError("query_not_allowed", message)
    return parsed


def _at(value: Any) -> str | None:
    return None if value is None else moment(value)


def run_view(run: MonitorRun) -> dict[str, Any]:
    """A run as JSON."""
    return {"run_id": run.run_id, "due_at": moment(run.due_at), "finished_at": _at(run.finished_at),
            "status": run.status, "reason": run.reason}  # fmt: skip


def monitor_view(monitor: Monitor, runs: list[MonitorRun], public_url: str) -> dict[str, Any]:
    """A monitor as JSON (never its token or secret)."""
    return {
        "monitor_id": monitor.monitor_id,
        "url": monitor.url,
        "interval_s": monitor.interval_s,
        "webhook": monitor.webhook_url,
        "state": monitor.state,
        "runs_bought": monitor.runs_bought,
        "runs_left": monitor.runs_left,
        "next_due_at": moment(monitor.next_due_at) if monitor.state == "active" else None,
        "status": monitor.confirmed_status,
        "last_status": monitor.last_status,
        "last_runs": [run_view(run) for run in runs],
        "created_at": moment(monitor.created_at),
        "deleted_at": _at(monitor.deleted_at),
        "deliveries_url": f"{public_url}/v1/monitors/{monitor.monitor_id}/deliveries",
    }


def delivery_view(delivery: Delivery) -> dict[str, Any]:
    """A delivery and its attempts as JSON (never what a receiver answered, beyond its status code)."""
    return {
        "delivery_id": delivery.delivery_id,
        "event": delivery.event,
        "created_at": moment(delivery.created_at),
        "state": delivery.state,
        "attempts": delivery.attempts,
        "next_attempt_at": _at(delivery.next_attempt_at),
        "last_status": delivery.last_status,
        "last_reason": delivery.last_reason,
        "log": [
            {
                "attempt": a.attempt,
                "attempted_at": moment(a.attempted_at),
                "status_code": a.status_code,
                "reason": a.reason,
                "duration_ms": a.duration_ms,
            }
            for a in delivery.log
        ],
    }
