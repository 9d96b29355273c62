"""The Redis stream broker (:mod:`app.queue.broker`) against real redis-servers."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from app.queue.broker import stream_broker
from app.queue.dispatch import kick
from app.settings import Settings
from tests.jobs.conftest import probe_job
from tests.servers.redis_server import OwnRedis

pytestmark = pytest.mark.anyio


async def test_a_worker_started_while_redis_is_away_waits_for_it_and_then_reads(tmp_path: Path) -> None:
    own = OwnRedis(tmp_path)  # (not started yet: its port refuses connections)
    settings = Settings(redis_url=own.url, jobs_queue=f"mcp-sonde-test:{uuid.uuid4().hex}")
    broker = stream_broker(settings)
    try:
        await broker.startup()  # (the start does not need Redis)
        reading = broker.listen()
        first = asyncio.ensure_future(reading.__anext__())
        await asyncio.sleep(1.0)  # (the reader meets a refused connection and waits)
        assert not first.done()
        await asyncio.to_thread(own.start)
        job = probe_job("http://127.0.0.1:9/mcp")
        await kick(broker, job)
        message = await asyncio.wait_for(first, 60)
        assert job.id.encode() in message.data
        acked = message.ack()
        assert acked is not None
        await acked
        await reading.aclose()
    finally:
        await broker.shutdown()
        own.stop()
