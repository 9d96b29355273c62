"""docs/dev-chain.md step by step, as real processes: ``mcp-sonde dev-chain --env-file``, the
service started with that file read by a shell, and the page's client code paying for a check,
a monitor and a baseline approval with the official x402 client."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx2

from tests.servers.ports import free_port, wait_listening
from tests.servers.sonde import sonde

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "dev-chain.md").read_text()


def client_code() -> str:
    section = PAGE.split("<!-- dev-chain-client:start -->", 1)[1].split("<!-- dev-chain-client:end -->", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, flags=re.DOTALL)
    assert match is not None
    return match.group(1)


def sourced(env_file: Path) -> dict[str, str]:
    """The variables a shell's ``set -a; . FILE`` exports (as the page reads the file)."""
    printed = subprocess.run(
        ["bash", "-c", f'set -a; . "{env_file}"; set +a; env -0'], capture_output=True, check=True, env={}
    ).stdout
    pairs = (item.split("=", 1) for item in printed.decode().split("\0") if "=" in item)
    return {name: value for name, value in pairs if name.startswith(("MCP_SONDE_", "DEV_CHAIN_"))}


def test_the_page_pays_for_a_check_a_monitor_and_a_baseline_on_the_offline_chain(tmp_path: Path) -> None:
    env_file, port = tmp_path / "dev-chain.env", free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MCP_SONDE_")}
    chain = subprocess.Popen(
        [sys.executable, "-m", "app", "dev-chain", "--port", str(port), "--env-file", str(env_file)],
        env=clean, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_listening(port, chain, timeout_s=120)
        deadline = time.monotonic() + 120
        while not env_file.exists():  # (written before the facilitator answers; waited for all the same)
            assert time.monotonic() < deadline and chain.poll() is None
            time.sleep(0.1)
        settings = sourced(env_file)
        assert settings["MCP_SONDE_FACILITATOR_URL"] == f"http://127.0.0.1:{port}"
        assert settings["MCP_SONDE_PAYMENT_NETWORKS"].startswith('[{"network":"eip155:')
        before = httpx2.get(f"http://127.0.0.1:{port}/accounts", timeout=30).json()["accounts"][0]["balance"]
        service_env = {k: v for k, v in settings.items() if k.startswith("MCP_SONDE_")}
        with sonde("--allow-private", env=service_env | {"MCP_SONDE_DATA_DIR": str(tmp_path / "data")}) as served:
            client_env = (
                clean | {k: v for k, v in settings.items() if k.startswith("DEV_CHAIN_")} | {"SONDE": served.base}
            )
            done = subprocess.run(
                [sys.executable, "-c", client_code()], env=client_env, capture_output=True, text=True, timeout=300
            )
        after = httpx2.get(f"http://127.0.0.1:{port}/accounts", timeout=30).json()["accounts"][0]["balance"]
    finally:
        chain.terminate()
        chain.communicate(timeout=30)
    assert done.returncode == 0, done.stderr + served.stderr.decode()[-3000:]
    assert done.stdout.splitlines() == ["check: 200 ok", "monitor: 201 100 runs", "baseline: 200 payment"]
    assert before - after == 510_000  # USD 0.005 + 0.500 + 0.005, as the page says
    assert chain.returncode == 0  # (SIGTERM: a clean stop)
