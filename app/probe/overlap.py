"""``notifications/initialized`` with the first ``tools/list`` page beside it (MCP 2025-11-25).

See :func:`initialized_beside_tools` for the policy: what overlaps, and why the outcome is the
one an awaited notification would give.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Protocol

import anyio
import httpx2

from app.probe.classify import classify_reply
from app.probe.exchange import Reply
from app.probe.findings import Stopped
from app.probe.jsonrpc import JsonObject, error_of, tools_list_request
from app.probe.tools import Conversing, list_tools


class Overlapping(Conversing, Protocol):
    """What the overlap needs of a conversation (:class:`app.probe.streamable.Conversation`)."""

    step_timeout_s: float

    @property
    def over_event_stream(self) -> bool:
        """The conversation speaks HTTP+SSE (requests answered on the event stream)."""
        ...

    async def initialized(self, on_sent: Callable[[], None] | None = None) -> None:
        """Send ``notifications/initialized``; a failure is recorded and raises :class:`Stopped`."""
        ...

    async def exchange(
        self,
        body: JsonObject,
        headers: dict[str, str],
        budget_s: float,
        *,
        expect: bool,
        on_sent: Callable[[], None] | None = None,
        tentative: bool = False,
    ) -> Reply:
        """Send one message; transport failures and timeouts are raised."""
        ...

    def note(self, reply: Reply) -> None:
        """Record the oddities of a reply that is used."""
        ...


def plain_success(reply: Reply) -> bool:
    """A reply that is our JSON-RPC response with a ``result`` and nothing to classify."""
    verdict = classify_reply(reply)
    if verdict is not None:
        return verdict.reason == "reply_too_large"  # (read as far as the cap goes, as any page)
    response = reply.response
    return response is not None and "result" in response and error_of(response) is None


async def initialized_beside_tools(conversation: Overlapping) -> None:
    """``notifications/initialized``, with the first ``tools/list`` page asked as soon as it is on the wire.

    Nothing waits for a notification's answer (MCP 2025-11-25 ``basic/lifecycle``: requests
    may follow the ``initialize`` response), so the first page does not wait for it either:
    it goes on a second connection, dialled during ``initialize``, once the notification is
    written (a server that reads in order sees the notification first). That early page is
    tentative; the outcome is the one an awaited notification would give:

    - the notification's failure decides the verdict (the early page is dropped);
    - an early page that is a plain success is the first page;
    - anything else (an error, a dropped connection, no answer by the time the notification
      was answered and as long again: a server that serves one connection at a time, say)
      is dropped, and the page is asked again, as the probe would have asked it.

    Over HTTP+SSE the stream holds one connection and the POSTs share the other, so nothing
    can overlap: the steps run one after the other.
    """
    if conversation.over_event_stream:
        await conversation.initialized()
        await list_tools(conversation, modern=False)
        return
    written, notified, paged = anyio.Event(), anyio.Event(), anyio.Event()
    failed: list[Stopped] = []
    early: list[Reply] = []
    asked_at = time.monotonic()

    async def notify() -> None:
        try:
            await conversation.initialized(on_sent=written.set)
        except Stopped as stop:
            failed.append(stop)
        finally:
            written.set()
            notified.set()

    async def ask_first_page(scope: anyio.CancelScope) -> None:
        with scope:
            request = tools_list_request(conversation.next_id(), None, modern_client_info=None)
            budget = min(conversation.step_timeout_s, conversation.deadline - time.monotonic())
            with contextlib.suppress(TimeoutError, httpx2.HTTPError):  # (then asked again below)
                early.append(
                    await conversation.exchange(
                        request, conversation.headers_for(), budget, expect=True, tentative=True
                    )
                )
        paged.set()

    async with anyio.create_task_group() as group:
        group.start_soon(notify)
        await written.wait()
        if not failed:
            conversation.findings.step("tools/list")
            asked_at = time.monotonic()
            scope = anyio.CancelScope()
            group.start_soon(ask_first_page, scope)
            await notified.wait()
            with anyio.move_on_after(0 if failed else max(0.05, time.monotonic() - asked_at)):
                await paged.wait()
            scope.cancel()
    if failed:
        raise Stopped
    first = early[0] if early and plain_success(early[0]) else None
    if first is not None:
        conversation.note(first)
    await list_tools(conversation, modern=False, first=first, started=asked_at if first is not None else None)
