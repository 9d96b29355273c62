"""Reading a reply body safely: bounded decoding and content sniffing.

Policy: the probe asks for ``Accept-Encoding: identity``, but a hostile or careless server may
compress anyway. :class:`CappedDecoder` decodes ``gzip``/``deflate`` itself with
``zlib``'s ``max_length`` so no single chunk can expand past the cap (a decompression bomb
costs at most ``cap`` bytes of memory); any other coding is not decoded. Sizes are decoded
bytes.

:func:`sniff` decides what a body is when the ``Content-Type`` is missing or wrong, from its
first bytes: JSON (``{``/``[``), an SSE stream (a line starting with a field name or ``:``),
HTML (``<``), or other text.
"""

from __future__ import annotations

import re
import zlib
from typing import Literal

BodyKind = Literal["json", "sse", "html", "text", "empty"]

_SSE_START = re.compile(rb"^(?::|(?:event|data|id|retry)(?::|\r|\n))")
_HTML_START = re.compile(rb"^<(?:!doctype|html|head|body|\?xml|!--|title|meta|div|p|h1|script)", re.IGNORECASE)


class UnsupportedEncoding(Exception):
    """The reply used a content coding the probe does not decode (anything but identity, gzip, deflate)."""


class CappedDecoder:
    """Decode a body chunk by chunk, never producing more than ``cap`` bytes in total.

    Args:
        content_encoding: the reply's ``Content-Encoding`` header value (or ``""``).
        cap: most decoded bytes to produce.

    Raises:
        UnsupportedEncoding: from the constructor, for codings other than identity/gzip/deflate.
    """

    def __init__(self, content_encoding: str, cap: int) -> None:
        codings = [c.strip().lower() for c in content_encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        self.cap = cap
        self.produced = 0
        self.truncated = False
        self._zlib: zlib._Decompress | None = None
        if not codings:
            return
        if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
            raise UnsupportedEncoding(",".join(codings))
        wbits = 16 + zlib.MAX_WBITS if codings[0] in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self._zlib = zlib.decompressobj(wbits)
        self.encoded = True

    def decode(self, chunk: bytes) -> bytes:
        """Decode ``chunk``; returns ``b""`` once the cap is reached (and sets ``truncated``)."""
        room = self.cap - self.produced
        if room <= 0:
            if chunk:
                self.truncated = True
            return b""
        if self._zlib is None:
            out = chunk[:room]
            if len(chunk) > room:
                self.truncated = True
        else:
            try:
                out = self._zlib.decompress(chunk, room)
            except zlib.error as exc:
                raise UnsupportedEncoding("corrupt compressed body") from exc
            if self._zlib.unconsumed_tail:
                self.truncated = True
        self.produced += len(out)
        return out


def media_type(content_type: str | None) -> str:
    """The lower-case media type of a ``Content-Type`` value, without parameters (``""`` if absent)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def kind_from_header(content_type: str | None) -> BodyKind | None:
    """The body kind a ``Content-Type`` declares, or ``None`` when it says nothing useful."""
    media = media_type(content_type)
    if media == "text/event-stream":
        return "sse"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    if media in ("text/html", "application/xhtml+xml"):
        return "html"
    return None


def sniff(head: bytes) -> BodyKind:
    """Guess the kind of a body from its first bytes (see the module docs)."""
    stripped = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped:
        return "empty"
    if stripped[:1] in (b"{", b"["):
        return "json"
    if _SSE_START.match(stripped):
        return "sse"
    if stripped[:1] == b"<":
        return "html" if _HTML_START.match(stripped) or b"<html" in stripped[:2048].lower() else "text"
    return "text"
