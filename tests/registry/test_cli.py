"""``mcp-sonde registry sync|status`` as a process against the local registry."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.servers.registry import MALFORMED, RegistryState, generated, registry_server


def registry(tmp_path: Path, base: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"MCP_SONDE_DATA_DIR": str(tmp_path), "MCP_SONDE_ALLOW_PRIVATE": "true"}
    environment.pop("MCP_SONDE_DATABASE_URL", None)
    environment.pop("MCP_SONDE_REGISTRY_URL", None)
    if base is not None:
        environment["MCP_SONDE_REGISTRY_URL"] = base
    return subprocess.run(
        [sys.executable, "-m", "app", "registry", *args], capture_output=True, text=True, timeout=120, check=False,
        env=environment,
    )  # fmt: skip


def test_sync_then_status_on_the_embedded_database(tmp_path: Path) -> None:
    state = RegistryState(entries=generated(150), malformed=[raw for raw, _ in MALFORMED])
    with registry_server(state) as base:
        synced = registry(tmp_path, base, "sync")
        status = registry(tmp_path, base, "status")
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["stopped"] == "complete" and report["full"] and report["pages"] == 2
    assert report["entries"] == 155 and report["skipped"]["entry_duplicate_member"] == 1
    assert status.returncode == 0 and json.loads(status.stdout) == report


def test_without_a_registry_configured_nothing_is_synced(tmp_path: Path) -> None:
    done = registry(tmp_path, None, "sync")
    assert done.returncode == 2 and "registry_not_configured" in done.stderr and not done.stdout


def test_a_sync_the_registry_does_not_answer_is_exit_6_with_its_report(tmp_path: Path) -> None:
    """A scheduler running ``registry sync`` must be able to tell a sync that did not complete."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = registry(tmp_path, f"http://127.0.0.1:{port}", "sync")
    assert done.returncode == 6, done.stderr
    report = json.loads(done.stdout)
    assert report["stopped"] != "complete" and report["pages"] == 0


def test_remotes_kept_but_never_probed_are_counted_by_reason(tmp_path: Path) -> None:
    from tests.servers.registry import response

    entries = [
        response(
            "io.example/templated", "1.0.0", [{"type": "streamable-http", "url": "https://{tenant}.example.com/mcp"}]
        ),
        response("io.example/plain", "1.0.0", [{"type": "streamable-http", "url": "https://mcp.example.com/mcp"}]),
    ]
    with registry_server(RegistryState(entries=entries)) as base:
        synced = registry(tmp_path, base, "sync")
    assert synced.returncode == 0, synced.stderr
    report = json.loads(synced.stdout)
    assert report["endpoints"] == 2 and report["skipped"] == {"url_template": 1}
