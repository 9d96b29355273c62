"""Webhook deliveries on SQLite and PostgreSQL, to a real receiver on loopback: signed as the
Standard Webhooks spec says (checked with the ``standardwebhooks`` package and, independently,
with an HMAC-SHA256 of ``{id}.{timestamp}.{body}``), retried on the schedule until the window
ends, each attempt once in the log, and a webhook whose name turns private refused undialled."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import trustme
from sqlalchemy import select
from standardwebhooks import Webhook

from app.db.tables.webhooks import webhook_attempts
from app.history.store import SqlHistory
from app.monitors.store import Monitor, MonitorStore
from app.queue.model import WEBHOOK
from app.settings import Settings
from app.webhooks import store as deliveries
from app.webhooks.deliver import WebhookDeliverer
from app.webhooks.secrets import WebhookSecrets, as_whsec
from app.webhooks.source import WebhookSource
from app.webhooks.store import DeliveryStore
from tests.monitors.conftest import make_monitor
from tests.servers.network import PUBLIC, FixedResolver, LoopbackNat
from tests.servers.uvicorn_thread import serve
from tests.webhooks.conftest import Receiver

pytestmark = pytest.mark.anyio
BODY = json.dumps({"type": "monitor.status_changed", "data": {"monitor_id": "m", "note": "é ünïcode"}}).encode()
DEV = Settings(allow_private=True, webhook_timeout_s=5.0)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


async def setup(
    history: SqlHistory, secrets: WebhookSecrets, webhook: str, now: datetime
) -> tuple[Monitor, DeliveryStore, str]:
    store = MonitorStore(history.engine)
    made, _ = await make_monitor(store, secrets, "https://mcp.example.com/mcp", webhook=webhook, now=now)
    async with history.engine.begin() as db:
        delivery_id = await deliveries.add(db, made.key, "monitor.status_changed", BODY, now)
    return made, DeliveryStore(history.engine), delivery_id


def independent_signature(whsec: str, headers: dict[str, str], body: bytes) -> bool:
    """The Standard Webhooks check, written from the spec: v1,base64(HMAC-SHA256(key, id.ts.body))."""
    key = base64.b64decode(whsec.removeprefix("whsec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(f"v1,{expected}", candidate) for candidate in headers["webhook-signature"].split(" ")
    )


async def test_a_delivery_is_signed_and_verifies_both_ways(
    history: SqlHistory, secrets: WebhookSecrets, receiver: Receiver
) -> None:
    now = datetime.now(UTC)
    made, store, delivery_id = await setup(history, secrets, receiver.url, now)
    source = WebhookSource(store, DEV)
    [job] = await source.due(now, 10)
    assert (job.kind, job.source, job.id, job.ref) == (WEBHOOK, "webhook", f"{delivery_id}.1", delivery_id)
    assert await source.due(now, 10) == []  # leased: handed out once
    deliverer = WebhookDeliverer(store, secrets, DEV, FixedResolver({}))
    await deliverer(None, job)
    await deliverer(None, job)  # redelivered: nothing sent again
    [(headers, body)] = receiver.seen
    assert body == BODY and headers["content-type"] == "application/json"
    assert headers["webhook-id"] == delivery_id and headers["user-agent"].startswith("mcp-sonde/")
    assert abs(int(headers["webhook-timestamp"]) - now.timestamp()) < 60
    key = secrets.of(made.monitor_id, made.secret_keyid)
    assert key is not None
    whsec = as_whsec(key)
    assert Webhook(whsec).verify(body, headers) == json.loads(BODY)
    assert independent_signature(whsec, headers, body)
    assert not independent_signature(as_whsec(b"\0" * 32), headers, body)
    [logged] = await store.log(made.key) or []
    assert (logged.state, logged.attempts, logged.last_status, logged.last_reason) == ("delivered", 1, 204, "delivered")
    assert [(a.attempt, a.status_code, a.reason) for a in logged.log] == [(1, 204, "delivered")]
    async with history.engine.connect() as db:
        stored = (await db.execute(select(webhook_attempts))).all()
    assert "never stored" not in repr(stored)  # the receiver's body is read, never kept


async def test_failures_are_retried_on_the_schedule_with_one_webhook_id(
    history: SqlHistory, secrets: WebhookSecrets, receiver: Receiver
) -> None:
    now = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)
    receiver.answers = [500, 503, 404]
    made, store, delivery_id = await setup(history, secrets, receiver.url, now)
    clock = Clock(now)
    source = WebhookSource(store, DEV)
    deliverer = WebhookDeliverer(store, secrets, DEV, FixedResolver({}), clock=clock)
    waits = []
    for _ in range(4):
        [job] = await source.due(clock.at, 10)
        await deliverer(None, job)
        [logged] = await store.log(made.key) or []
        if logged.next_attempt_at is not None:
            waits.append((logged.next_attempt_at - clock.at).total_seconds())
            assert await source.due(logged.next_attempt_at - timedelta(seconds=1), 10) == []  # not yet
            clock.at = logged.next_attempt_at
    assert waits == [5.0, 300.0, 1800.0]
    assert [h["webhook-id"] for h, _ in receiver.seen] == [delivery_id] * 4
    assert len({h["webhook-timestamp"] for h, _ in receiver.seen}) == 4  # each attempt signed at its time
    key = secrets.of(made.monitor_id, made.secret_keyid)
    assert key is not None and all(independent_signature(as_whsec(key), h, b) for h, b in receiver.seen)
    [logged] = await store.log(made.key) or []
    assert logged.state == "delivered" and logged.attempts == 4
    assert [(a.status_code, a.reason) for a in logged.log] == [
        (500, "http_status"), (503, "http_status"), (404, "http_status"), (204, "delivered"),
    ]  # fmt: skip


async def test_a_delivery_fails_after_the_window(history: SqlHistory, secrets: WebhookSecrets) -> None:
    now = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)
    made, store, _ = await setup(history, secrets, "http://127.0.0.1:9/hook", now)  # nothing listens
    clock = Clock(now)
    source = WebhookSource(store, DEV)
    deliverer = WebhookDeliverer(store, secrets, DEV, FixedResolver({}), clock=clock)
    times = []
    for _ in range(20):
        jobs = await source.due(clock.at, 10)
        if not jobs:
            break
        times.append(clock.at - now)
        await deliverer(None, jobs[0])
        [logged] = await store.log(made.key) or []
        if logged.next_attempt_at is None:
            break
        clock.at = logged.next_attempt_at
    assert logged.state == "failed" and {a.reason for a in logged.log} == {"unreachable"}
    hours = [t.total_seconds() / 3600 for t in times]
    assert hours[-1] == 24 and hours[-2] < 24 and len(hours) == 8  # 0, 5 s, 5 min, 35 min, ..., 17.6 h, 24 h
    assert await source.due(now + timedelta(days=3), 10) == []


async def test_a_delivery_of_a_deleted_monitor_is_failed(
    history: SqlHistory, secrets: WebhookSecrets, receiver: Receiver
) -> None:
    now = datetime.now(UTC)
    monitors = MonitorStore(history.engine)
    made, token = await make_monitor(monitors, secrets, "https://mcp.example.com/mcp", webhook=receiver.url)
    async with history.engine.begin() as db:
        await deliveries.add(db, made.key, "monitor.status_changed", BODY, now)
    await monitors.delete(made.monitor_id, token, now)
    store = DeliveryStore(history.engine)
    assert await WebhookSource(store, DEV).due(now, 10) == []
    [logged] = await store.log(made.key) or []
    assert (logged.state, logged.last_reason) == ("failed", "monitor_deleted")


@pytest.fixture
def tls_receiver(tmp_path: Path) -> Iterator[tuple[Receiver, int, str]]:
    """A receiver over https for hooks.example.org, and the CA bundle that trusts it."""
    ca = trustme.CA()
    leaf = ca.issue_cert("hooks.example.org")
    cert, key, bundle = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    leaf.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(bundle))
    made = Receiver()
    with serve(made.app(), ssl_certfile=str(cert), ssl_keyfile=str(key)) as port:
        yield made, port, str(bundle)


async def test_a_webhook_whose_name_turns_private_is_refused_at_delivery(
    history: SqlHistory, secrets: WebhookSecrets, tls_receiver: tuple[Receiver, int, str]
) -> None:
    receiver, port, bundle = tls_receiver
    settings = Settings(ca_bundle=bundle, webhook_timeout_s=5.0)  # production rules: public addresses only
    resolver = FixedResolver({"hooks.example.org": [PUBLIC]})
    nat = LoopbackNat({(str(PUBLIC), 443): port})
    now = datetime.now(UTC)
    made, store, _ = await setup(history, secrets, "https://hooks.example.org/hook", now)
    source = WebhookSource(store, settings)
    deliverer = WebhookDeliverer(store, secrets, settings, resolver, network_backend=nat)
    [job] = await source.due(now, 10)
    await deliverer(None, job)
    assert len(receiver.seen) == 1 and nat.dialled == [(str(PUBLIC), 443)]
    async with history.engine.begin() as db:
        await deliveries.add(db, made.key, "monitor.exhausted", BODY, now)
    resolver.answers["hooks.example.org"] = [ipaddress.ip_address("10.0.0.7")]  # the DNS answer changed
    [job] = await source.due(now, 10)
    await deliverer(None, job)
    assert len(receiver.seen) == 1 and nat.dialled == [(str(PUBLIC), 443)]  # nothing dialled
    newest, first = await store.log(made.key) or []
    assert (first.state, first.last_status) == ("delivered", 204)
    assert (newest.state, newest.last_status, newest.last_reason) == ("pending", None, "address_not_public")
    assert newest.log[0].reason == "address_not_public"


async def test_a_webhook_to_a_host_that_opted_out_since_is_never_dialled(
    history: SqlHistory, secrets: WebhookSecrets, receiver: Receiver
) -> None:
    from app.optout import OptOutList

    now = datetime.now(UTC)
    made, store, _ = await setup(history, secrets, receiver.url, now)
    await OptOutList(history.engine).add("127.0.0.1")  # (the receiver's host asked not to be contacted)
    source = WebhookSource(store, DEV)
    [job] = await source.due(now, 10)
    await WebhookDeliverer(store, secrets, DEV, FixedResolver({}))(None, job)
    assert receiver.seen == []
    [delivery] = await store.log(made.key) or []
    assert (delivery.state, delivery.last_reason) == ("failed", "opted_out")
