"""The history database: its URL, the async engine, and the set-up each backend needs.

``MCP_SONDE_DATABASE_URL`` names it (``postgresql+asyncpg://…`` in production); unset, the
embedded default is SQLite in the data directory (``<data dir>/history.sqlite3``, through
aiosqlite), which needs no server. A URL holds a password: it is a secret setting, and this
module never logs it (:func:`safe_url` is what may be shown).

SQLite is opened in WAL mode (readers never wait for the writer), with foreign keys on, a 5 s
busy timeout and ``synchronous=NORMAL`` (durable at each checkpoint; a power cut can lose the
last transactions, never corrupt the file). PostgreSQL gets a small pool with a 5 s connect
timeout and a statement timeout, so a database that hangs cannot hold a check (migrations run
without one: building an index over millions of runs takes longer).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.settings import Settings

CONNECT_TIMEOUT_S = 5.0
#: PostgreSQL connections a process keeps by default (``MCP_SONDE_DATABASE_POOL_SIZE``).
POOL_SIZE = 5
STATEMENT_TIMEOUT_MS = 10_000


def database_url(settings: Settings) -> str:
    """The configured URL, or the embedded SQLite file of the data directory."""
    if settings.database_url is not None:
        return settings.database_url.get_secret_value()
    return f"sqlite+aiosqlite:///{Path(settings.data_dir) / 'history.sqlite3'}"


def safe_url(url: str) -> str:
    """``url`` with its password hidden, for logs and errors."""
    return make_url(url).render_as_string(hide_password=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=5000", "synchronous=NORMAL"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def open_engine(
    url: str, *, statement_timeout_ms: int | None = STATEMENT_TIMEOUT_MS, pool_size: int = POOL_SIZE
) -> AsyncEngine:
    """An async engine for ``url`` with the set-up its backend needs (see the module docs);
    ``statement_timeout_ms=None`` for one whose statements may take long (a migration building
    an index over every run); ``pool_size`` PostgreSQL connections kept, as many again lent at
    busy times."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database:
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        engine = create_async_engine(url, connect_args={"timeout": CONNECT_TIMEOUT_S})
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    limits: dict[str, Any] = {}
    if statement_timeout_ms is not None:
        limits = {
            "command_timeout": statement_timeout_ms / 1000,
            "server_settings": {"statement_timeout": str(statement_timeout_ms)},
        }
    return create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_timeout=CONNECT_TIMEOUT_S,
        pool_pre_ping=True,
        connect_args={"timeout": CONNECT_TIMEOUT_S, **limits},
    )
