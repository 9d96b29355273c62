"""How a registry entry's namespace is verified, and what that shows about the endpoint.

An MCP registry name is ``<namespace>/<name>``. The official registry grants a namespace by one
of two paths: ``io.github.<account>`` through GitHub sign-in (the account, or an organisation
the publisher belongs to), and a reverse domain (``com.example`` or ``com.example.team``) by a
DNS TXT record on, or an HTTP file at ``/.well-known/mcp-registry-auth`` of, the domain
(``example.com``). Neither says anything about the endpoint the entry lists: a publisher may
list any URL. So each entry's verification is worded as what it shows and what it does not
(``namespaces.yaml``), and a domain namespace is told apart by whether the endpoint's host is
that domain or under it (``domain_matching``) or not (``domain_other``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

_GITHUB = re.compile(r"io\.github\.([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")


@dataclass(frozen=True)
class Verification:
    """How one entry's namespace is verified (``kind`` is a key of ``namespaces.yaml``)."""

    namespace: str
    kind: str
    subject: str | None
    verified_by: str
    shows: str
    does_not_show: str

    def as_json(self) -> dict[str, Any]:
        """The verification as the API answers it."""
        return {"namespace": self.namespace, "kind": self.kind, "subject": self.subject,
                "verified_by": self.verified_by, "shows": self.shows, "does_not_show": self.does_not_show}  # fmt: skip


@cache
def _wording() -> dict[str, dict[str, str]]:
    text = resources.files("app.directory").joinpath("namespaces.yaml").read_text(encoding="utf-8")
    loaded: dict[str, dict[str, str]] = yaml.safe_load(text)
    return loaded


def namespace_of(name: str) -> str:
    """The namespace of a registry name (the part before ``/``; the whole name without one)."""
    return name.partition("/")[0]


def domain_of(namespace: str) -> str | None:
    """The domain a reverse-domain namespace names (``com.example`` → ``example.com``), else ``None``."""
    labels = namespace.lower().split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels) or labels[0].isdigit():
        return None
    return ".".join(reversed(labels))


def under(host: str, domain: str) -> bool:
    """Whether ``host`` is ``domain`` or a name under it."""
    host = host.lower().rstrip(".")
    return host == domain or host.endswith("." + domain)


def verification(name: str, host: str) -> Verification:
    """How the namespace of registry name ``name`` is verified, for an endpoint on ``host``."""
    namespace = namespace_of(name)
    github = _GITHUB.fullmatch(namespace)
    subject: str | None
    if github is not None:
        kind, subject = "github", github.group(1)
    elif (domain := domain_of(namespace)) is not None and not namespace.lower().startswith("io.github."):
        kind, subject = ("domain_matching" if under(host, domain) else "domain_other"), domain
    else:
        kind, subject = "unverified", None
    words = _wording()[kind]
    fill = {"account": subject or "", "domain": subject or "", "host": host}
    return Verification(namespace, kind, subject, words["verified_by"], words["shows"].format(**fill),
                        words["does_not_show"].format(**fill))  # fmt: skip
