"""Public suffixes: names under which anyone may register a domain (``com``, ``co.uk``, ``github.io``).

Nobody speaks for a public suffix: an opt-out of ``github.io`` would silence every site under
it, at the word of one of them. :func:`is_public_suffix` answers from the Public Suffix List
(https://publicsuffix.org/list/, both its ICANN and private sections, as packaged by
``publicsuffixlist``, whose version pins the list's date). Only a name the list's rules cover
is one: the list's default rule (``*``, every unknown top-level label) is not applied, since a
name outside the public DNS (``localhost``, RFC 6761; ``intranet``) is one operator's host, not
a registry. An IP address is never one (it names one host, nothing under it).
The package is imported and the list read on first use, not at import (start-up and a command
that never asks do not pay for it).
"""

from __future__ import annotations

import ipaddress
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from publicsuffixlist import PublicSuffixList


@cache
def _list() -> PublicSuffixList:
    from publicsuffixlist import PublicSuffixList  # (imported on first use: serve's start-up skips it)

    return PublicSuffixList(accept_unknown=False)


def is_public_suffix(host: str) -> bool:
    """Whether ``host`` (a normalised host name: lower case, A-labels, no trailing dot) is a public suffix."""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return False
    except ValueError:
        return bool(_list().is_public(host))
