"""``python -m app`` runs the ``mcp-sonde`` command line."""

from __future__ import annotations

from app.cli import main

raise SystemExit(main())
