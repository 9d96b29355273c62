"""Opaque page cursors of the directory: keyset positions, signed and bound to their search.

A cursor is ``base64url(JSON) "." base64url(HMAC-SHA256(key, JSON)[:16])`` (RFC 4648 section 5,
unpadded; RFC 2104). The JSON holds the sort, the last row's sort key and server id, and the
SHA-256 of the search's other parameters (text and filters), so a cursor only continues the
very search it came from. The key is the instance's (``directory_cursor_key``) or, unset, a
built-in one: a cursor carries no authority (every value in it is checked again, and it only
says where a page starts), so the MAC's job is to refuse a cursor that was edited or cut, not to
keep a secret. Anything that is not such a cursor is :class:`BadCursor` (``400
invalid_cursor``), never a fault.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime

from app.errors import SondeError

MAX_CURSOR = 512
DEFAULT_KEY = hashlib.sha256(b"mcp-sonde directory cursor v1").digest()
_TAG = 16


class BadCursor(SondeError):
    """Not a cursor of this search: ``invalid_cursor``."""

    def __init__(self, message: str = "the cursor is not one this search gave") -> None:
        super().__init__("invalid_cursor", message)


@dataclass(frozen=True)
class Position:
    """Where the next page starts: after the row with this sort key and server id."""

    key: str | float | datetime
    server_id: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def encode(position: Position, sort: str, search: str, key: bytes = DEFAULT_KEY) -> str:
    """The cursor that continues the search ``search`` (a digest) sorted by ``sort`` after ``position``."""
    value: object = position.key.isoformat() if isinstance(position.key, datetime) else position.key
    body = json.dumps({"s": sort, "q": search, "k": value, "i": position.server_id}, separators=(",", ":")).encode()
    return _b64(body) + "." + _b64(hmac.new(key, body, hashlib.sha256).digest()[:_TAG])


def decode(cursor: str, sort: str, search: str, key: bytes = DEFAULT_KEY) -> Position:
    """The position in ``cursor``, which must be one :func:`encode` made for this sort and search.

    Raises:
        BadCursor: anything else.
    """
    if len(cursor) > MAX_CURSOR or cursor.count(".") != 1 or not cursor.isascii():
        raise BadCursor()
    body_text, tag_text = cursor.split(".")
    try:
        body, tag = _unb64(body_text), _unb64(tag_text)
    except (binascii.Error, ValueError):
        raise BadCursor() from None
    if not hmac.compare_digest(tag, hmac.new(key, body, hashlib.sha256).digest()[:_TAG]):
        raise BadCursor()
    try:
        document = json.loads(body)
    except ValueError:
        raise BadCursor() from None
    if not isinstance(document, dict) or document.get("s") != sort or document.get("q") != search:
        raise BadCursor("the cursor belongs to another search or sort")
    server_id, value = document.get("i"), document.get("k")
    if not isinstance(server_id, str) or len(server_id) != 24:
        raise BadCursor()
    return Position(_key(sort, value), server_id)


def _key(sort: str, value: object) -> str | float | datetime:
    if sort == "name" and isinstance(value, str) and len(value) <= 253:
        return value
    if sort == "uptime" and isinstance(value, int | float) and not isinstance(value, bool) and -1 <= value <= 1:
        return float(value)
    if sort == "last_checked" and isinstance(value, str) and len(value) <= 40:
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise BadCursor() from None
        if moment.tzinfo is not None:
            return moment
    raise BadCursor()
