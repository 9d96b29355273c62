"""An in-memory event store for the ``mcp`` SDK's Streamable HTTP server (its ``EventStore``
interface: store every event of every stream, replay what followed an id on that id's stream)."""

from __future__ import annotations

import itertools

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage


class MemoryEventStore(EventStore):
    """Keeps every event; ids are ``<n>`` in the order stored, across streams."""

    def __init__(self) -> None:
        self._events: list[tuple[EventId, StreamId, JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)
        self.replays = 0

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = str(next(self._ids))
        self._events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        found = [i for i, (event_id, _, _) in enumerate(self._events) if event_id == last_event_id]
        if not found:
            return None
        self.replays += 1
        stream_id = self._events[found[0]][1]
        for event_id, stream, message in self._events[found[0] + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id
