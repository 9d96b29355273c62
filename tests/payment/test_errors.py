"""The payment layer's errors: its own class, mapped by the service, and no import of the service."""

from __future__ import annotations

import ast
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest
from x402.schemas import PaymentRequired

import app.payment
from app.checking.errors import API_REASONS, ApiError, from_payment
from app.errors import SondeError
from app.payment import PaymentError, PaymentGate
from app.settings import Settings
from app.store import MemoryStore

PACKAGE = Path(app.payment.__file__).parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
    return found


def test_the_payment_layer_does_not_import_the_service() -> None:
    offenders = {
        path.name: sorted(m for m in imported_modules(path) if m == "app.http" or m.startswith("app.http."))
        for path in sorted(PACKAGE.glob("*.py"))
    }
    assert {name: modules for name, modules in offenders.items() if modules} == {}


def test_the_payment_layer_imports_on_its_own() -> None:
    """Imported first, in a fresh interpreter (the service's import of the gate made this a cycle)."""
    run = subprocess.run(
        [sys.executable, "-c", "import app.payment, sys; assert 'app.http' not in sys.modules"],
        cwd=PACKAGE.parent.parent,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr[-2000:]


class Unused:
    """A facilitator the gate must not reach: these refusals are decided before any call."""

    async def verify(self, payload: object, requirements: object) -> object:
        raise AssertionError("verify called")

    async def settle(self, payload: object, requirements: object) -> object:
        raise AssertionError("settle called")

    async def supported(self) -> object:
        raise AssertionError("supported called")

    async def aclose(self) -> None:
        return None


@pytest.mark.anyio
async def test_a_refused_payment_is_a_payment_error_the_service_maps() -> None:
    settings = Settings(pay_to="0x" + "1" * 40)
    gate = PaymentGate(settings, Unused(), MemoryStore())  # type: ignore[arg-type]
    try:
        await gate.begin("not base64!")
    except PaymentError as exc:
        refused = exc
    else:
        raise AssertionError("a malformed payment was accepted")
    assert isinstance(refused, SondeError) and not isinstance(refused, ApiError)
    assert (refused.reason, refused.status) == ("invalid_payment", 400)
    assert refused.document is not None and refused.document["error"] == "invalid_payment"
    header = PaymentRequired.model_validate(json.loads(base64.b64decode(refused.headers["PAYMENT-REQUIRED"])))
    assert header.error == "invalid_payment" and header.x402_version == 2
    mapped = from_payment(refused)
    assert (mapped.reason, mapped.status_code, mapped.body) == ("invalid_payment", 400, refused.document)
    assert mapped.headers == refused.headers and mapped.reason in API_REASONS
