"""The body of a webhook: JSON, capped, server text only inside JSON strings.

Policy: a body is a JSON object ``{"type", "timestamp", "data"}`` (the payload shape the
Standard Webhooks spec recommends), ``data`` holding the monitor's id, the endpoint's URL
(without a query string) and server id, the run id, and the alert's own members
(:mod:`app.monitors.alerts`). Whatever the server said (tool names and descriptions in a
diff, a reason) is a JSON string value and nothing else; ``<``, ``>`` and ``&`` are written
as ``\\u003c``, ``\\u003e`` and ``\\u0026`` (the same JSON value), so no receiver that pastes a
body into a page ever finds markup in it. A body is at most :data:`MAX_BODY_BYTES`: a
diff that does not fit is left out (``diff_omitted: true``) and linked instead (``changes_url``,
the server's change log). No secret, token or webhook URL is ever in a body.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from app.guard.url import without_query
from app.history.records import server_id_of
from app.monitors.alerts import Alert, moment

#: Largest webhook body, bytes (a tool-list diff past it is left out and linked instead).
MAX_BODY_BYTES = 64 * 1024
_UNMARKED = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


def encode(document: dict[str, Any]) -> bytes:
    """``document`` as compact JSON with markup characters escaped (see the module docs)."""
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).translate(_UNMARKED).encode()


def body(
    alert: Alert, *, monitor_id: str, url: str, run_id: str | None, at: datetime, public_url: str, max_bytes: int
) -> bytes:
    """The webhook body of ``alert`` (see the module docs)."""
    server_id = server_id_of(url)
    data: dict[str, Any] = {"monitor_id": monitor_id, "url": without_query(url), "server_id": server_id}
    if run_id is not None:
        data["run_id"] = run_id
    data |= alert.data
    document = {"type": alert.event, "timestamp": moment(at), "data": data}
    encoded = encode(document)
    if len(encoded) > max_bytes and "diff" in data:
        data["diff"] = None
        data["diff_omitted"] = True
        data["changes_url"] = f"{public_url}/v1/servers/{server_id}/changes"
        encoded = encode(document)
    if len(encoded) > max_bytes:  # (nothing else grows: a URL is at most 2,048 characters)
        document["data"] = {key: data[key] for key in ("monitor_id", "server_id") if key in data} | {"truncated": True}
        encoded = encode(document)
    return encoded
