"""Where the verifier's key document comes from: a file, or a URL fetched through the target guard.

No network is used unless a URL is given. A URL passes the same guard as a probe target
(:func:`app.guard.check_url`, then :func:`app.guard.resolve_target`: https on port 443 to
public addresses only, unless the development switch is on) and is dialled only at the
addresses it resolved to (:class:`app.probe.transport.PinnedBackend`). The reply is capped at
64 kB and the whole fetch at 5 seconds; a redirect is not followed (the key document of a
service lives at one place: ``/.well-known/mcp-sonde-keys.json``), and nothing but a 200
answer with a body within the cap is read.
"""

from __future__ import annotations

import anyio
import httpx2

from app.attest.verify.keydoc import MAX_KEYS_BYTES
from app.attest.verify.reasons import VerificationFailed
from app.errors import TargetRefused
from app.guard import ResolutionFailed, ResolverBusy, SystemResolver, TargetUrl, check_url, resolve_target
from app.probe.transport import PinnedBackend, build_transport

FETCH_TIMEOUT_S = 5.0


def _unavailable(message: str) -> VerificationFailed:
    return VerificationFailed("keys_unavailable", message)


#: Refusals the development switch lifts: a keys URL on this machine (http, a port, loopback).
_LOCAL = frozenset({"scheme_not_https", "port_not_allowed", "host_ip_literal", "address_not_public"})


def _hint(exc: TargetRefused, allow_private: bool) -> str:
    if allow_private or exc.reason not in _LOCAL:
        return ""
    return " (a keys URL on this machine needs --allow-private, development only)"


def read_file(path: str) -> bytes:
    """The key document in the file ``path`` (at most 64 kB are read)."""
    try:
        with open(path, "rb") as source:
            return source.read(MAX_KEYS_BYTES + 1)
    except OSError as exc:
        raise _unavailable(f"cannot read the key document {path}: {exc.strerror}") from None


async def fetch(url: str, *, allow_private: bool = False, ca_bundle: str | None = None) -> bytes:
    """GET the key document at ``url`` (see the module docs).

    Raises:
        VerificationFailed: ``keys_unavailable``, saying why (refused URL, lookup, HTTP status, size, time).
    """
    try:
        target = check_url(url, allow_private=allow_private)
    except TargetRefused as exc:
        why = f"({exc.reason}): {exc.message}{_hint(exc, allow_private)}"
        raise _unavailable(f"the keys URL is refused {why}") from None
    try:
        with anyio.fail_after(FETCH_TIMEOUT_S):
            return await _get(target, allow_private, ca_bundle)
    except TimeoutError:
        raise _unavailable(f"the keys URL did not answer within {FETCH_TIMEOUT_S:g} s") from None


async def _get(target: TargetUrl, allow_private: bool, ca_bundle: str | None) -> bytes:
    try:
        resolved = await resolve_target(target, resolver=SystemResolver(FETCH_TIMEOUT_S), allow_private=allow_private)
    except TargetRefused as exc:
        why = f"({exc.reason}): {exc.message}{_hint(exc, allow_private)}"
        raise _unavailable(f"the keys URL's host is refused {why}") from None
    except (ResolutionFailed, ResolverBusy) as exc:
        raise _unavailable(f"the keys URL's host did not resolve ({exc.reason})") from None
    backend = PinnedBackend({target.host: resolved.addresses})
    transport = build_transport(backend, ca_bundle=ca_bundle, tls=target.scheme == "https")
    request = httpx2.Request("GET", target.url, headers={"accept": "application/json", "accept-encoding": "identity"})
    try:
        async with transport:
            response = await transport.handle_async_request(request)
            try:
                if response.status_code != 200:
                    raise _unavailable(
                        f"the keys URL answered HTTP {response.status_code} (redirects are not followed)"
                    )
                body = bytearray()
                async for chunk in response.aiter_raw():
                    body += chunk
                    if len(body) > MAX_KEYS_BYTES:
                        raise _unavailable(f"the key document is larger than {MAX_KEYS_BYTES} bytes")
                return bytes(body)
            finally:
                await response.aclose()
    except httpx2.HTTPError as exc:
        raise _unavailable(f"the keys URL could not be fetched ({type(exc).__name__})") from None
