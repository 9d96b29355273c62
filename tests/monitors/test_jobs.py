"""``app.monitors.jobs.register``: the monitor and webhook sources and the webhook handler join a
registry, and work end to end on both backends: a monitor's runs become probe jobs, their
outcomes webhook jobs, and the handler delivers them, signed, to a real receiver."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from standardwebhooks import Webhook

from app.attest.keyring import KeyRing
from app.history.store import SqlHistory
from app.monitors.jobs import Handler, register
from app.monitors.store import MonitorStore
from app.queue.model import PROBE, WEBHOOK, Source
from app.settings import Settings
from app.suite.model import CheckResult
from app.webhooks.secrets import WebhookSecrets, as_whsec
from tests.monitors.conftest import make_monitor, outcome
from tests.servers.network import FixedResolver
from tests.webhooks.conftest import Receiver, receiver

__all__ = ["receiver"]
pytestmark = pytest.mark.anyio


class Registry:
    def __init__(self) -> None:
        self.sources: dict[str, Source] = {}
        self.handlers: dict[str, Handler] = {}

    def add_source(self, source: Source) -> None:
        self.sources[source.name] = source

    def add_handler(self, kind: str, handler: Handler) -> None:
        self.handlers[kind] = handler


async def test_registered_sources_and_handler_deliver_an_alert(
    history: SqlHistory, ring: KeyRing, checked: CheckResult, receiver: Receiver
) -> None:
    registry = Registry()
    settings = Settings(allow_private=True)
    register(registry, engine=history.engine, history=history, ring=ring, settings=settings,
             resolver=FixedResolver({}))  # fmt: skip
    assert set(registry.sources) == {"monitor", "webhook"} and set(registry.handlers) == {WEBHOOK}
    secrets = WebhookSecrets(ring)
    made, _ = await make_monitor(MonitorStore(history.engine), secrets, checked.url, webhook=receiver.url, runs=1,
                                 now=datetime.now(UTC))  # fmt: skip
    now = datetime.now(UTC)
    [job] = await registry.sources["monitor"].due(now, 10)
    assert job.kind == PROBE
    await registry.sources["monitor"].finished(outcome(job, checked))  # the block's only run: exhausted
    [delivery] = await registry.sources["webhook"].due(datetime.now(UTC), 10)
    ctx: Any = None
    await registry.handlers[WEBHOOK](ctx, delivery)
    [(headers, body)] = receiver.seen
    key = secrets.of(made.monitor_id, made.secret_keyid)
    assert key is not None
    event = Webhook(as_whsec(key)).verify(body, headers)
    assert event["type"] == "monitor.exhausted" and event["data"]["monitor_id"] == made.monitor_id
