"""OpenTelemetry traces of checks: optional (the ``otel`` extra), off unless ``otel_enabled``.

Policy:

- Off (the default), mcp-sonde imports nothing of opentelemetry: every method here is a no-op
  and the probe runs without an observer. On, the SDK is imported at the app's start-up; when
  it is missing the start fails with reason ``otel_unavailable`` (``serve`` exits with its
  start-up code) rather than running without the traces that were asked for.
- Spans (OpenTelemetry semantic conventions, ``server.address``, where one applies):

  - ``mcp_sonde.check``: one per check (``POST /v1/mcp/check``, the MCP tool, a badge's
    probe). Attributes: ``server.address`` (the target's host only: a path or a query can
    carry keys), ``mcp_sonde.light``, ``mcp_sonde.status`` and ``mcp_sonde.reason`` (the
    result's, or the refusal's reason key), ``mcp_sonde.request_id``. A check that is refused
    or fails has status ERROR; exception messages are never recorded.
  - ``mcp_sonde.probe.<step>`` (``dns``, ``server/discover``, ``initialize``, ``tools/list``,
    ...): its children, one per probe step, made after the probe from the step's start (the
    probe's observer) and the duration the probe measured (:class:`app.probe.result.Timings`);
    the step that decided a failure ends with the probe, status ERROR.
  - ``mcp_sonde.facilitator.verify`` and ``.settle``: each call to the x402 facilitator, with
    its host and ``mcp_sonde.outcome`` (never the payload or the facilitator's headers).

- Export follows the standard environment: ``OTEL_TRACES_EXPORTER`` (default ``otlp``) names
  installed exporters (entry points of ``opentelemetry_traces_exporter``: the SDK ships
  ``console``; ``otlp`` needs ``opentelemetry-exporter-otlp``; ``none`` exports nothing), each
  configured by its own ``OTEL_EXPORTER_*`` variables and fed by a batch processor;
  ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` name the service (default
  ``mcp-sonde``); ``OTEL_TRACES_SAMPLER`` samples.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from app import __version__
from app.errors import SondeError
from app.logs import REQUEST_ID
from app.payment.facilitator import Facilitator

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer
    from x402.schemas import PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse, VerifyResponse

    from app.probe import ProbeResult

#: Probe step (as the probe names it) -> its field of :class:`app.probe.result.Timings`.
STEP_TIMINGS = {
    "dns": "dns_ms",
    "server/discover": "discover_ms",
    "sse/connect": "sse_connect_ms",
    "initialize": "initialize_ms",
    "notifications/initialized": "initialized_ms",
    "tools/list": "tools_list_ms",
    "tools/call": "tools_call_ms",
    "session/end": "session_end_ms",
}


class TracingUnavailable(SondeError):
    """``otel_enabled`` is on and the SDK or the exporter asked for is not installed (reason ``otel_unavailable``)."""


class CheckSpan:
    """The ``mcp_sonde.check`` span of one check (or nothing, when tracing is off)."""

    def __init__(self, span: Span | None = None) -> None:
        self.span = span
        self.steps: dict[str, int] = {}

    def target(self, host: str) -> None:
        """The check's target host passed the guard."""
        if self.span is not None:
            self.span.set_attribute("server.address", host)

    def result(self, status: str, reason: str) -> None:
        """The check's result."""
        if self.span is not None:
            self.span.set_attribute("mcp_sonde.status", status)
            self.span.set_attribute("mcp_sonde.reason", reason)

    def refused(self, reason: str) -> None:
        """The check was refused or failed with ``reason``."""
        if self.span is not None:
            from opentelemetry.trace import StatusCode

            self.span.set_attribute("mcp_sonde.reason", reason)
            self.span.set_status(StatusCode.ERROR, reason)


class Tracing:
    """The service's tracer (see the module docs).

    Args:
        enabled: the ``otel_enabled`` setting.
        provider: a tracer provider to use (tests pass one with an in-memory exporter); by
            default one is built from the ``OTEL_*`` environment at :meth:`start`.
    """

    def __init__(self, enabled: bool, provider: TracerProvider | None = None) -> None:
        self.enabled = enabled
        self._provider = provider
        self._owned = provider is None
        self._tracer: Tracer | None = None

    @property
    def on(self) -> bool:
        """Spans are being made (started, and enabled)."""
        return self._tracer is not None

    def start(self) -> None:
        """Build the tracer (the app's start-up).

        Raises:
            TracingUnavailable: the SDK, or an exporter ``OTEL_TRACES_EXPORTER`` names, is not installed.
        """
        if not self.enabled or self._tracer is not None:
            return
        try:
            import opentelemetry.sdk.trace  # noqa: F401
        except ImportError as exc:
            raise TracingUnavailable(
                "otel_unavailable",
                "otel_enabled is on but the OpenTelemetry SDK is not installed: pip install -e '.[otel]'",
            ) from exc
        if self._provider is None:
            self._provider = _provider_from_environment()
        self._tracer = self._provider.get_tracer("mcp_sonde", __version__)

    def shutdown(self) -> None:
        """Export what is pending and stop (the app's shutdown; a provider given to us stays up)."""
        if self._owned and self._provider is not None:
            self._provider.shutdown()
        self._tracer = None

    @contextlib.contextmanager
    def check(self, light: bool) -> Iterator[CheckSpan]:
        """The ``mcp_sonde.check`` span, current for the block (a no-op span when tracing is off)."""
        if self._tracer is None:
            yield CheckSpan()
            return
        attributes: dict[str, Any] = {"mcp_sonde.light": light}
        request_id = REQUEST_ID.get()
        if request_id is not None:
            attributes["mcp_sonde.request_id"] = request_id
        with self._tracer.start_as_current_span(
            "mcp_sonde.check", attributes=attributes, record_exception=False, set_status_on_exception=False
        ) as span:
            check = CheckSpan(span)
            try:
                yield check
            except SondeError as exc:
                check.refused(exc.reason)
                raise
            except BaseException as exc:
                check.refused(type(exc).__name__)
                raise

    def step_observer(self) -> StepClock | None:
        """A probe observer that notes when each step starts (``None`` when tracing is off)."""
        return StepClock() if self._tracer is not None else None

    def probe_steps(self, clock: StepClock | None, result: ProbeResult) -> None:
        """One child span of the current span per probe step, from ``clock`` and ``result.timings``."""
        if self._tracer is None or clock is None:
            return
        from opentelemetry.trace import StatusCode

        ended = time.time_ns()
        timings = result.timings.model_dump()
        for step, started in clock.started.items():
            field = STEP_TIMINGS.get(step)
            milliseconds = timings.get(field) if field is not None else None
            failed = result.failed_step == step
            if milliseconds is None and not failed:
                continue  # a step begun and overtaken (say, a discover answered by an old server)
            end = started + int(milliseconds * 1_000_000) if milliseconds is not None else ended
            span = self._tracer.start_span(f"mcp_sonde.probe.{step}", start_time=started)
            if failed:
                span.set_attribute("mcp_sonde.reason", result.reason)
                span.set_status(StatusCode.ERROR, result.reason)
            span.end(end_time=max(end, started))

    @contextlib.contextmanager
    def facilitator_call(self, name: str, host: str) -> Iterator[Span | None]:
        """The span of one facilitator call (``name``: ``verify`` or ``settle``)."""
        if self._tracer is None:
            yield None
            return
        with self._tracer.start_as_current_span(
            f"mcp_sonde.facilitator.{name}",
            attributes={"server.address": host},
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except SondeError as exc:
                from opentelemetry.trace import StatusCode

                span.set_attribute("mcp_sonde.outcome", exc.reason)
                span.set_status(StatusCode.ERROR, exc.reason)
                raise


class StepClock:
    """A probe observer: the wall-clock start (ns) of each step, the first time it starts."""

    def __init__(self) -> None:
        self.started: dict[str, int] = {}

    def __call__(self, step: str) -> None:
        self.started.setdefault(step, time.time_ns())


class TracedFacilitator:
    """A :class:`~app.payment.facilitator.Facilitator` whose verify and settle calls are spans."""

    def __init__(self, inner: Facilitator, tracing: Tracing, url: str) -> None:
        self.inner = inner
        self.tracing = tracing
        self.host = urlsplit(url).hostname or ""

    async def verify(self, payload: PaymentPayload, requirements: PaymentRequirements) -> VerifyResponse:
        """See :class:`~app.payment.facilitator.Facilitator`."""
        with self.tracing.facilitator_call("verify", self.host) as span:
            verdict = await self.inner.verify(payload, requirements)
            if span is not None:
                span.set_attribute("mcp_sonde.outcome", "valid" if verdict.is_valid else "invalid")
            return verdict

    async def settle(self, payload: PaymentPayload, requirements: PaymentRequirements) -> SettleResponse:
        """See :class:`~app.payment.facilitator.Facilitator`."""
        with self.tracing.facilitator_call("settle", self.host) as span:
            response = await self.inner.settle(payload, requirements)
            if span is not None:
                span.set_attribute("mcp_sonde.outcome", "settled" if response.success else "failed")
            return response

    async def supported(self) -> SupportedResponse:
        """See :class:`~app.payment.facilitator.Facilitator`."""
        with self.tracing.facilitator_call("supported", self.host):
            return await self.inner.supported()

    async def aclose(self) -> None:
        """See :class:`~app.payment.facilitator.Facilitator`."""
        await self.inner.aclose()


def _provider_from_environment() -> TracerProvider:
    """A tracer provider with the exporters, resource and sampler the ``OTEL_*`` environment says."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    names = os.environ.get("OTEL_TRACES_EXPORTER", "otlp").strip()
    exporters = []
    for name in [] if names.lower() == "none" else [part.strip() for part in names.split(",") if part.strip()]:
        found = entry_points(group="opentelemetry_traces_exporter", name=name)
        if not found:
            raise TracingUnavailable(
                "otel_unavailable",
                f"OTEL_TRACES_EXPORTER names {name!r}, which no installed package provides "
                "(install an exporter, for example opentelemetry-exporter-otlp, or set OTEL_TRACES_EXPORTER=console)",
            )
        exporters.append(next(iter(found)).load())
    resource = Resource.create({"service.version": __version__})  # with OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "mcp-sonde"}))
    provider = TracerProvider(resource=resource)
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter()))
    return provider
