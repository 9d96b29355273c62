"""An incremental parser for ``text/event-stream`` bodies.

Follows the WHATWG HTML Living Standard, section 9.2.6 "Interpreting an event stream": lines
end with CRLF, LF or CR (a CR at the end of one chunk may pair with an LF at the start of the
next); lines starting with ``:`` are comments; ``data`` lines are joined with LF; ``id``
values holding NUL are ignored; ``retry`` must be ASCII digits; an empty line dispatches the
event unless its data buffer is empty; a leading byte order mark is dropped; bytes are decoded
as UTF-8 with replacement.

One deliberate leniency: at the end of the stream, WHATWG discards an event that was not
followed by an empty line. :meth:`SseParser.close` instead returns it when all of its lines
were complete and marks it ``terminated=False``, so the caller can use a response a server
sent without the final blank line and still report the fault.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SseEvent:
    """One dispatched event.

    Attributes:
        event: the event type (``"message"`` when the stream named none).
        data: the data lines joined with LF (may be empty, as in a 2025-11-25 priming event).
        id: the last event id in force when the event was dispatched, if any.
        terminated: ``False`` only for an event returned by :meth:`SseParser.close` that the
            stream never ended with an empty line.
    """

    event: str
    data: str
    id: str | None
    terminated: bool = True


class SseParser:
    """Feed bytes in, get complete :class:`SseEvent` objects out. Holds at most one partial line."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._partial: list[str] = []  # pieces of the current, unterminated line
        self._after_cr = False  # the last chunk ended with CR: a leading LF belongs to it
        self._started = False
        self._data: list[str] = []
        self._has_data = False
        self._event_type = ""
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        """Parse ``chunk`` and return the events it completed.

        Work is linear in the input: each byte is scanned once, and a long unterminated line is
        kept as pieces until its end arrives.
        """
        text = self._decoder.decode(chunk)
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        return self._lines(text)

    def pending_data(self) -> str | None:
        """The data of the event being read, when its lines are complete but its blank line has not come."""
        return "\n".join(self._data) if self._has_data and not self._partial else None

    def close(self) -> list[SseEvent]:
        """Signal the end of the stream; return a last event whose lines were complete (see module docs)."""
        events = self._lines(self._decoder.decode(b"", final=True))
        self._partial = []  # an unterminated last line is discarded (WHATWG)
        if self._has_data:
            events.append(self._make_event(terminated=False))
        self._reset_event()
        return events

    def _lines(self, text: str) -> list[SseEvent]:
        events: list[SseEvent] = []
        position = 0
        if self._after_cr and text:
            self._after_cr = False
            if text[0] == "\n":
                position = 1
        length = len(text)
        while position < length:
            match = _LINE_END.search(text, position)
            if match is None:
                self._partial.append(text[position:])
                break
            line = (
                "".join(self._partial) + text[position : match.start()]
                if self._partial
                else text[position : match.start()]
            )
            self._partial = []
            if match.group(0) == "\r" and match.end() == length:
                self._after_cr = True
            position = match.end()
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._has_data:
                self._reset_event()
                return None
            event = self._make_event(terminated=True)
            self._reset_event()
            return event
        if line.startswith(":"):
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
            self._has_data = True
        elif field == "event":
            self._event_type = value
        elif field == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif field == "retry" and value.isascii() and value.isdigit() and len(value) <= 10:
            self.retry_ms = int(value)  # longer digit strings are no sane delay (and int() refuses 4,300+)
        return None

    def _make_event(self, *, terminated: bool) -> SseEvent:
        return SseEvent(
            event=self._event_type or "message",
            data="\n".join(self._data),
            id=self.last_event_id,
            terminated=terminated,
        )

    def _reset_event(self) -> None:
        self._data = []
        self._has_data = False
        self._event_type = ""
