"""The HTTP service: ``POST /v1/mcp/check`` and operations endpoints. See :func:`create_app`."""

from __future__ import annotations

from app.http.app import create_app

__all__ = ["create_app"]
