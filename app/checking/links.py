"""Where a check answer leads: its server's page, history and badges, and its attestation.

(The attestation's link is made from the answer's ``attestation_id``: see :func:`answer_links`.)

Every link is absolute, on the instance's public base URL (``public_url``), and derived only
from the endpoint URL (its ``server_id`` is :func:`app.history.records.server_id_of`: the URL
without its query string) and the attestation id, so an answer replayed for the same payment
says the same links. The badge snippets link the image to the server's page, where a reader
finds the checks behind it, never to a JSON document.
"""

from __future__ import annotations

from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from app.history.records import server_id_of
from app.suite.model import CheckResult


def badge_query(url: str) -> str:
    """The ``?url=`` query naming ``url`` to the badge routes."""
    return "?url=" + quote(url, safe="")


def server_page(base: str, server_id: str) -> str:
    """The server's HTML page."""
    return f"{base}/servers/{server_id}"


def status_badge_markdown(base: str, url: str) -> str:
    """The README snippet of the status badge: the SVG, linked to the server's page."""
    return f"[![MCP status]({base}/badge/mcp{badge_query(url)})]({server_page(base, server_id_of(url))})"


def uptime_badge_markdown(base: str, url: str) -> str:
    """The README snippet of the uptime badge: the SVG, linked to the server's page."""
    return f"[![MCP uptime]({base}/badge/mcp/uptime{badge_query(url)})]({server_page(base, server_id_of(url))})"


def attestation_link(base: str, attestation_id: str) -> str:
    """Where the envelope of ``attestation_id`` is kept (``GET /v1/attestations/{id}``)."""
    return f"{base}/v1/attestations/{attestation_id}"


def answer_links(base: str, url: str) -> dict[str, str]:
    """The ``links`` of a check answer of ``url``.

    The attestation is not among them: they are signed with the answer, and an attestation's id
    is the digest of the statement that signs them. Its link is
    :func:`attestation_link` of the answer's ``attestation_id``."""
    server_id = server_id_of(url)
    query = badge_query(url)
    return {
        "server": server_page(base, server_id),
        "history": f"{base}/v1/servers/{server_id}/history",
        "badge_svg": f"{base}/badge/mcp{query}",
        "uptime_badge_svg": f"{base}/badge/mcp/uptime{query}",
        "badge_markdown": status_badge_markdown(base, url),
        "uptime_badge_markdown": uptime_badge_markdown(base, url),
    }


class AnswerLinks(BaseModel):
    """Where a check answer leads (:func:`answer_links`)."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="The server's page (HTML): its checks, history, uptime and badges.")
    history: str = Field(description="The server's stored runs, newest first (JSON).")
    badge_svg: str = Field(description="The status badge (SVG).")
    uptime_badge_svg: str = Field(description="The uptime badge (SVG).")
    badge_markdown: str = Field(description="README Markdown of the status badge, linked to the server's page.")
    uptime_badge_markdown: str = Field(description="README Markdown of the uptime badge, linked to the server's page.")


class CheckAnswer(CheckResult):
    """A check answer as served: the result, with its ``server_id`` and ``links`` (signed with it)."""

    server_id: str = Field(description="The server's id: the endpoint URL without its query string, hashed.")
    links: AnswerLinks


def in_words(answer: dict[str, object], base: str) -> str:
    """The links of a served ``answer`` as a sentence (the MCP tool says them so beside the JSON)."""
    links = answer.get("links")
    if not isinstance(links, dict):
        return ""
    words = [
        f"Server page: {links.get('server')}",
        f"history: {links.get('history')}",
        f"status badge: {links.get('badge_svg')}",
        f"uptime badge: {links.get('uptime_badge_svg')}",
        f"README Markdown: {links.get('badge_markdown')}",
    ]
    attestation_id = answer.get("attestation_id")
    if isinstance(attestation_id, str) and not answer.get("credentialed"):
        words.append(f"attestation: {attestation_link(base, attestation_id)}")
    return "; ".join(words) + "."
