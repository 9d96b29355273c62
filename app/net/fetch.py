"""One small document fetched through the target guard: a verifier's key document, a host's proof of control.

Policy: the URL passes :func:`app.guard.check_url`; its host is resolved once
(:func:`app.guard.resolve_target`: every address public unless the development switch is on)
and dialled only at those addresses (:class:`app.net.transport.PinnedBackend` under
:func:`app.net.transport.build_transport`: no proxy, no cookie, HTTP/1.1, certificates
verified). One ``GET`` with ``Accept-Encoding: identity``, so the cap counts the bytes as sent;
the body is read up to ``max_bytes`` and no further, and the whole fetch (lookup, connect, TLS,
redirects, body) takes at most ``timeout_s``. A redirect (RFC 9110 section 15.4) is followed
only while ``redirects`` allows and only when its ``Location`` is on the same origin (scheme,
host, port; RFC 6454): that host is dialled at the addresses already pinned, never looked up
again. Any other redirect is refused, and nothing but a 200 answer is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import anyio
import httpx2

from app.errors import SondeError, TargetRefused
from app.guard import ResolutionFailed, Resolver, TargetUrl, check_url, resolve_target
from app.net.dial import Dialler
from app.net.fields import single_value
from app.net.h1.response import Response
from app.net.transport import PinnedBackend, build_transport

REDIRECTS = frozenset({301, 302, 303, 307, 308})


class FetchFailed(SondeError):
    """The document could not be had.

    Reasons: ``fetch_unresolved`` (no usable DNS answer), ``fetch_unreachable`` (connection,
    TLS or HTTP failed), ``fetch_status`` (an answer other than 200; ``status`` says which),
    ``fetch_redirect_refused`` (off the origin, or more than allowed), ``fetch_too_large``,
    ``fetch_timeout``.
    """

    def __init__(self, reason: str, message: str, status: int | None = None) -> None:
        super().__init__(reason, message)
        self.status = status


@dataclass(frozen=True)
class Fetched:
    """A 200 answer's body, and the URL it came from (after same-origin redirects)."""

    url: str
    body: bytes


async def fetch_document(
    url: str,
    *,
    resolver: Resolver,
    allow_private: bool,
    max_bytes: int,
    timeout_s: float,
    redirects: int = 0,
    ca_bundle: str | None = None,
    network_backend: Dialler | None = None,
    headers: dict[str, str] | None = None,
) -> Fetched:
    """GET ``url`` (see the module docs).

    Args:
        url: the document's URL.
        resolver: asked once, for the URL's host.
        allow_private: the development switch.
        max_bytes: the most body bytes read.
        timeout_s: the budget of the whole fetch.
        redirects: same-origin redirects that may be followed.
        ca_bundle: extra trusted CAs (PEM path).
        network_backend: the socket backend under the pin table (tests pass a loopback one).
        headers: extra request headers (``Accept`` and ``Accept-Encoding`` are set here).

    Raises:
        TargetRefused: the guard refused the URL's form or its host's addresses.
        ResolverBusy: no lookup thread may be taken now.
        FetchFailed: see the class.
    """
    target = check_url(url, allow_private=allow_private)
    try:
        with anyio.fail_after(timeout_s):
            return await _fetch(target, resolver, allow_private, max_bytes, redirects, ca_bundle,
                                network_backend, headers or {})  # fmt: skip
    except TimeoutError:
        raise FetchFailed("fetch_timeout", f"{target.url} did not answer within {timeout_s:g} s") from None


async def _fetch(
    target: TargetUrl,
    resolver: Resolver,
    allow_private: bool,
    max_bytes: int,
    redirects: int,
    ca_bundle: str | None,
    network_backend: Dialler | None,
    headers: dict[str, str],
) -> Fetched:
    try:
        resolved = await resolve_target(target, resolver=resolver, allow_private=allow_private)
    except ResolutionFailed as exc:
        raise FetchFailed("fetch_unresolved", f"{target.host} did not resolve ({exc.reason})") from None
    backend = PinnedBackend({target.host: resolved.addresses}, inner=network_backend)
    transport = build_transport(backend, ca_bundle=ca_bundle, tls=target.scheme == "https")
    sent = headers | {"accept": headers.get("accept", "application/json"), "accept-encoding": "identity"}
    current = target
    try:
        async with transport:
            for hop in range(redirects + 1):
                response = await transport.request("GET", httpx2.URL(current.url), sent)
                try:
                    status = response.status_code
                    if status in REDIRECTS and hop == redirects:
                        why = "redirects are not followed" if redirects == 0 else f"more than {redirects} redirects"
                        message = f"{current.url} answered HTTP {status} ({why})"
                        raise FetchFailed("fetch_redirect_refused", message, status)
                    if status in REDIRECTS:
                        current = _same_origin(
                            target, current, single_value(response.headers, "location"), allow_private
                        )
                        continue
                    if response.status_code != 200:
                        message = f"{current.url} answered HTTP {response.status_code}"
                        raise FetchFailed("fetch_status", message, response.status_code)
                    return Fetched(current.url, await _body(response, max_bytes))
                finally:
                    await response.aclose()
    except httpx2.HTTPError as exc:
        raise FetchFailed("fetch_unreachable", f"{current.url} could not be fetched ({type(exc).__name__})") from None
    raise AssertionError("unreachable: the last hop answers or raises")  # pragma: no cover


def _same_origin(target: TargetUrl, current: TargetUrl, location: str | None, allow_private: bool) -> TargetUrl:
    """Where a redirect from ``current`` leads, when that stays on ``target``'s origin."""
    refused = FetchFailed("fetch_redirect_refused", f"{current.url} redirected off its origin (not followed)")
    if not location:
        raise refused
    try:
        following = check_url(urljoin(current.url, location), allow_private=allow_private)
    except TargetRefused:
        raise refused from None
    if following.origin != target.origin:
        raise refused
    return following


async def _body(response: Response, max_bytes: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > max_bytes:
            raise FetchFailed("fetch_too_large", f"the document is larger than {max_bytes} bytes (not read further)")
    return bytes(body)
