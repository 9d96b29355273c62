"""A :class:`~app.queue.model.Job` as the JSON text that travels on the queue, and back.

The text is one JSON object with the job's fields (``due_at`` in ISO 8601, UTC). A job read
back is checked: its id fits the history's run id (at most :data:`MAX_ID` characters), the
text is at most :data:`MAX_BYTES`; anything else raises :class:`BadJob` (a message no worker
can run is acknowledged and counted, never retried for ever).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.errors import SondeError
from app.queue.model import Job

#: Longest job id (the history's ``run_id`` column).
MAX_ID = 64
#: Largest job on the queue, bytes.
MAX_BYTES = 64 * 1024


class BadJob(SondeError):
    """A queued message that is not a job this version can run."""

    def __init__(self, message: str) -> None:
        super().__init__("job_malformed", message)


def dumps(job: Job) -> str:
    """The job as JSON text.

    Raises:
        BadJob: its id is empty or longer than :data:`MAX_ID`, or it is larger than :data:`MAX_BYTES`.
    """
    check_id(job.id)
    due = job.due_at if job.due_at.tzinfo is not None else job.due_at.replace(tzinfo=UTC)
    document = {
        "kind": job.kind,
        "id": job.id,
        "source": job.source,
        "ref": job.ref,
        "url": job.url,
        "due_at": due.astimezone(UTC).isoformat(),
        "data": job.data,
    }
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False)
    if len(text.encode()) > MAX_BYTES:
        raise BadJob(f"job {job.id} is larger than {MAX_BYTES} bytes")
    return text


def loads(text: str) -> Job:
    """The job in ``text``.

    Raises:
        BadJob: not a job (see the module docs).
    """
    if len(text.encode()) > MAX_BYTES:
        raise BadJob("a queued job is too large")
    try:
        document: Any = json.loads(text)
        fields = {name: document[name] for name in ("kind", "id", "source", "ref", "url")}
        due = datetime.fromisoformat(document["due_at"])
        data = document.get("data") or {}
    except (ValueError, KeyError, TypeError) as exc:
        raise BadJob(f"a queued message is not a job ({type(exc).__name__})") from exc
    if not all(isinstance(value, str) for value in fields.values()) or not isinstance(data, dict):
        raise BadJob("a queued job has fields of the wrong type")
    check_id(fields["id"])
    if due.tzinfo is None:
        due = due.replace(tzinfo=UTC)
    return Job(due_at=due, data=data, **fields)


def check_id(job_id: str) -> None:
    """Raises :class:`BadJob` unless ``job_id`` is 1 to :data:`MAX_ID` printable ASCII characters."""
    if not 0 < len(job_id) <= MAX_ID or not job_id.isascii() or not job_id.isprintable():
        raise BadJob(f"a job id must be 1 to {MAX_ID} printable ASCII characters")
