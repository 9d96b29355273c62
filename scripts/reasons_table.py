"""Rewrite the reason table of docs/checks.md from app/probe/reasons.py (run after adding a reason)."""

from __future__ import annotations

import re
from pathlib import Path

from app.probe.reasons import REASONS

PAGE = Path(__file__).resolve().parent.parent / "docs" / "checks.md"


def main() -> None:
    """Replace the block between the reasons markers."""
    rows = "\n".join(
        f"| `{key}` | {status} | {meaning.replace('|', '/')} |" for key, (status, meaning) in REASONS.items()
    )
    block = f"<!-- reasons:start -->\n| reason | status | meaning |\n|---|---|---|\n{rows}\n<!-- reasons:end -->"
    text = PAGE.read_text()
    PAGE.write_text(re.sub(r"<!-- reasons:start -->.*?<!-- reasons:end -->", block, text, flags=re.DOTALL))


if __name__ == "__main__":
    main()
