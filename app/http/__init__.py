"""The HTTP service: ``POST /v1/mcp/check`` and operations endpoints. See :func:`create_app`.

``create_app`` is imported when first named (PEP 562), so :mod:`app.http.starting` loads
without the service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from app.http.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from app.http.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
