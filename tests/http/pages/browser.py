"""Headless Chromium for the browser tests: Debian's ``chromium`` package, driven by Playwright.

Playwright's own browser downloads are never used: the tests launch the system's binary
(:data:`CANDIDATES`, or ``MCP_SONDE_CHROMIUM``). Without one the tests skip, and fail under
``CI=true`` (``.ci/run`` installs the package). axe-core comes from ``tests/npm`` (``npm ci``).
Screenshots and axe-core reports go to ``MCP_SONDE_ARTEFACTS_DIR`` (default ``tests/artefacts``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

ROOT = Path(__file__).resolve().parents[3]
#: /usr/bin/chromium is Debian's launcher script; the binary itself is under /usr/lib.
CANDIDATES = ("/usr/lib/chromium/chromium", "/usr/lib/chromium-browser/chromium-browser")
AXE = ROOT / "tests" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
#: Impacts that fail a page: all of axe-core's scale (minor, moderate, serious, critical).
FAILING_IMPACTS = ("minor", "moderate", "serious", "critical")
#: Desktop and phone viewport widths of the screenshots.
WIDTHS = {"desktop": 1280, "phone": 390}
#: Collects CSP violations a page reports (installed before any of its scripts runs).
WATCH_CSP = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push({directive: event.violatedDirective, blocked: event.blockedURI});
});
"""


def need(path: Path | str | None, what: str) -> str:
    """``path`` as a string, or skip (fail under ``CI=true``) naming ``what`` is missing."""
    if path is not None and Path(path).exists():
        return str(path)
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing")
    pytest.skip(f"{what} is missing")


def chromium() -> str:
    """The system Chromium binary."""
    configured = os.environ.get("MCP_SONDE_CHROMIUM")
    found = configured or next((c for c in CANDIDATES if Path(c).exists()), None) or shutil.which("chromium")
    return need(found, "Debian's chromium (apt-get install chromium)")


def artefacts() -> Path:
    """The directory screenshots and reports are written to (made if missing)."""
    where = Path(os.environ.get("MCP_SONDE_ARTEFACTS_DIR") or ROOT / "tests" / "artefacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


def run_axe(page: Page, name: str) -> list[dict[str, Any]]:
    """axe-core's violations on ``page`` (its report saved as ``axe-<name>.json``). The script is
    evaluated through the DevTools protocol, which the page's CSP does not govern."""
    source = Path(need(AXE, "axe-core (npm ci --prefix tests/npm)")).read_text("utf-8")
    page.evaluate(source)
    result: dict[str, Any] = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    violations: list[dict[str, Any]] = result["violations"]
    report = [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]]}
        for v in violations
    ]
    (artefacts() / f"axe-{name}.json").write_text(json.dumps(report, indent=2) + "\n", "utf-8")
    return violations


def failing(violations: list[dict[str, Any]]) -> list[str]:
    """The ids and targets of violations that fail a page."""
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']]}" for v in violations
            if v["impact"] in FAILING_IMPACTS]  # fmt: skip


def screenshots(page: Page, name: str) -> list[Path]:
    """``<name>-desktop.png`` and ``<name>-phone.png`` of the whole page; at either width the page
    must not scroll sideways and axe-core must find no violation (reports ``axe-<name>-<width>``)."""
    saved = []
    for label, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px"
        assert failing(run_axe(page, f"{name}-{label}")) == [], f"axe-core at {width}px"
        path = artefacts() / f"{name}-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        saved.append(path)
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    return saved


def csp_violations(page: Page) -> list[dict[str, str]]:
    """The violations the page reported since it loaded."""
    found: list[dict[str, str]] = page.evaluate("window.__cspViolations || []")
    return found
