"""Resuming an event stream that closed before our response (MCP 2025-11-25 Streamable HTTP,
"Resumability and Redelivery" and "Sending Messages to the Server" item 6).

A server answering a POST with ``text/event-stream`` may close the stream before it sends the
response, once it has sent an event with an ``id`` (a priming event with empty data is the
usual one); "disconnection ... SHOULD NOT be interpreted as the client cancelling its
request". The client then reconnects with ``GET`` to the same endpoint, ``Accept:
text/event-stream``, ``Last-Event-ID`` set to the last id it received, and the session and
protocol version headers of the conversation; the server replays what followed that id on
the stream it belongs to. A ``retry`` field sets how long to wait before reconnecting (WHATWG
HTML section 9.2.6).

Policy:

- Only a 2xx event stream that ended without our response, after an event with an id, is
  resumed; a stream that closed without an id keeps today's verdict (``no_response_in_stream``).
- At most :data:`RESUMES` reconnections per request, each after the server's ``retry`` wait,
  all within the request's own budget: a wait that does not fit ends the resumption.
- A reconnection that fails (transport error, timeout, a non-2xx or non-stream answer) ends the
  resumption with the reply that closed, so the verdict is what it would have been without it.
- The reply keeps the POST's status and header fields (the session id, say, is issued there);
  the resumed streams count toward it: skipped notifications and requests add up, and
  ``elapsed_ms`` runs from the POST to the end of the last stream.
"""

from __future__ import annotations

import time

import anyio
import httpx2

from app.net.fields import single_value
from app.probe.exchange import Exchanger, Reply

#: Most reconnections for one request.
RESUMES = 3


def resumable(reply: Reply) -> bool:
    """An event stream that ended without our response after an event with an id."""
    return (
        reply.status // 100 == 2
        and reply.kind == "sse"
        and reply.response is None
        and not reply.truncated
        and reply.last_event_id is not None
    )


async def resume(
    exchanger: Exchanger,
    url: str,
    reply: Reply,
    *,
    headers: dict[str, str],
    expect_id: int,
    deadline: float,
) -> Reply:
    """Reconnect for the response ``reply``'s stream closed before (see the module docs); the
    reply to use. ``deadline`` is the ``time.monotonic()`` value the request's budget ends at."""
    started = time.monotonic() - reply.elapsed_ms / 1000
    first = reply
    session = single_value(reply.headers, "mcp-session-id")
    asked = {name: value for name, value in headers.items() if name.lower() not in ("content-type", "accept")}
    for _ in range(RESUMES):
        if not resumable(reply):
            return reply
        assert reply.last_event_id is not None
        wait = (reply.retry_ms or 0) / 1000
        if time.monotonic() + wait >= deadline:
            return reply  # the server's wait is past what is left of the budget
        await anyio.sleep(wait)
        sent = asked | {"Accept": "text/event-stream", "Last-Event-ID": reply.last_event_id}
        if session is not None and not any(name.lower() == "mcp-session-id" for name in sent):
            sent["Mcp-Session-Id"] = session  # (issued with the very answer being resumed: initialize)
        try:
            resumed = await exchanger.send(
                "GET", url, headers=sent, expect_id=expect_id, timeout_s=deadline - time.monotonic(), retry=False
            )
        except (TimeoutError, httpx2.HTTPError):
            return reply
        if resumed.status // 100 != 2 or resumed.kind != "sse":
            return reply
        resumed.status, resumed.headers = first.status, first.headers  # (the answer to the POST)
        resumed.skipped_notifications += reply.skipped_notifications
        resumed.skipped_requests += reply.skipped_requests
        resumed.last_event_id = resumed.last_event_id or reply.last_event_id
        resumed.retry_ms = resumed.retry_ms if resumed.retry_ms is not None else reply.retry_ms
        resumed.elapsed_ms = round((time.monotonic() - started) * 1000, 1)
        reply = resumed
    return reply
