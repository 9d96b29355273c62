"""Serving ``openapi.yaml`` with the live settings filled in.

The document in the repository is the contract; at start-up the service reads it once and sets
the free-pool figures (``x-free-pool``), the header name, the server URL and the live payment
options (``x-payment-info`` of the check operation) from the settings,
so what clients read always states the deployment's real limits. ``info.version`` is the running
package's (:data:`app.__version__`, the one version source, which setuptools reads into the
package metadata), so a release never serves the number of the one before.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any

import yaml

from app import __version__
from app.checking.freepool import HEADER as FREE_POOL_HEADER
from app.payment.requirements import CHECK_PATH, payment_requirements
from app.settings import Settings

#: The contract ships inside the package (the repository's top-level openapi.yaml links here).
DEFAULT_PATH = Path(__file__).resolve().parent / "openapi.yaml"


@functools.lru_cache(maxsize=4)
def _parsed(path: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    """The document as parsed, once per file version (libyaml's parser when PyYAML has it: the
    contract is large, and every app built in one process would otherwise parse it again)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    document: dict[str, Any] = yaml.load(path.read_text(), Loader=loader)
    return document


def load_document(settings: Settings) -> dict[str, Any]:
    """The OpenAPI document with live values.

    Raises:
        FileNotFoundError: no ``openapi.yaml`` at the configured path.
    """
    path = Path(settings.openapi_path) if settings.openapi_path else DEFAULT_PATH
    stat = path.stat()
    live = copy.deepcopy(_parsed(path, stat.st_mtime_ns, stat.st_size))
    live["servers"] = [{"url": settings.public_base_url}]
    info = live.setdefault("info", {})
    info["version"] = __version__
    info["x-free-pool"] = {
        "header": FREE_POOL_HEADER,
        "checks_per_day": settings.free_pool_size,
        "checks_per_client_per_day": settings.free_pool_per_ip,
        "day": "UTC",
    }
    operation = live.get("paths", {}).get(CHECK_PATH, {}).get("post")
    if operation is not None:
        operation["x-payment-info"] = {
            "protocol": "x402",
            "x402Version": 2,
            "scheme": "exact",
            "price": {"usd": settings.price_usd},
            "accepts": [
                r.model_dump(mode="json", by_alias=True, exclude_none=True) for r in payment_requirements(settings)
            ],
            "enabled": settings.pay_to is not None,
        }
    parameters = live.get("components", {}).get("parameters", {})
    if "FreePool" in parameters:
        parameters["FreePool"]["name"] = FREE_POOL_HEADER
        parameters["FreePool"]["description"] = (
            f"Set to 1 to draw this check from the daily free pool: {settings.free_pool_size} checks per UTC day "
            f"in all, at most {settings.free_pool_per_ip} per client."
        )
    return live
