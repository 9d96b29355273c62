"""The job queue: taskiq's Redis stream broker when Redis is configured, its in-memory broker else.

Redis (taskiq-redis :class:`~taskiq_redis.RedisStreamBroker`, Redis Streams with one consumer
group): every worker reads the stream in the group (``XREADGROUP``), so each job goes to one
worker; a job stays pending until that worker acknowledges it (``XACK``) once its handler has
returned. A worker that dies leaves its job pending: after ``job_redelivery_idle_s`` another
worker claims it (``XAUTOCLAIM``) and runs it again (at-least-once; handlers are idempotent on
the job id, :mod:`app.queue.dispatch`). :class:`StreamBroker` changes two things of the
library's reading loop: it claims idle jobs on every pass, not only after a read that brought
new ones (so a dead worker's job is redelivered on a quiet queue too), and a Redis that goes
away (restarted, unreachable) is waited for with a bounded backoff instead of ending the worker;
the consumer group is made again when the stream came back empty. The group is made there
only, not at start-up (``startup``): a worker started while Redis is away waits for it like one
that lost it, instead of ending. Each read takes one job at a
time (``XREADGROUP COUNT 1``), so a worker never holds jobs it has no room to run. An
acknowledgement Redis does not take (it restarts while the job ends) is tried again with
backoff for :data:`ACK_WAIT_S`; one never taken leaves the job pending, so it is delivered again
and its done marker (:mod:`app.queue.dispatch`) keeps it from running twice.

No Redis (the embedded default): taskiq's :class:`~taskiq.InMemoryBroker` runs each job as a
task of this process as soon as it is kicked (:mod:`app.jobs.embedded` bounds how many).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError
from taskiq import AckableMessage, AsyncBroker, InMemoryBroker
from taskiq_redis import RedisStreamBroker

from app.settings import Settings

logger = logging.getLogger("mcp_sonde.jobs")
#: A blocking read waits this long for a new job before the pass claims idle ones, milliseconds.
READ_BLOCK_MS = 1000
GROUP = "mcp-sonde-workers"
#: How long an acknowledgement is tried again while Redis does not take it, seconds.
ACK_WAIT_S = 120.0


class StreamBroker(RedisStreamBroker):
    """:class:`~taskiq_redis.RedisStreamBroker` with the reading loop of the module docs."""

    async def startup(self) -> None:
        """Start the broker without touching Redis: :meth:`listen` makes the consumer group."""
        await AsyncBroker.startup(self)

    async def _group(self, conn: Redis) -> None:
        try:
            await conn.xgroup_create(self.queue_name, self.consumer_group_name, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def listen(self) -> AsyncGenerator[AckableMessage, None]:
        """Yield jobs for this worker: new ones, then ones idle past the redelivery time."""
        pause = 0.2
        while True:
            try:
                async with Redis(connection_pool=self.connection_pool) as conn:
                    await self._group(conn)
                    if pause > 0.2:
                        logger.warning("the job queue answers again")
                    pause = 0.2
                    while True:
                        async for message in self._pass(conn):
                            yield message
            except (RedisError, OSError) as exc:
                if pause == 0.2:
                    logger.warning("the job queue does not answer (%s): waiting for it", type(exc).__name__)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)

    async def _pass(self, conn: Redis) -> AsyncGenerator[AckableMessage, None]:
        fetched: Any = await conn.xreadgroup(
            self.consumer_group_name, self.consumer_name, {self.queue_name: ">"}, count=self.count, block=self.block
        )
        for _stream, entries in fetched or ():
            for entry_id, fields in entries:
                yield AckableMessage(data=fields[b"data"], ack=self._patient_ack(entry_id))
        claimed = await conn.xautoclaim(
            self.queue_name, self.consumer_group_name, self.consumer_name,
            min_idle_time=self.idle_timeout, count=1,
        )  # fmt: skip
        for entry_id, fields in claimed[1]:
            if fields:  # (an entry trimmed meanwhile comes back empty)
                logger.info("a job left by a worker that stopped answering is run again")
                yield AckableMessage(data=fields[b"data"], ack=self._patient_ack(entry_id))

    def _patient_ack(self, entry_id: Any) -> Callable[[], Awaitable[None]]:
        """``XACK`` of ``entry_id``, tried again with backoff (see the module docs)."""
        ack = self._ack_generator(entry_id, self.queue_name)

        async def patiently() -> None:
            deadline = time.monotonic() + ACK_WAIT_S
            pause = 0.2
            while True:
                try:
                    await ack()
                    return
                except (RedisError, OSError) as exc:
                    if time.monotonic() + pause > deadline:
                        logger.warning("a job's acknowledgement was not taken (%s): it is delivered again",
                                       type(exc).__name__)  # fmt: skip
                        return
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 5.0)

        return patiently

    async def backlog(self) -> int:
        """Jobs enqueued and not yet acknowledged (waiting, or taken and running).

        Raises:
            RedisError: Redis did not answer.
        """
        async with Redis(connection_pool=self.connection_pool) as conn:
            await self._group(conn)
            groups = await conn.xinfo_groups(self.queue_name)
        for group in groups:
            if group["name"] in (self.consumer_group_name, self.consumer_group_name.encode()):
                return int(group.get("lag") or 0) + int(group.get("pending") or 0)
        return 0


#: Entries the job stream keeps at least (XADD MAXLEN ~): done jobs are acknowledged, not
#: deleted, so the stream is trimmed as it grows; far above what the scheduler lets wait
#: (``scheduler_max_backlog``), so no job that waits is trimmed away.
STREAM_KEEP = 100_000


def stream_broker(settings: Settings, queue: str | None = None, consumer: str | None = None) -> StreamBroker:
    """The Redis stream broker of ``settings`` (``queue``: another stream than ``jobs_queue``, for tests)."""
    if not settings.redis_url:
        raise ValueError("the stream broker needs REDIS_URL")
    return StreamBroker(
        settings.redis_url,
        queue_name=queue or settings.jobs_queue,
        consumer_group_name=GROUP,
        consumer_name=consumer,
        consumer_id="0",  # (a group made after jobs were enqueued reads them too)
        xread_block=READ_BLOCK_MS,
        xread_count=1,
        idle_timeout=int(settings.job_redelivery_idle_s * 1000),
        socket_timeout=READ_BLOCK_MS / 1000 + 5,
        socket_connect_timeout=2,
        max_connection_pool_size=settings.worker_concurrency + 8,
        timeout=10,  # (the blocking pool's wait for a free connection)
        maxlen=max(STREAM_KEEP, 20 * settings.scheduler_max_backlog),
        approximate=True,
    )


def memory_broker() -> InMemoryBroker:
    """taskiq's in-memory broker: a kicked job runs at once as a task of this process."""
    return InMemoryBroker(propagate_exceptions=False, max_stored_results=1)


def build_broker(settings: Settings, queue: str | None = None) -> AsyncBroker:
    """The Redis stream broker with ``REDIS_URL``, else the in-memory one."""
    return stream_broker(settings, queue) if settings.redis_url else memory_broker()
