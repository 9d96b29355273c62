"""The ``webhook`` job handler: one signed delivery attempt, logged, and the next one scheduled.

Signing follows the Standard Webhooks spec (with the ``standardwebhooks`` package): the
headers ``webhook-id`` (the delivery's id, the same on every attempt), ``webhook-timestamp``
(the attempt's time, whole seconds since the epoch) and ``webhook-signature``
(``v1,<base64 of HMAC-SHA256 of "<id>.<timestamp>.<body>">`` under the monitor's secret,
:mod:`app.webhooks.secrets`). The body is sent as stored, byte for byte. Each attempt goes
through the target guard and pinned dialling (:mod:`app.webhooks.send`); a 2xx delivers,
anything else is tried again on the schedule of :mod:`app.webhooks.retry` until the window
ends, then the delivery has failed. A webhook whose host or URL is on the opt-out list
(:mod:`app.optout`) is never dialled: the attempt fails the delivery as ``opted_out`` (a
list that cannot be read leaves the attempt undialled as ``optout_unavailable``, tried again
on the schedule). Every attempt is in the delivery log with its status code
and reason, never with what the receiver answered.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

from standardwebhooks import Webhook

from app.db.tables.webhooks import DELIVERED, FAILED, PENDING
from app.guard import Resolver
from app.net.agent import user_agent
from app.net.dial import Dialler
from app.optout import OptOutList
from app.queue.model import Job
from app.settings import Settings
from app.webhooks.retry import RETRY_DELAYS_S, delivered, next_attempt
from app.webhooks.secrets import WebhookSecrets
from app.webhooks.send import Sent, post
from app.webhooks.source import parse_job_id
from app.webhooks.store import Attempt, DeliveryStore, Target

#: Most bytes of a receiver's answer read (never stored).
RESPONSE_MAX_BYTES = 4096

logger = logging.getLogger("mcp_sonde.webhooks")


def utc_now() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


def signed_headers(key: bytes, delivery_id: str, at: datetime, body: bytes) -> dict[str, str]:
    """The Standard Webhooks headers of ``body`` sent at ``at`` (see the module docs)."""
    at = at.astimezone(UTC)
    signature = Webhook(key).sign(msg_id=delivery_id, timestamp=at, data=body.decode())
    return {"webhook-id": delivery_id, "webhook-timestamp": str(int(at.timestamp())), "webhook-signature": signature}


class WebhookDeliverer:
    """The handler of ``webhook`` jobs: ``await deliverer(ctx, job)`` (see the module docs).

    Args:
        store: the deliveries.
        secrets: derives each monitor's webhook secret.
        settings: the budget, caps and retry schedule; ``allow_private``; ``ca_bundle``.
        resolver: asked once per attempt for the webhook's host.
        network_backend: the socket backend under the pin table (tests pass a loopback one).
        clock: now (tests pass their own).
    """

    def __init__(
        self,
        store: DeliveryStore,
        secrets: WebhookSecrets,
        settings: Settings,
        resolver: Resolver,
        network_backend: Dialler | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.store = store
        self.secrets = secrets
        self.settings = settings
        self.resolver = resolver
        self.network_backend = network_backend
        self.clock = clock

    async def __call__(self, ctx: object, job: Job) -> None:
        """Make the attempt ``job`` names, once (a job for an attempt already made does nothing)."""
        parsed = parse_job_id(job.id)
        if parsed is None:
            logger.warning("webhook job %r names no delivery attempt: dropped", job.id[:80])
            return
        delivery_id, attempt = parsed
        target = await self.store.target(delivery_id)
        if target is None or target.state != PENDING or target.attempts >= attempt:
            return
        at = self.clock()
        started = time.monotonic()
        sent = await self._send(target, at)
        duration_ms = (time.monotonic() - started) * 1000
        first = target.first_attempt_at or at
        settings = self.settings
        if delivered(sent.status):
            state, following = DELIVERED, None
        elif sent.reason in ("webhook_secret_unavailable", "opted_out"):
            state, following = FAILED, None
        else:
            following = next_attempt(first, at, attempt, RETRY_DELAYS_S, settings.webhook_retry_window_s)
            state = PENDING if following is not None else FAILED
        logged = Attempt(attempt, at, sent.status, sent.reason, round(duration_ms, 3))
        if await self.store.record(delivery_id, logged, state=state, next_attempt_at=following):
            logger.info(
                "webhook %s attempt %d of monitor %s: %s%s -> %s", delivery_id, attempt, target.monitor_id,
                sent.reason, f" {sent.status}" if sent.status is not None else "", state,
            )  # fmt: skip

    async def _send(self, target: Target, at: datetime) -> Sent:
        try:
            if await OptOutList(self.store.engine).covers(target.webhook_url):
                return Sent(None, "opted_out")
        except Exception:  # any fault of the database: the list cannot be read, so nothing is dialled
            return Sent(None, "optout_unavailable")
        key = self.secrets.of(target.monitor_id, target.secret_keyid)
        if key is None:
            return Sent(None, "webhook_secret_unavailable")
        settings = self.settings
        headers = signed_headers(key, target.delivery_id, at, target.body)
        headers["user-agent"] = user_agent(settings)
        return await post(
            target.webhook_url, target.body, headers, resolver=self.resolver, allow_private=settings.allow_private,
            timeout_s=settings.webhook_timeout_s, read_bytes=RESPONSE_MAX_BYTES,
            ca_bundle=settings.ca_bundle, network_backend=self.network_backend,
        )  # fmt: skip
