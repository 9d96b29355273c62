"""Where the verifier's key document comes from: a file, or a URL fetched through the target guard.

No network is used unless a URL is given. A URL passes the same guard as a probe target
(:func:`app.guard.check_url`, then :func:`app.guard.resolve_target`: https on port 443 to
public addresses only, unless the development switch is on) and is dialled only at the
addresses it resolved to (:func:`app.net.fetch.fetch_document`, the one guarded fetch of a
document). The reply is capped at 64 kB and the whole fetch at 5 seconds; a redirect is not
followed (the key document of a service lives at one place: ``/.well-known/mcp-sonde-keys.json``),
and nothing but a 200 answer with a body within the cap is read.
"""

from __future__ import annotations

from app.attest.verify.keydoc import MAX_KEYS_BYTES
from app.attest.verify.reasons import VerificationFailed
from app.errors import TargetRefused
from app.guard import ResolverBusy, SystemResolver
from app.net.fetch import FetchFailed, fetch_document

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
        fetched = await fetch_document(
            url, resolver=SystemResolver(FETCH_TIMEOUT_S), allow_private=allow_private, max_bytes=MAX_KEYS_BYTES,
            timeout_s=FETCH_TIMEOUT_S, ca_bundle=ca_bundle,
        )  # fmt: skip
    except TargetRefused as exc:
        why = f"({exc.reason}): {exc.message}{_hint(exc, allow_private)}"
        raise _unavailable(f"the keys URL is refused {why}") from None
    except ResolverBusy as exc:
        raise _unavailable(f"the keys URL's host did not resolve ({exc.reason})") from None
    except FetchFailed as exc:
        raise _unavailable(f"the key document could not be fetched: {exc.message}") from None
    return fetched.body
