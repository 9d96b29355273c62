"""``mcp-sonde serve``: the HTTP API under uvicorn, with exit codes that say why it stopped.

Policy: the listening sockets (the main port, and ``metrics_port`` when set) are bound first,
before anything slow, so a port that cannot be bound is an error within a second and is told
apart from the app failing to start (uvicorn exits with 3 for both). With one worker, uvicorn
then serves :class:`app.http.starting.Starting` on them at once: ``/healthz`` answers while the
service is imported and built in the background, ``/readyz`` says ``starting`` until it is
ready. With ``--workers`` > 1 the key ring and the database's schema are checked once here, and
uvicorn's supervisor shares the sockets with every worker, each building the service before it
answers. Exit codes (:mod:`app.cli.codes`): 0 after a clean stop (SIGTERM or SIGINT, once
uvicorn has shut down gracefully), 21 for a port, 22 when the app or its lifespan fails to start
(a signing key that is revoked or expired, a key document that cannot be read or written, a
database schema that is behind, among them), 1 for a fault after start-up. Invalid settings
(20) are caught before this module runs, except a signing key that is not an Ed25519 PEM, caught
here.
"""

from __future__ import annotations

import importlib
import logging
import logging.config
import signal
import socket
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

from starlette.types import ASGIApp

from app.cli.codes import EXIT_INTERNAL, SERVE_EXIT_PORT, SERVE_EXIT_SETTINGS, SERVE_EXIT_STARTUP
from app.logs import service_logging
from app.settings import Settings

logger = logging.getLogger("mcp_sonde.serve")


class _Stopped(Exception):
    """SIGTERM or SIGINT, raised again by uvicorn once it has shut down."""


def _stopped(signum: int, frame: FrameType | None) -> None:
    raise _Stopped


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (as uvicorn makes one).

    Raises:
        OSError: the address is taken or cannot be used.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # The protocol named, as getaddrinfo names it: asyncio turns Nagle's algorithm off
    # (TCP_NODELAY) only on sockets whose ``proto`` is IPPROTO_TCP, and with it on, every answer
    # after a connection's first waited for the client's delayed ACK (about 40 ms on Linux).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        # Listening at once: a client that connects while the app starts waits in the backlog
        # (uvicorn listens on it again, which changes nothing) instead of being refused.
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def signing_ready(settings: Settings) -> int | None:
    """Open the key ring once, before any worker starts (a first start generates the key here,
    once); ``None`` when results can be signed, else the exit code after one log line."""
    from datetime import UTC, datetime

    from app.attest.errors import AttestError
    from app.attest.keyring import keyring_of, signing_source

    try:
        ring = keyring_of(settings)
        keyid = ring.signing_key(datetime.now(UTC)).keyid
    except AttestError as exc:
        logger.error("results cannot be signed (%s): %s", exc.reason, exc.message)
        return SERVE_EXIT_SETTINGS if exc.reason == "private_key_invalid" else SERVE_EXIT_STARTUP
    logger.info("results are signed with key %s (%s; key document %s)", keyid, signing_source(settings, keyid),
                settings.keys_path)  # fmt: skip
    if settings.redis_url and settings.signing_key is None and settings.signing_key_file is None:
        logger.warning(
            "instances sharing Redis sign with the key of their own data directory: to publish one key "
            "document, give every machine the same MCP_SONDE_SIGNING_KEY_FILE and key document (docs/attestations.md)"
        )
    return None


def history_ready(settings: Settings) -> int | None:
    """Check the history database's schema once, before any worker starts (the embedded file is
    made current here); ``None`` when it is current or does not answer now (runs wait for it),
    else the exit code after one log line naming ``mcp-sonde db upgrade``."""
    import anyio

    from app.db.engine import database_url, safe_url
    from app.db.migrate import SchemaOutdated
    from app.http.app import history_at_start

    try:
        anyio.run(history_at_start, settings)
    except SchemaOutdated as exc:
        logger.error("the history database %s: %s", safe_url(database_url(settings)), exc.message)
        return SERVE_EXIT_STARTUP
    return None


def listen(settings: Settings) -> list[socket.socket] | int:
    """The listening sockets (the main port, then ``metrics_port``), or the exit code after one
    log line naming the port that cannot be bound."""
    ports = [settings.port] + ([settings.metrics_port] if settings.metrics_port is not None else [])
    sockets: list[socket.socket] = []
    for port in ports:
        try:
            sockets.append(bind(settings.host, port))
        except OSError as exc:
            logger.error("cannot listen on %s port %d: %s", settings.host, port, exc.strerror or type(exc).__name__)
            for sock in sockets:
                sock.close()
            return SERVE_EXIT_PORT
    for sock, what in zip(sockets, ("", " (/metrics only)"), strict=False):
        logger.info("listening on http://%s:%d%s", settings.host, sock.getsockname()[1], what)
    return sockets


class _Refused(Exception):
    """The service must not start; ``code`` is the exit code (its reason is logged already)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def builder(settings: Settings) -> Callable[[], Awaitable[ASGIApp]]:
    """What :class:`app.http.starting.Starting` runs in the background: import the service on a
    thread (the event loop answers meanwhile), open the key ring, build the app."""

    async def build() -> ASGIApp:
        import anyio

        from app.db.engine import database_url, safe_url
        from app.db.migrate import SchemaOutdated

        module = await anyio.to_thread.run_sync(importlib.import_module, "app.http.app")
        refused = await anyio.to_thread.run_sync(signing_ready, settings)
        if refused is not None:
            raise _Refused(refused)
        try:
            await module.history_at_start(settings)
        except SchemaOutdated as exc:
            logger.error("the history database %s: %s", safe_url(database_url(settings)), exc.message)
            raise _Refused(SERVE_EXIT_STARTUP) from None
        app: ASGIApp = module.create_app(settings)
        return app

    return build


def serve(settings: Settings) -> int:
    """Run the service until it is stopped; returns the exit code."""
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE
    from uvicorn.supervisors import Multiprocess

    from app.http.starting import Starting, StartupFailed
    from app.http.wire import BoundedHttpTools

    logging_config = service_logging(settings.log_format)
    logging.config.dictConfig(logging_config)  # (so the lines of the start are the service's)
    listening = listen(settings)  # (first: a port in use is told at once)
    if isinstance(listening, int):
        return listening
    sockets = listening
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "workers": settings.workers,
        "access_log": False,  # uvicorn's access log prints query strings; ours does not
        "proxy_headers": False,  # client IPs follow the trusted_proxies setting instead
        "log_config": logging_config if settings.workers > 1 else None,  # (each worker applies it again)
        "limit_concurrency": settings.limit_concurrency,
        "timeout_keep_alive": 5,
        "server_header": False,  # (no "Server: uvicorn": what runs the service is not the client's business)
        "ws": "none",  # (no WebSocket routes: an upgrade is plain HTTP; uvicorn's WebSocket log wrote queries)
        "http": BoundedHttpTools,  # (httptools: strict framing, unknown methods refused with 400; heads bounded)
    }
    try:
        if settings.workers > 1:
            refused = signing_ready(settings)  # (once, before any worker: a first start makes the key here)
            if refused is None:
                refused = history_ready(settings)
            if refused is not None:
                return refused
            supervisor = Multiprocess(uvicorn.Config("app.http.app:create_app", factory=True, **options), sockets)
            supervisor.run()  # (handles SIGTERM and SIGINT itself: a stop returns here)
            failed = any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes)
            return SERVE_EXIT_STARTUP if failed else 0
        outcome: list[int] = []

        def failed_to_start(exc: BaseException) -> None:
            if isinstance(exc, _Refused):
                outcome.append(exc.code)
            elif isinstance(exc, StartupFailed):
                logger.error("start-up failed")  # (the service said why just before)
                outcome.append(SERVE_EXIT_STARTUP)
            else:
                logger.error("start-up failed: %s", type(exc).__name__, exc_info=exc)
                outcome.append(SERVE_EXIT_STARTUP)
            server.should_exit = True

        app = Starting(builder(settings), failed_to_start, str(settings.public_base_url))
        server = uvicorn.Server(uvicorn.Config(app, **options))
        return run_server(server, sockets, outcome)
    finally:
        for sock in sockets:
            sock.close()


def run_server(server: Any, sockets: list[socket.socket], outcome: list[int]) -> int:
    """uvicorn's server on ``sockets`` until it stops; the exit code."""
    from uvicorn.config import STARTUP_FAILURE

    previous = {sig: signal.signal(sig, _stopped) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run(sockets=sockets)
    except _Stopped:
        return outcome[0] if outcome else 0
    except SystemExit as exc:  # uvicorn's own exit: its start-up failed
        return SERVE_EXIT_STARTUP if exc.code == STARTUP_FAILURE else EXIT_INTERNAL
    except Exception:
        logger.exception("the service failed" if server.started else "start-up failed")
        return EXIT_INTERNAL if server.started else SERVE_EXIT_STARTUP
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if outcome:
        return outcome[0]
    return 0 if server.started else SERVE_EXIT_STARTUP
