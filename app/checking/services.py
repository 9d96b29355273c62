"""Everything a request needs, built once per app: settings, store, limits, pool, runner, metrics, signer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from x402.schemas import ResourceInfo, SettleResponse

from app.attest.keyring import keyring_of
from app.attest.signer import Attestor
from app.attest.store import AttestationStore
from app.baselines.store import Baselines
from app.checking.clients import Network, parse_networks
from app.checking.cpu import CpuPool
from app.checking.errors import ApiError, payment_errors
from app.checking.freepool import HEADER as FREE_POOL_HEADER
from app.checking.freepool import Draw, FreePool, seconds_to_utc_midnight
from app.checking.metrics import Metrics
from app.checking.ratelimit import Decision, RateLimiter
from app.checking.recorder import Recorder
from app.checking.runner import CheckMode, CheckRunner
from app.checking.tracing import TracedFacilitator, Tracing
from app.claims import Claim, ClaimStore, verify_claim
from app.claims.credentialed import CredentialedChecks
from app.claims.dns import DnsTxt, TxtLookup
from app.claims.hosts import ClaimedHosts
from app.claims.recheck import Rechecker
from app.db.engine import POOL_SIZE, database_url
from app.directory.rows import refresh as refresh_directory_row
from app.directory.store import Directory
from app.errors import SondeError
from app.guard import ResolvedTarget, Resolver, SystemResolver
from app.history.retention import Pruner
from app.history.store import SqlHistory
from app.monitors.pricing import block_price, monitor_resource
from app.monitors.store import MonitorStore
from app.net.agent import user_agent
from app.net.dial import Dialler
from app.optout import OptOutList
from app.payment import HttpFacilitator, Payment, PaymentGate
from app.probe import ProbeResult
from app.probe.runner import observe
from app.settings import Settings
from app.stats.snapshot import StatsSnapshots
from app.store import SharedStore, Store, health_of, open_cache, open_store
from app.suite.full import full_check
from app.webhooks.secrets import WebhookSecrets
from app.webhooks.store import DeliveryStore

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

#: Comparisons of ``POST /v1/mcp/diff`` running at once per process (each in a worker process).
DIFF_SLOTS = 2
#: CPU seconds a comparison may use beyond its schema comparisons' budget: parsing and checking
#: a full body takes a quarter of a second, so this is a wide margin (:mod:`app.checking.cpu`).
PARSE_CPU_S = 5.0


@dataclass
class Services:
    """The app's collaborators (see :func:`build_services`)."""

    settings: Settings
    store: Store  # state worth money or fairness: Redis or nothing (app.store.shared)
    cache: Store  # what may go on in process while Redis is down (app.store.resilient)
    resolver: Resolver
    client_limiter: RateLimiter
    diff_limiter: RateLimiter
    lookup_limiter: RateLimiter
    free_pool: FreePool
    checks: CheckRunner
    metrics: Metrics
    trusted_proxies: tuple[Network, ...]
    payments: PaymentGate
    attestor: Attestor
    attestations: AttestationStore
    recorder: Recorder
    diff_slots: anyio.CapacityLimiter
    cpu: CpuPool
    pruner: Pruner
    claims: ClaimStore
    rechecker: Rechecker
    txt: TxtLookup
    credentialed: CredentialedChecks
    claimed: ClaimedHosts
    optouts: OptOutList
    monitors: MonitorStore
    deliveries: DeliveryStore
    monitor_payments: PaymentGate
    webhook_secrets: WebhookSecrets
    stats: StatsSnapshots
    directory: Directory
    baselines: Baselines
    network_backend: Dialler | None = field(default=None)
    tracing: Tracing = field(default_factory=lambda: Tracing(enabled=False))

    async def probe_target(self, target: ResolvedTarget, mode: CheckMode) -> ProbeResult:
        """Probe a target already resolved and checked: a light probe, or a full check with its suite
        (with tracing on, the probe's steps become spans under the current check's)."""
        clock = self.tracing.step_observer()
        result: ProbeResult
        if not mode.light:
            result = await full_check(
                target.url.url,
                settings=self.settings,
                resolver=self.resolver,
                network_backend=self.network_backend,
                resolved=target,
                credentials=mode.credentials,
                observer=clock,
                contact=mode.contact,
                pace=mode.pace,
                include_tools=True,  # (kept for the history; the answer holds them only when asked)
            )
        else:
            observation = await observe(
                target.url.url,
                light=True,
                settings=self.settings,
                resolver=self.resolver,
                network_backend=self.network_backend,
                resolved=target,
                observer=clock,
                contact=mode.contact,
                pace=mode.pace,
            )
            result = observation.result
        self.tracing.probe_steps(clock, result)
        return result

    async def admit(self, client: str, limiter: RateLimiter | None = None) -> Decision:
        """Count one request against the client's rate limit (the check route's, or ``limiter``);
        the decision's headers go on every answer.

        Raises:
            ApiError: 429 ``rate_limited`` (with the limit headers) when the budget is spent.
        """
        limiter = limiter or self.client_limiter
        decision = await limiter.hit(client)
        if not decision.allowed:
            label = "client_rate" if limiter is self.client_limiter else f"{limiter.namespace}_rate"
            self.metrics.limits_hit.labels(limit=label).inc()
            raise ApiError("rate_limited", "too many requests from this client", headers=decision.headers())
        return decision

    async def authorize(
        self,
        payment: str | dict[str, object] | None,
        free: bool,
        client: str,
        request: bytes = b"",
        gate: PaymentGate | None = None,
        resource: ResourceInfo | None = None,
    ) -> Draw | Payment:
        """Decide how the check is paid: an x402 payment, or a free-pool draw.

        Args:
            payment: a ``PAYMENT-SIGNATURE`` header value or a decoded ``PaymentPayload``.
            free: the client asked for the free pool.
            client: the client's rate key.
            request: what the check is for, bound to the payment's identifier (if it has one).
            gate: the gate of what is bought, when it is not a check (:attr:`monitor_payments`).
            resource: what the route sells, when the gate sells several (one baseline per server).

        Raises:
            ApiError: 402 (with the x402 ``PaymentRequired`` document), 400, 409 or 503; see
                :mod:`app.payment.gate` and ``free_pool_exhausted``.
        """
        if payment is not None:
            try:
                with payment_errors():
                    return await (gate or self.payments).begin(payment, request, resource)
            except ApiError as exc:
                self.metrics.payments.labels(outcome=exc.reason).inc()
                raise
        with payment_errors():
            if free:
                draw = await self.free_pool.draw(client)
                if draw is None:
                    self.metrics.pool_draws.labels(outcome="exhausted").inc()
                    share = await self.free_pool.pool_left() > 0
                    which = "this client's share" if share else "today's pool"
                    setting = "MCP_SONDE_FREE_POOL_PER_IP" if share else "MCP_SONDE_FREE_POOL_SIZE"
                    headers = {"Retry-After": str(seconds_to_utc_midnight()), "X-Free-Pool-Remaining": "0"}
                    message = (
                        f"{which} of free checks is used up until 00:00 UTC; pay with x402 instead "
                        f"(the operator raises it with the setting {setting})"
                    )
                    raise self.payments.required("free_pool_exhausted", message, headers=headers)
                self.metrics.pool_draws.labels(outcome="drawn").inc()
                return draw
            if not self.payments.enabled:
                message = (
                    f"paid checks are not configured on this instance (no payTo, so accepts is empty); "
                    f"send {FREE_POOL_HEADER}: 1 to draw on the free pool"
                )
                raise self.payments.required("payment_required", message)
            raise self.payments.required(
                "payment_required",
                f"this check costs USD {self.settings.price_usd} (x402: PAYMENT-SIGNATURE); or send "
                f"{FREE_POOL_HEADER}: 1 to draw on the free pool",
            )

    async def settle(self, payment: Payment, answer: bytes, gate: PaymentGate | None = None) -> SettleResponse:
        """Settle ``payment`` for ``answer`` (through ``gate``, by default the check's), counting
        the outcome (``settled`` or the refusal's reason key).

        Raises:
            ApiError: the payment layer's refusal (see :func:`app.checking.errors.payment_errors`).
        """
        try:
            with payment_errors():
                receipt = await (gate or self.payments).settle(payment, answer)
        except SondeError as exc:
            self.metrics.payments.labels(outcome=exc.reason).inc()
            raise
        self.metrics.payments.labels(outcome="settled").inc()
        return receipt

    def start(self) -> None:
        """Start this instance's heartbeat in the shared store (inside the event loop)."""
        if isinstance(self.store, SharedStore):
            self.store.start()

    async def verify_claim(self, claim: Claim) -> None:
        """:func:`app.claims.verify_claim` of ``claim`` with the service's resolver, backend and settings."""
        settings = self.settings
        await verify_claim(
            claim.host, claim.challenge, method=claim.method, txt=self.txt, resolver=self.resolver,
            allow_private=settings.allow_private,
            ca_bundle=settings.ca_bundle, network_backend=self.network_backend, user_agent=user_agent(settings),
        )  # fmt: skip

    async def aclose(self) -> None:
        """Stop the pruning job and release connections."""
        self.cpu.close()
        await self.rechecker.aclose()
        await self.claimed.aclose()
        await self.pruner.aclose()
        await self.stats.aclose()
        await self.client_limiter.aclose()
        await self.diff_limiter.aclose()
        await self.lookup_limiter.aclose()
        await self.recorder.aclose()
        await self.payments.facilitator.aclose()
        await self.cache.aclose()
        await self.store.aclose()


def open_history(url: str, pool_size: int = POOL_SIZE) -> SqlHistory:
    """The history store as the service keeps it: each run's transaction also keeps the server's
    directory row current (:func:`app.directory.rows.refresh`). Whatever writes runs the service
    reads (the workers, a seed) opens it so."""
    return SqlHistory.open(url, pool_size, on_record=(refresh_directory_row,))


def build_services(
    settings: Settings,
    *,
    resolver: Resolver | None = None,
    network_backend: Dialler | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Services:
    """Build the collaborators for one app instance (``tracer_provider``: see :class:`Tracing`)."""
    store = open_store(
        settings.redis_url, settings.redis_timeout_s, settings.redis_namespace, settings.memory_store_max_bytes
    )
    cache = open_cache(store, settings.memory_store_max_bytes)
    health = health_of(store)
    metrics = Metrics()
    history = SqlHistory.open(database_url(settings), settings.database_pool_size, on_record=(refresh_directory_row,))
    tracing = Tracing(settings.otel_enabled, tracer_provider)
    facilitator = HttpFacilitator(
        settings.facilitator_url, settings.facilitator_headers, settings.facilitator_timeout_s
    )
    traced = TracedFacilitator(facilitator, tracing, settings.facilitator_url) if tracing.enabled else facilitator
    ring = keyring_of(settings)
    services = Services(
        settings=settings,
        store=store,
        cache=cache,
        resolver=resolver or SystemResolver(settings.dns_timeout_s),
        client_limiter=RateLimiter.configured(settings, settings.rate_limit, "check", health),
        diff_limiter=RateLimiter.configured(settings, settings.diff_rate_limit, "diff", health),
        lookup_limiter=RateLimiter.configured(settings, settings.lookup_rate_limit, "lookup", health),
        free_pool=FreePool(store, settings.free_pool_size, settings.free_pool_per_ip),
        checks=CheckRunner.__new__(CheckRunner),
        metrics=metrics,
        trusted_proxies=parse_networks(settings.trusted_proxies),
        payments=PaymentGate(settings, traced, store),
        attestor=Attestor(ring),
        attestations=AttestationStore(cache, settings.attestation_ttl_s),
        recorder=Recorder(history, metrics, settings.data_dir / "outbox"),
        diff_slots=anyio.CapacityLimiter(DIFF_SLOTS),
        cpu=CpuPool(DIFF_SLOTS, settings.diff_timeout_s + PARSE_CPU_S),
        pruner=Pruner(
            history,
            settings.history_retention_days,
        ),
        optouts=OptOutList(history.engine),
        monitors=MonitorStore(history.engine, settings.monitor_run_lost_s),
        deliveries=DeliveryStore(history.engine),
        monitor_payments=PaymentGate(
            settings, traced, store, price_usd=block_price(settings), resource=monitor_resource(settings)
        ),
        webhook_secrets=WebhookSecrets(ring),
        stats=StatsSnapshots(history.engine, settings.stats_max_age_s),
        directory=Directory(history.engine),
        baselines=Baselines(history.engine),
        claims=ClaimStore(history.engine),
        rechecker=Rechecker.__new__(Rechecker),
        txt=DnsTxt(settings.claim_dns_servers),
        credentialed=CredentialedChecks(history.engine),
        claimed=ClaimedHosts(history.engine),
        network_backend=network_backend,
        tracing=tracing,
    )
    services.checks = CheckRunner(store, settings, services.probe_target, metrics)
    services.rechecker = Rechecker(services.claims, services.verify_claim)
    return services
