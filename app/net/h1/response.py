"""A response whose head arrived and whose body is read as the caller asks for it."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable

from app.net.h1.connection import Connection
from app.net.h1.fields import Fields


class Response:
    """The status and fields of a final response, and its body still on the connection.

    The caller reads the body with :meth:`aiter_raw` (bytes as sent: no content coding is
    undone here) and must :meth:`aclose` the response: a body read to its end leaves the
    connection to the next request, any other is closed with it.

    Attributes:
        status_code: the status code.
        headers: the fields, in order, case-insensitive.
    """

    def __init__(
        self,
        status_code: int,
        headers: Fields,
        connection: Connection,
        release: Callable[[Connection, bool], None],
        read_timeout: float | None,
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        self._connection: Connection | None = connection
        self._release = release
        self._read_timeout = read_timeout

    @property
    def ssl_object(self) -> ssl.SSLObject | None:
        """The connection's TLS session (``None`` for plain http, or once closed)."""
        return self._connection.ssl_object if self._connection is not None else None

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive (``read_timeout`` between two reads).

        Raises:
            httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.ReadTimeout: the body broke off
                or stalled (see :mod:`app.net.h1.connection`).
        """
        connection = self._connection
        if connection is None:
            return
        while chunk := await connection.read(self._read_timeout):
            yield chunk

    async def aclose(self) -> None:
        """Give the connection back (kept only when the body was read to its end)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._release(connection, connection.finished())
