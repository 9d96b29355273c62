"""One page of the registry fetched: ``GET <registry_url>/v0.1/servers?limit=&cursor=&updated_since=``.

Policy: the fetch is :func:`app.net.fetch.fetch_document` (the target guard on the URL, one
lookup, every address checked, dialled pinned to them; no proxy, no cookie; certificates
verified), so a registry URL that names a private address is refused like any target. The body
is read up to ``registry_max_bytes`` and no further, and the fetch takes at most the page's
budget (the smaller of ``registry_page_timeout_s`` and what is left of the sync's budget):
a slow drip is cut at the budget, not served byte by byte for ever. No redirect is followed.
Every failure is a :class:`PageFailed` with a reason key (``page_refused``, ``page_unresolved``,
``page_unreachable``, ``page_status``, ``page_too_large``, ``page_timeout``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from app import __version__
from app.errors import SondeError, TargetRefused
from app.guard import Resolver, ResolverBusy
from app.net.dial import Dialler
from app.net.fetch import FetchFailed, fetch_document

LIST_PATH = "/v0.1/servers"
FETCH_REASONS = {
    "fetch_unresolved": "page_unresolved",
    "fetch_status": "page_status",
    "fetch_too_large": "page_too_large",
    "fetch_timeout": "page_timeout",
}


class PageFailed(SondeError):
    """A page could not be had (see the module docs for the reasons)."""


@dataclass(frozen=True)
class PageClient:
    """Fetches pages of one registry."""

    registry_url: str
    resolver: Resolver
    allow_private: bool
    max_bytes: int
    page_limit: int
    ca_bundle: str | None = None
    network_backend: Dialler | None = None
    user_agent: str = f"mcp-sonde/{__version__}"

    def page_url(self, cursor: str | None, updated_since: datetime | None) -> str:
        """The URL of the page after ``cursor`` (the first without), updated since ``updated_since``."""
        query: dict[str, str] = {"limit": str(self.page_limit)}
        if cursor is not None:
            query["cursor"] = cursor
        if updated_since is not None:
            query["updated_since"] = updated_since.isoformat().replace("+00:00", "Z")
        return f"{self.registry_url.rstrip('/')}{LIST_PATH}?{urlencode(query)}"

    async def fetch(self, cursor: str | None, updated_since: datetime | None, timeout_s: float) -> bytes:
        """The page's body.

        Raises:
            PageFailed: see the module docs.
        """
        url = self.page_url(cursor, updated_since)
        try:
            fetched = await fetch_document(
                url,
                resolver=self.resolver,
                allow_private=self.allow_private,
                max_bytes=self.max_bytes,
                timeout_s=timeout_s,
                ca_bundle=self.ca_bundle,
                network_backend=self.network_backend,
                headers={"user-agent": self.user_agent},
            )
        except TargetRefused as exc:
            raise PageFailed("page_refused", f"the registry URL is refused ({exc.reason})") from None
        except ResolverBusy:
            raise PageFailed("page_unresolved", "no lookup could be made now") from None
        except FetchFailed as exc:
            reason = FETCH_REASONS.get(exc.reason, "page_unreachable")
            status = f" (HTTP {exc.status})" if exc.status is not None else ""
            raise PageFailed(reason, f"a registry page could not be had: {exc.reason}{status}") from None
        return fetched.body
