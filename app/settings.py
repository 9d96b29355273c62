"""The one typed settings object, read from the environment once.

Every setting has a default that works on a fresh machine. Environment variables use the
prefix ``MCP_SONDE_`` (for example ``MCP_SONDE_PROBE_TIMEOUT_S=10``). Units are in the names:
``_s`` is seconds, ``_bytes`` is bytes.

Policy: :func:`get_settings` builds the object on first use and caches it; code that needs a
variant (tests, the CLI's ``--allow-private``) builds its own with ``Settings(...)`` or
``settings.model_copy(update=...)`` and passes it down explicitly.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """``$XDG_DATA_HOME/mcp-sonde``, else ``~/.local/share/mcp-sonde`` (XDG Base Directory)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "mcp-sonde"


#: ``free_pool_per_ip`` when ``allow_private`` is on and it is not set: local development is
#: one client checking its own servers again and again, and the free pool should not stop it.
DEVELOPMENT_FREE_POOL_PER_IP = 1000

#: The shortest monitor interval, seconds; under ``staging``, :data:`STAGING_MIN_INTERVAL_S`.
MIN_INTERVAL_S = 300
STAGING_MIN_INTERVAL_S = 10
#: ``monitor_run_lost_s`` under ``staging`` when it is not set (the shortest allowed is 60 s there, 600 s otherwise).
STAGING_RUN_LOST_S = 120.0


class PaymentNetwork(BaseModel):
    """One accepted payment option: a CAIP-2 network, a USDC-like asset, its EIP-712 domain."""

    model_config = ConfigDict(extra="forbid")
    network: str = Field(pattern=r"^eip155:[0-9]{1,20}$")
    asset: str = Field(pattern=r"^0x[0-9a-fA-F]{40}$")
    name: str = "USD Coin"
    version: str = "2"
    decimals: int = Field(default=6, ge=0, le=18)


class Settings(BaseSettings):
    """Runtime settings for the probe and the service.

    Every setting is documented by its ``Field`` description: what it does, who changes it and
    why. ``docs/settings.md`` is generated from them (``scripts/docs``; a test holds the two equal).
    """

    model_config = SettingsConfigDict(env_prefix="MCP_SONDE_", extra="ignore", frozen=True)

    # --- the probe ---------------------------------------------------------------------------
    allow_private: bool = Field(
        default=False,
        description=(
            "Development switch: http, loopback and private addresses, IP literals and any port may be probed. "
            "For a developer checking local servers and for tests; never on a public deployment (it turns the "
            "service into a proxy into its own network)."
        ),
    )
    info_url: str = Field(
        default="https://github.com/mcp-sonde/mcp-sonde",
        description=(
            "URL in the probes' User-Agent when public_url is unset (with public_url: <public_url>/probe, the "
            "page on our probes and how to opt out). An operator who sweeps without a public page sets it to a "
            "page that names them."
        ),
    )
    probe_timeout_s: float = Field(
        default=15.0,
        gt=0,
        le=120,
        description=(
            "Budget of one whole probe, seconds. An operator raises it for a fleet of slow servers, or lowers it "
            "to bound a paid check's wait."
        ),
    )
    light_probe_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description=(
            "Budget of one light probe (a badge's), seconds. Kept short so a README badge never waits long; raise"
            " it only if slow servers' badges show unreachable."
        ),
    )
    dns_timeout_s: float = Field(
        default=3.0,
        gt=0,
        le=30,
        description="Budget of resolving the target host, seconds. An operator whose resolver is slow raises it.",
    )
    connect_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=30,
        description="Budget of one TCP and TLS connect, seconds. Raise it for far-away targets on a slow network.",
    )
    step_timeout_s: float = Field(
        default=15.0,
        gt=0,
        le=120,
        description=(
            "Most one HTTP exchange (headers and body) may take, seconds; otherwise an exchange may use what is "
            "left of the probe's budget. Real servers take 10 s and more to answer initialize: lower it only to "
            "fail such servers sooner."
        ),
    )
    refusal_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description=(
            "Budget of the refusal call (tools/call of a made-up tool name), seconds. Raise it if servers that "
            "answer slowly fail the refusal check."
        ),
    )
    session_end_timeout_s: float = Field(
        default=2.0,
        gt=0,
        le=10,
        description=(
            "Budget of the closing DELETE of a legacy session, seconds. Rarely changed: a probe's result never "
            "waits on it for long."
        ),
    )
    reply_cap_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        le=16 * 1024 * 1024,
        description=(
            "Largest decoded reply body read, bytes. Raise it for servers that list very large tool sets in one "
            "page; it bounds each probe's memory."
        ),
    )
    tools_max_pages: int = Field(
        default=5,
        ge=1,
        le=50,
        description=(
            "Most tools/list pages followed per probe. Raise it for servers that page a long tool list in small pages."
        ),
    )
    # --- the service -------------------------------------------------------------------------
    host: str = Field(
        default="127.0.0.1",
        description=(
            "Address `mcp-sonde serve` listens on. Set to 0.0.0.0 (or a private address) behind a proxy or in a "
            "container."
        ),
    )
    port: int = Field(
        default=8000,
        ge=0,
        le=65535,
        description="Port `mcp-sonde serve` listens on. Set per instance when several run on one machine.",
    )
    workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description=(
            "Worker processes of `serve` (uvicorn). More than 1 needs Redis (the limits and the free pool are "
            "shared state); each process costs its own memory."
        ),
    )
    public_url: str | None = Field(
        default=None,
        description=(
            "Public base URL of this service, used in links, the OpenAPI server, the x402 resource and the "
            "probes' User-Agent (<public_url>/probe). Every public deployment sets it; unset = "
            "http://<host>:<port>."
        ),
    )
    price_usd: str = Field(
        default="0.005", description="Price of one check in USD (paid in USDC). The operator's price."
    )
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("MCP_SONDE_REDIS_URL", "REDIS_URL"),
        description=(
            "Redis URL for everything shared between instances: limits, the free pool, payment locks, single "
            "flight, host slots, caches and the job queue. Every deployment of more than one process sets it; "
            "unset = the embedded in-process store."
        ),
    )
    memory_store_max_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024 * 1024,
        description=(
            "Bound of the embedded in-process store, bytes. A single-process deployment with many badges raises it."
        ),
    )
    redis_timeout_s: float = Field(
        default=2.0,
        gt=0,
        le=10,
        description=(
            "Redis connect and read timeout, seconds, and the longest wait for a pooled connection. "
            "One late answer is not an outage (two failed pings 0.5 s apart are); raise it where "
            "Redis is across a slow network."
        ),
    )
    redis_namespace: str = Field(
        default="",
        max_length=64,
        description="Prefix before every Redis key. Set when several deployments share one Redis.",
    )
    max_body_bytes: int = Field(
        default=8192,
        ge=256,
        le=1_048_576,
        description="Largest request body, bytes. Rarely changed: a check request fits in far less.",
    )
    baseline_max_bytes: int = Field(
        default=1_048_576,
        ge=0,
        le=8_388_608,
        description=(
            "Largest check request body whose baseline lists tool definitions, bytes. Raise it for servers with "
            "very large tool lists compared in the body."
        ),
    )
    body_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=120,
        description="Time a request body may take to arrive, seconds. Lower it to shed slow clients sooner.",
    )
    limit_concurrency: int = Field(
        default=1024,
        ge=1,
        description=(
            "Open connections per process before `serve` answers 503 (uvicorn). Size it to the memory of the machine."
        ),
    )
    rate_limit: str = Field(
        default="60/minute",
        description=(
            "Requests per client to the check route (`limits` syntax, e.g. 60/minute). The operator's fairness policy."
        ),
    )
    diff_rate_limit: str = Field(
        default="30/minute",
        description="Requests per client to POST /v1/mcp/diff (`limits` syntax). The operator's fairness policy.",
    )
    lookup_rate_limit: str = Field(
        default="120/minute",
        description=(
            "Requests per client to GET /v1/servers and the /mcp lookup tools (`limits` syntax). The operator's "
            "fairness policy."
        ),
    )
    directory_cursor_key: SecretStr | None = Field(
        default=None,
        min_length=16,
        description=(
            "Key of the directory's page cursors (HMAC-SHA256). Every instance behind one proxy must share it so "
            "a cursor from one is accepted by another; unset = a built-in key (cursors carry no authority)."
        ),
    )
    diff_max_body_bytes: int = Field(
        default=1_048_576,
        ge=1024,
        le=16 * 1_048_576,
        description="Largest body of POST /v1/mcp/diff, bytes. Raise it to compare very large tool lists.",
    )
    diff_timeout_s: float = Field(
        default=2.0, gt=0, le=60,
        description=(
        "Seconds the schema comparisons of one POST /v1/mcp/diff may take (the tools left are unknown, "
        "list_too_large), and most it waits for a comparison slot (then 503). Raise it on a machine with CPU "
        "to spare."
    ),
    )  # fmt: skip
    free_pool_size: int = Field(
        default=1000,
        ge=0,
        description="Free checks per UTC day, all clients together. The operator's free offer; 0 turns the free "
        "pool off.",
    )
    free_pool_origins: list[str] = Field(
        default_factory=list,
        description=(
            "Browser origins (scheme://host[:port]) whose pages may draw on the free pool. An operator who embeds"
            " the free check in another site lists it; this service's own origin always may."
        ),
    )
    free_pool_per_ip: int = Field(
        default=20,
        ge=0,
        description=(
            f"Free checks per client per UTC day ({DEVELOPMENT_FREE_POOL_PER_IP} by default when allow_private is "
            f"on). The operator's fairness policy."
        ),
    )
    host_concurrency: int = Field(
        default=2,
        ge=1,
        le=100,
        description=(
            "Probes running at once per target host, across every instance. Politeness toward the servers we "
            "check: raise it only for hosts that agreed."
        ),
    )
    host_client_concurrency: int = Field(
        default=1,
        ge=1,
        le=100,
        description=(
            "Probes of one target host that one client may have running at once. Politeness and fairness: rarely "
            "changed."
        ),
    )
    host_start_interval_s: float = Field(
        default=1.0,
        ge=0,
        le=60,
        description=(
            "Least time between two probe starts per target host, seconds. Politeness toward the servers we check."
        ),
    )
    queue_budget_s: float = Field(
        default=10.0,
        gt=0,
        le=60,
        description=(
            "How long a check may wait for its host's turn before 429 target_busy, seconds. Raise it to queue "
            "rather than refuse on popular hosts."
        ),
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description=(
            "Peers (IPs or CIDRs) whose X-Forwarded-For is believed, as a JSON list. A deployment behind a proxy "
            "lists it, and only it; empty = the socket peer is the client."
        ),
    )
    openapi_path: str | None = Field(
        default=None,
        description=(
            "Path of the openapi.yaml served. For an operator who serves an edited copy of the contract; unset = "
            "the packaged one."
        ),
    )
    # --- operations ----------------------------------------------------------------------------
    log_format: Literal["json", "plain"] = Field(
        default="json",
        description="Service logs: json (one object per line, for a log pipeline) or plain (for a terminal).",
    )
    metrics_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description=(
            "Serve /metrics on this port only (same host) and not on the main port. Set it to keep metrics off "
            "the public port; unset = on the main port."
        ),
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        min_length=1,
        description=(
            "When set, /metrics needs `Authorization: Bearer <token>` (401 otherwise). Set it where /metrics is "
            "reachable from outside."
        ),
    )
    otel_enabled: bool = Field(
        default=False,
        description=(
            "Export OpenTelemetry traces of checks (needs the `otel` extra and an exporter, configured with the "
            "OTEL_* variables). For operators with a tracing backend."
        ),
    )
    # --- badges ------------------------------------------------------------------------------
    badge_ttl_s: int = Field(
        default=86_400,
        ge=10,
        le=7 * 86_400,
        description=(
            "How long a badge's probe is fresh, seconds. Lower it for fresher badges at the cost of more probes "
            "of every server."
        ),
    )
    badge_rate_limit: str = Field(
        default="30/minute",
        description="Badge probes (cache misses) per client (`limits` syntax). The operator's fairness policy.",
    )
    badge_global_limit: str = Field(
        default="600/minute",
        description="Badge probes (cache misses) in all (`limits` syntax). Bounds the probes that badge views can "
        "cause.",
    )

    # --- signed results (in-toto statements in DSSE envelopes) -------------------------------
    data_dir: Path = Field(
        default_factory=default_data_dir,
        description=(
            "Directory of the embedded defaults' files: the key document, generated signing keys and the SQLite "
            "history. Set it to a persistent volume in a container."
        ),
    )
    keys_file: Path | None = Field(
        default=None,
        description=(
            "The key document (published at /.well-known/mcp-sonde-keys.json). Instances that sign with one key "
            "share it; default <data_dir>/keys/keys.json."
        ),
    )
    signing_key: SecretStr | None = Field(
        default=None,
        description=(
            "Ed25519 private key (PKCS#8 PEM) that signs results, for deployments that keep secrets in the "
            "environment; unset = signing_key_file, else the newest key of the data directory (one is made on "
            "first start)."
        ),
    )
    signing_key_file: Path | None = Field(
        default=None,
        description="Path of the PEM signing key (see signing_key), for deployments that mount secrets as files.",
    )
    attestation_ttl_s: int = Field(
        default=30 * 86_400, ge=60, le=400 * 86_400,
        description=(
        "How long GET /v1/attestations/{id} keeps a signed result, seconds (the embedded store: within its "
        "bound). The operator's retention policy."
    ),
    )  # fmt: skip

    @property
    def keys_path(self) -> Path:
        """The key document's path: ``keys_file``, or ``<data_dir>/keys/keys.json``."""
        return self.keys_file or self.data_dir / "keys" / "keys.json"

    # --- history -----------------------------------------------------------------------------
    database_url: SecretStr | None = Field(
        default=None,
        description=(
            "History database (postgresql+asyncpg://...). Every deployment of more than one process sets it; "
            "unset = SQLite in the data directory."
        ),
    )
    database_pool_size: int = Field(
        default=5, ge=1, le=200,
        description=(
        "PostgreSQL connections one process keeps (as many again are lent at busy times). A worker running "
        "many jobs at once wants more; size the total to the server's max_connections."
    ),
    )  # fmt: skip
    history_retention_days: int = Field(
        default=90,
        ge=1,
        le=3650,
        description=(
            "Days a stored run is kept (tool sets: as long as a run points to them). The operator's retention policy."
        ),
    )
    stats_max_age_s: float = Field(
        default=300.0, ge=1, le=86_400,
        description=(
        "Age of the published statistics past which a read starts their recomputation, seconds. Raise it on a"
        " large directory where a recomputation is costly."
    ),
    )  # fmt: skip
    baseline_proof_timeout_s: float = Field(
        default=5.0, gt=0, le=30,
        description="Budget of fetching a host's proof document (/.well-known/mcp-sonde.json), seconds. Rarely "
        "changed.",
    )  # fmt: skip

    # --- scheduled work (app.queue) -----------------------------------------------------------
    jobs_queue: str = Field(
        default="mcp-sonde:jobs", min_length=1, max_length=128,
        description=(
        "Name of the Redis stream of the job queue. Set when several deployments share one Redis (the key "
        "namespace does not cover it)."
    ),
    )  # fmt: skip
    embedded_jobs: bool = Field(
        default=True,
        description=(
            "Without Redis, `mcp-sonde serve` runs the scheduler and a worker in its own process. An operator "
            "turns it off on an instance that must only serve."
        ),
    )
    job_parts: list[str] = Field(
        default_factory=list,
        description=(
            "More registration functions of scheduled work (module:function, JSON list), called after the built-"
            "in ones in workers, schedulers and the embedded mode. For a deployment's own jobs."
        ),
    )
    scheduler_tick_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description=(
            "How often the scheduler asks every source for due jobs, seconds. Lower it for monitors to start "
            "closer to their due time."
        ),
    )
    scheduler_max_backlog: int = Field(
        default=5000, ge=1, le=10_000_000,
        description=(
        "Jobs enqueued and not yet done past which the scheduler takes no more from its sources. Size it to "
        "what the workers drain."
    ),
    )  # fmt: skip
    scheduler_lock_ttl_s: float = Field(
        default=15.0, ge=2, le=120,
        description=(
        "Lifetime of the active scheduler's lock in Redis (renewed every third of it), seconds: a standby "
        "takes over at most this long after the active one dies. Lower it for a faster takeover."
    ),
    )  # fmt: skip
    worker_concurrency: int = Field(
        default=20,
        ge=1,
        le=1000,
        description="Jobs one worker process runs at once. Size it to the worker's machine and database pool.",
    )
    job_redelivery_idle_s: float = Field(
        default=60.0, ge=1, le=86_400,
        description=(
        "A job a worker took and did not acknowledge for this long (it died) is handed to another worker, "
        "seconds. Keep it above the longest job (probe_timeout_s + job_turn_wait_s)."
    ),
    )  # fmt: skip
    job_turn_wait_s: float = Field(
        default=30.0, gt=0, le=600,
        description=(
        "How long a probe job waits for its host's turn before it goes back on the queue, seconds. Raise it "
        "where many jobs probe a few hosts."
    ),
    )  # fmt: skip
    job_history_wait_s: float = Field(
        default=20.0, ge=0, le=600,
        description=(
        "How long a probe job retries writing its run while the database does not answer, seconds, before the"
        " run waits in the history queue. Raise it where database failovers take longer."
    ),
    )  # fmt: skip
    worker_drain_s: float = Field(
        default=30.0, ge=0, le=600,
        description=(
        "On SIGTERM, how long a worker lets its jobs finish before the rest go back to the queue, seconds. "
        "Fit it to the orchestrator's stop grace period."
    ),
    )  # fmt: skip

    # --- payment (x402 v2) ---------------------------------------------------------------------
    pay_to: str | None = Field(
        default=None,
        description="Address that receives payments (EVM, 0x...). The operator's wallet; unset = paid checks are off.",
    )
    payment_networks: list[PaymentNetwork] = Field(
        default_factory=lambda: [
            PaymentNetwork(network="eip155:8453", asset="0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
            PaymentNetwork(network="eip155:137", asset="0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"),
        ],
        description=(
            "Accepted networks and USDC assets with their EIP-712 domain (JSON list). An operator changes it to "
            "accept other chains or test networks."
        ),
    )
    facilitator_url: str = Field(
        default="https://x402.org/facilitator",
        description="The x402 facilitator that verifies and settles payments. The operator's choice of facilitator.",
    )
    facilitator_headers: dict[str, str] = Field(
        default_factory=dict,
        description="Extra headers for the facilitator (for example its authorization), as a JSON object.",
    )
    facilitator_timeout_s: float = Field(
        default=15.0,
        gt=0,
        le=120,
        description="Budget of one facilitator call, seconds. Raise it for a slow facilitator.",
    )
    payment_timeout_s: int = Field(
        default=60,
        ge=10,
        le=3600,
        description=(
            "The maxTimeoutSeconds of the payment requirements: how long a client's signed payment stays valid for "
            "us. Rarely changed."
        ),
    )
    ca_bundle: str | None = Field(
        default=None,
        description=(
            "Path of a PEM file whose CAs are trusted in addition to the system roots. For a deployment that "
            "checks servers behind a private CA."
        ),
    )
    claim_dns_servers: list[str] = Field(
        default_factory=list,
        description=(
            "Nameservers asked for the TXT records that prove DNS claims, as a JSON list of IP or IP:port. For a "
            "deployment that wants a resolver of its own choosing; empty = the system's resolver."
        ),
    )

    # --- registry mirror, sweeps, opt-out ------------------------------------------------------
    registry_url: str | None = Field(
        default=None,
        description=(
            "Base URL of the MCP registry mirrored and swept (API v0.1: GET <registry_url>/v0.1/servers), e.g. "
            "https://registry.modelcontextprotocol.io. Probing every listed server is a deployment's decision: "
            "unset = no mirror and no sweeps."
        ),
    )
    registry_sync_interval_s: float = Field(
        default=3600.0, ge=60, le=7 * 86_400, description="How often the registry is synced, seconds."
    )
    registry_max_pages: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="Most pages read per registry sync. Raise it when the registry grows past it.",
    )
    registry_max_bytes: int = Field(
        default=4 * 1_048_576,
        ge=1024,
        le=64 * 1_048_576,
        description="Largest registry page read, bytes. Raise it if the registry's pages grow past it.",
    )
    registry_page_timeout_s: float = Field(
        default=30.0, gt=0, le=300, description="Budget of fetching one registry page, seconds."
    )
    registry_sync_budget_s: float = Field(
        default=900.0, gt=0, le=86_400, description="Budget of one whole registry sync, seconds."
    )
    registry_page_limit: int = Field(
        default=100,
        ge=1,
        le=1000,
        description=(
            "Entries asked for per registry page (the `limit` parameter). Fit it to the registry's own page limit."
        ),
    )
    sweep_interval_s: float = Field(
        default=86_400.0,
        ge=3600,
        le=30 * 86_400,
        description=(
            "How often a registry endpoint is probed, seconds. The operator's sweep policy (politeness against "
            "freshness)."
        ),
    )
    sweep_min_interval_s: float = Field(
        default=21_600.0,
        ge=60,
        le=30 * 86_400,
        description=(
            "Least time between two sweep probes of one endpoint, seconds. Politeness toward the servers we sweep."
        ),
    )
    sweep_max_interval_s: float = Field(
        default=604_800.0, ge=3600, le=90 * 86_400,
        description="Longest wait between sweep probes of an endpoint that keeps failing, seconds.",
    )  # fmt: skip
    admin_token: SecretStr | None = Field(
        default=None,
        min_length=16,
        description=(
            "Bearer token of the admin endpoints (/v1/admin/optout). The operator sets it to manage the opt-out "
            "list over HTTP; unset = they answer 403."
        ),
    )
    # --- monitors and webhooks ------------------------------------------------------------------
    monitor_run_price_usd: str = Field(
        default="0.005",
        description="Price of one monitor run in USD; a monitor is bought as a block of runs. The operator's price.",
    )
    monitor_block_runs: int = Field(
        default=100,
        ge=1,
        le=100_000,
        description="Runs one payment for a monitor buys (the block). The operator's offer.",
    )
    monitor_run_lost_s: float = Field(
        default=3600.0, ge=60, le=7 * 86_400,
        description=(
        "A monitor run handed out whose outcome is not heard within this long (its job was lost) is marked "
        f"lost and given back to the monitor's block, seconds (at least 600; 60 under staging, where it is "
        f"{STAGING_RUN_LOST_S:g} by default). Keep it above a job's longest life."
    ),
    )  # fmt: skip
    staging: bool = Field(
        default=False,
        description=(
            f"Staging switch, for drills and local tries: monitors may run every {STAGING_MIN_INTERVAL_S} s "
            f"(not {MIN_INTERVAL_S}) and the lost-run limit follows. Refused unless allow_private is on."
        ),
    )
    webhook_timeout_s: float = Field(
        default=10.0, gt=0, le=60, description="Budget of one webhook delivery attempt (lookup to answer), seconds."
    )
    webhook_retry_window_s: float = Field(
        default=86_400.0, gt=0, le=7 * 86_400,
        description=(
        "A webhook delivery is retried until this long after its first attempt, then failed, seconds. The "
        "operator's delivery promise."
    ),
    )  # fmt: skip

    @property
    def public_base_url(self) -> str:
        """``public_url`` without a trailing slash, or ``http://<host>:<port>`` when unset."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @model_validator(mode="after")
    def _development_free_pool(self) -> Settings:
        """Under ``allow_private`` the per-client share defaults to :data:`DEVELOPMENT_FREE_POOL_PER_IP`."""
        if self.allow_private and "free_pool_per_ip" not in self.model_fields_set:
            object.__setattr__(self, "free_pool_per_ip", DEVELOPMENT_FREE_POOL_PER_IP)  # (frozen: set once, here)
        return self

    @property
    def monitor_min_interval_s(self) -> int:
        """The shortest ``interval_s`` a monitor may have (:data:`MIN_INTERVAL_S`, or staging's)."""
        return STAGING_MIN_INTERVAL_S if self.staging else MIN_INTERVAL_S

    @model_validator(mode="after")
    def _staging_is_development(self) -> Settings:
        """``staging`` only with ``allow_private``; it lets ``monitor_run_lost_s`` below 600 and
        defaults it to :data:`STAGING_RUN_LOST_S`."""
        if self.staging and not self.allow_private:
            raise ValueError("staging needs the development switch (allow_private): never on a public deployment")
        if not self.staging and self.monitor_run_lost_s < 600:
            raise ValueError("monitor_run_lost_s must be at least 600 (60 under staging)")
        if self.staging and "monitor_run_lost_s" not in self.model_fields_set:
            object.__setattr__(self, "monitor_run_lost_s", STAGING_RUN_LOST_S)  # (frozen: set once, here)
        return self

    @model_validator(mode="after")
    def _sweep_intervals_ordered(self) -> Settings:
        if not self.sweep_min_interval_s <= self.sweep_interval_s <= self.sweep_max_interval_s:
            raise ValueError("sweep intervals must be ordered: sweep_min_interval_s <= sweep_interval_s <= "
                             "sweep_max_interval_s")  # fmt: skip
        return self

    @model_validator(mode="after")
    def _one_signing_key(self) -> Settings:
        if self.signing_key is not None and self.signing_key_file is not None:
            raise ValueError("set signing_key or signing_key_file, not both")
        return self

    @model_validator(mode="after")
    def _metrics_port_is_its_own(self) -> Settings:
        if self.metrics_port is not None and self.metrics_port == self.port:
            raise ValueError("metrics_port must differ from port (it serves /metrics alone)")
        return self

    @field_validator("ca_bundle")
    @classmethod
    def _ca_bundle_is_a_pem_file(cls, value: str | None) -> str | None:
        if value is None:
            return None
        path = Path(value)
        if not path.is_file():
            raise ValueError(f"CA bundle {value!r} is not a readable file")
        if b"-----BEGIN CERTIFICATE-----" not in path.read_bytes()[: 1024 * 1024]:
            raise ValueError(f"CA bundle {value!r} holds no PEM certificate")
        return value

    @field_validator("claim_dns_servers")
    @classmethod
    def _nameservers_are_addresses(cls, value: list[str]) -> list[str]:
        try:
            for item in value:
                nameserver(item)
        except ValueError as exc:
            raise ValueError(f"claim DNS servers: each is an IP address with an optional port ({exc})") from exc
        return value

    @field_validator("pay_to")
    @classmethod
    def _pay_to_is_an_address(cls, value: str | None) -> str | None:
        import re

        if value is not None and not re.fullmatch(r"0x[0-9a-fA-F]{40}", value):
            raise ValueError("pay_to must be an EVM address (0x and 40 hex digits)")
        return value

    @field_validator("price_usd", "monitor_run_price_usd")
    @classmethod
    def _price_is_a_decimal(cls, value: str) -> str:
        from decimal import Decimal, InvalidOperation

        try:
            price = Decimal(value)
        except InvalidOperation as exc:
            raise ValueError("a price must be a decimal number") from exc
        if price <= 0 or price.as_tuple().exponent < -6:  # type: ignore[operator]
            raise ValueError("a price must be positive with at most 6 decimals")
        return value

    @field_validator("rate_limit", "badge_rate_limit", "badge_global_limit", "diff_rate_limit", "lookup_rate_limit")
    @classmethod
    def _rate_limit_parses(cls, value: str) -> str:
        from limits import parse

        try:
            parse(value)
        except ValueError as exc:
            raise ValueError(f"rate limit {value!r} is not in `limits` syntax (for example 60/minute)") from exc
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_networks(cls, value: list[str]) -> list[str]:
        import ipaddress

        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError as exc:
                raise ValueError(f"trusted proxy {item!r} is not an IP address or CIDR") from exc
        return value


def nameserver(item: str) -> tuple[str, int]:
    """An item of ``claim_dns_servers`` (``address``, ``address:port``, ``[v6]:port``) as an
    address and a port (53 when none is given).

    Raises:
        ValueError: not an IP address with an optional port.
    """
    import ipaddress

    text = item.strip()
    if text.startswith("["):
        address, _, rest = text[1:].partition("]")
        port = int(rest[1:]) if rest.startswith(":") else 53
    elif text.count(":") == 1:
        address, _, number = text.partition(":")
        port = int(number)
    else:
        address, port = text, 53
    ipaddress.ip_address(address)
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is out of range")
    return address, port


@functools.cache
def get_settings() -> Settings:
    """Return the process-wide :class:`Settings`, read from the environment on first call."""
    return Settings()
