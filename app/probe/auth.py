"""What an unauthenticated probe can learn about a protected MCP server.

Sources: MCP 2025-11-25 and 2026-07-28 ``basic/authorization`` (protected resource metadata
discovery order); RFC 9728 sections 3.1 (well-known URL: the suffix goes between host and
path), 3.3 (``resource`` must equal the resource identifier), 5.1 (``resource_metadata``).

Policy: the protected resource metadata is looked up in the spec's order, stopping at the
first document found: the ``resource_metadata`` URL of the challenge, then
``/.well-known/oauth-protected-resource/<path>`` (when the path is not ``/``), then
``/.well-known/oauth-protected-resource``. Every URL passes the target guard first
(:class:`app.probe.reach.Reach`); a refused one is reported and not fetched. A document is
metadata only when it is a JSON object with a string ``resource`` or an
``authorization_servers`` list; an HTML page with status 200 is not.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import anyio
import httpx2
from pydantic import BaseModel, ConfigDict, Field

from app.errors import SondeError
from app.guard import TargetUrl
from app.net.pace import PaceRefused
from app.probe.challenge import AuthChallenge, challenge_params, parse_www_authenticate
from app.probe.classify import classify_exception
from app.probe.exchange import Exchanger, Reply
from app.probe.reach import Reach
from app.probe.text import clean_text

WELL_KNOWN = "/.well-known/oauth-protected-resource"
LOOKUP_TIMEOUT_S = 4.0


class MetadataLookup(BaseModel):
    """One protected resource metadata URL tried: its HTTP status, or why it was not fetched."""

    model_config = ConfigDict(extra="forbid")
    url: str
    http_status: int | None = None
    refused: str | None = Field(default=None, description="Guard or DNS reason key; the URL was not fetched.")
    failed: str | None = Field(default=None, description="Transport failure reason, if the fetch failed.")


class ProtectedResource(BaseModel):
    """The protected resource metadata document found (RFC 9728 section 2)."""

    model_config = ConfigDict(extra="forbid")
    url: str
    resource: str | None = None
    resource_matches: bool = False
    authorization_servers: list[str] = Field(default_factory=list)
    scopes_supported: list[str] = Field(default_factory=list)


class AuthInfo(BaseModel):
    """Auth facts: the challenge, and the metadata lookups in order."""

    model_config = ConfigDict(extra="forbid")
    challenge: AuthChallenge | None = None
    metadata_published: bool = False
    metadata: ProtectedResource | None = None
    lookups: list[MetadataLookup] = Field(default_factory=list)


def metadata_urls(probed: TargetUrl, resource_metadata: str | None) -> list[str]:
    """The lookup order of MCP 2025-11-25 ``basic/authorization`` for ``probed``."""
    origin = probed.url[: len(probed.url) - len(probed.target)]
    path = urlsplit(probed.url).path
    urls = [resource_metadata] if resource_metadata else []
    if path and path != "/":
        urls.append(origin + WELL_KNOWN + path)
    urls.append(origin + WELL_KNOWN)
    return list(dict.fromkeys(urls))


def _normalised(url: str) -> str:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    default = {"https": 443, "http": 80}.get(scheme)
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    netloc = host if port in (None, default) else f"{host}:{port}"
    return f"{scheme}://{netloc}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")


def _strings(value: object, limit: int = 16) -> list[str]:
    if not isinstance(value, list):
        return []
    return [text for text in (clean_text(v, 512) for v in value[:limit] if isinstance(v, str)) if text]


def _document(reply: Reply, url: str, probed: TargetUrl) -> ProtectedResource | None:
    document = reply.payload
    if reply.status != 200 or not isinstance(document, dict):
        return None
    resource = document.get("resource")
    servers = document.get("authorization_servers")
    if not isinstance(resource, str) and not isinstance(servers, list):
        return None
    return ProtectedResource(
        url=clean_text(url, 2048) or "",
        resource=clean_text(resource, 2048),
        resource_matches=isinstance(resource, str) and _normalised(resource) == _normalised(probed.url),
        authorization_servers=_strings(servers),
        scopes_supported=_strings(document.get("scopes_supported"), 64),
    )


async def discover(exchanger: Exchanger, reach: Reach, probed: TargetUrl, reply: Reply, deadline: float) -> AuthInfo:
    """Parse the challenge of an auth reply and look up the protected resource metadata.

    Never raises for anything a server does; stops when ``deadline`` (monotonic) is reached.
    """
    header = reply.headers.get("www-authenticate")
    info = AuthInfo(challenge=parse_www_authenticate(header) if header is not None else None)
    # The guard must judge the URL as the server sent it; only the reported copy is cleaned.
    hint = challenge_params(header).get("resource_metadata") if header is not None else None
    for url in metadata_urls(probed, hint):
        lookup = MetadataLookup(url=clean_text(url, 2048) or "")
        info.lookups.append(lookup)
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            lookup.failed = "probe_deadline"
            break
        try:
            with anyio.fail_after(remaining):
                target = await reach.clear(url)
        except SondeError as exc:
            lookup.refused = exc.reason
            continue
        except TimeoutError:
            lookup.failed = "probe_deadline"
            break
        try:
            answer = await exchanger.send(
                "GET",
                target.url,
                headers={"Accept": "application/json"},
                timeout_s=min(LOOKUP_TIMEOUT_S, remaining),
            )
        except PaceRefused as exc:  # (the host's start turn did not come: not contacted)
            lookup.refused = exc.reason
            continue
        except (TimeoutError, httpx2.HTTPError) as exc:
            lookup.failed = classify_exception(exc).reason
            continue
        lookup.http_status = answer.status
        document = _document(answer, target.url, probed)
        if document is not None:
            info.metadata, info.metadata_published = document, True
            break
    return info
