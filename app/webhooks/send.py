"""One webhook attempt on the wire: a POST through the target guard, dialled pinned.

Policy, as for every URL we fetch (:mod:`app.net.fetch`, whose pieces this reuses): the URL
passes :func:`app.guard.check_url`; its host is resolved at each attempt, once
(:func:`app.guard.resolve_target`: every address public unless the development switch is on),
and dialled only at those addresses (:class:`app.net.transport.PinnedBackend` under
:func:`app.net.transport.build_transport`: no proxy, no cookie, HTTP/1.1, certificates
verified). A webhook URL whose name now resolves to a private address is refused, never
dialled, and the attempt says so (``address_not_public``). Redirects are not followed (a 3xx
does not deliver). The whole attempt (lookup, connect, TLS, request, answer) takes at most
``timeout_s``; at most ``read_bytes`` of the answer are read and thrown away (never stored,
never logged): only the status code is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import httpx2

from app.errors import TargetRefused
from app.guard import ResolutionFailed, Resolver, ResolverBusy, check_url, resolve_target
from app.net.dial import Dialler
from app.net.h1.response import Response
from app.net.transport import PinnedBackend, build_transport

#: Reasons an attempt ends with, besides the target guard's refusals.
SENT_REASONS = {
    "delivered": "The receiver answered 2xx.",
    "http_status": "The receiver answered, not with a 2xx (status_code says which).",
    "unresolved": "The webhook host did not resolve.",
    "unreachable": "The connection, TLS or HTTP exchange failed.",
    "timeout": "The attempt did not end within webhook_timeout_s.",
    "resolver_busy": "No lookup thread could be taken; tried again later.",
    "webhook_secret_unavailable": "The signing key the monitor's secret derives from is not held here.",
    "opted_out": "The webhook's host or URL is on the opt-out list: never dialled, the delivery failed.",
    "optout_unavailable": "The opt-out list could not be read: not dialled; tried again later.",
}


@dataclass(frozen=True)
class Sent:
    """How an attempt ended: the answer's status code (if any) and a reason key."""

    status: int | None
    reason: str


async def post(
    url: str,
    body: bytes,
    headers: dict[str, str],
    *,
    resolver: Resolver,
    allow_private: bool,
    timeout_s: float,
    read_bytes: int,
    ca_bundle: str | None = None,
    network_backend: Dialler | None = None,
) -> Sent:
    """POST ``body`` to ``url`` (see the module docs); never raises for what the network does."""
    try:
        target = check_url(url, allow_private=allow_private)
    except TargetRefused as exc:
        return Sent(None, exc.reason)
    try:
        with anyio.fail_after(timeout_s):
            try:
                resolved = await resolve_target(target, resolver=resolver, allow_private=allow_private)
            except ResolutionFailed:
                return Sent(None, "unresolved")
            backend = PinnedBackend({target.host: resolved.addresses}, inner=network_backend)
            transport = build_transport(backend, ca_bundle=ca_bundle, tls=target.scheme == "https")
            sent = headers | {"content-type": "application/json", "accept-encoding": "identity"}
            async with transport:
                response = await transport.request("POST", httpx2.URL(target.url), sent, body)
                try:
                    await _drain(response, read_bytes)
                finally:
                    await response.aclose()
    except TimeoutError:
        return Sent(None, "timeout")
    except TargetRefused as exc:
        return Sent(None, exc.reason)
    except ResolverBusy:
        return Sent(None, "resolver_busy")
    except (httpx2.HTTPError, OSError):
        return Sent(None, "unreachable")
    status = response.status_code
    return Sent(status, "delivered" if 200 <= status < 300 else "http_status")


async def _drain(response: Response, read_bytes: int) -> None:
    """Read at most ``read_bytes`` of the answer, and drop them."""
    seen = 0
    async for chunk in response.aiter_raw():
        seen += len(chunk)
        if seen >= read_bytes:
            break
