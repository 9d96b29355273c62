"""Benchmark: the check route's own overhead.

Every side checks the same fast local MCP server (``bench/slow_server.py`` with no delay, a
separate process) with the same number of checks in flight (default 16):

- baseline: :func:`app.checking.flow.run_check` called directly in a loop, in this process, on
  the services of an app built with the service's settings (its lifespan run): the route's
  whole work without HTTP (the guard, a free-pool draw, the full check with every judge, the
  signed answer, its run recorded to the history, SQLite here);
- for reference, :func:`app.probe.probe` called directly (the probe alone, nothing judged,
  signed or recorded): the route's extra work, shown separately;
- service: ``POST /v1/mcp/check`` on ``mcp-sonde serve`` (a separate process, one worker,
  embedded store, free pool), driven by wrk (Debian's package; one thread, a Lua script
  giving every request its own URL) when it is installed, else by an httpx2 client in this
  process (whose own CPU then competes with the service's on these 2 cores: the output says
  which ran).

Each check uses its own URL (a query string), so single-flight does not merge them, and the
per-host pace is off (``host_start_interval_s=0``), so only the service's own work is added.
Prints checks per second for each and the ratio service / ``run_check()`` (goal: at least 0.8).

Usage: ``python -m bench.api [CHECKS] [CONCURRENCY]`` (defaults 2000 and 16).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx2

from app.probe import probe
from app.settings import Settings
from tests.servers.ports import free_port, wait_listening, wait_ready


async def _drive(n: int, concurrency: int, once: Callable[[int], Awaitable[None]]) -> float:
    """Run ``once(i)`` for i in range(n), ``concurrency`` at a time; checks per second."""
    next_index = 0
    started = time.perf_counter()

    async def worker() -> None:
        nonlocal next_index
        while next_index < n:
            index = next_index
            next_index += 1
            await once(index)

    async with anyio.create_task_group() as group:
        for _ in range(concurrency):
            group.start_soon(worker)
    return n / (time.perf_counter() - started)


async def baseline(n: int, concurrency: int, target: str) -> float:
    settings = Settings(allow_private=True)

    async def once(i: int) -> None:
        result = await probe(f"{target}?n={i}", settings=settings)
        assert result.status == "ok", result.reason

    return await _drive(n, concurrency, once)


async def in_process(n: int, concurrency: int, target: str, env: dict[str, str]) -> float:
    """``run_check()`` on the services of an app made as the service makes it (the env's settings)."""
    from app.checking.flow import run_check
    from app.http import create_app

    with tempfile.TemporaryDirectory() as data:
        settings = Settings.model_validate({**_settings_of(env), "data_dir": Path(data)})
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            services = app.state.services

            async def once(i: int) -> None:
                served = await run_check(services, f"{target}?d={i}", client="127.0.0.1", payment=None, free=True)
                assert b'"status":"ok"' in served.payload, served.payload[:200]

            await _drive(50, concurrency, once)  # warm up
            return await _drive(n, concurrency, once)


def _settings_of(env: dict[str, str]) -> dict[str, str]:
    """The service's settings in ``env`` as keyword arguments (``MCP_SONDE_X`` -> ``x``)."""
    return {key.removeprefix("MCP_SONDE_").lower(): value for key, value in env.items() if key.startswith("MCP_SONDE_")}


async def service(n: int, concurrency: int, target: str, api: str) -> float:
    async with httpx2.AsyncClient(timeout=30, limits=httpx2.Limits(max_connections=concurrency)) as client:

        async def once(i: int) -> None:
            response = await client.post(
                f"{api}/v1/mcp/check", json={"url": f"{target}?n={i}"}, headers={"X-Free-Pool": "1"}
            )
            assert response.status_code == 200 and response.json()["status"] == "ok", response.text

        return await _drive(n, concurrency, once)


_WRK_SCRIPT = """
local n = 0
request = function()
  n = n + 1
  local body = '{"url":"TARGET?w=' .. n .. '-' .. math.random(1000000000) .. '"}'
  return wrk.format("POST", "/v1/mcp/check", {["Content-Type"] = "application/json", ["X-Free-Pool"] = "1"}, body)
end
"""


def service_wrk(seconds: int, concurrency: int, target: str, api: str) -> float:
    """Checks per second wrk measured; every answer must be a 200."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(_WRK_SCRIPT.replace("TARGET", target))
        script.flush()
        command = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", "-s", script.name, api]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
    if "Non-2xx" in done.stdout:
        raise RuntimeError(done.stdout)
    for line in done.stdout.splitlines():
        if line.startswith("Requests/sec:"):
            return float(line.split(":", 1)[1])
    raise RuntimeError(done.stdout)


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    concurrency = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    mcp_port, api_port = free_port(), free_port()
    env = {
        **os.environ,
        "MCP_SONDE_ALLOW_PRIVATE": "true",
        "MCP_SONDE_PORT": str(api_port),
        "MCP_SONDE_HOST_START_INTERVAL_S": "0",
        "MCP_SONDE_HOST_CONCURRENCY": "100",
        "MCP_SONDE_FREE_POOL_SIZE": str(10 * n),
        "MCP_SONDE_FREE_POOL_PER_IP": str(10 * n),
        "MCP_SONDE_RATE_LIMIT": "1000000/minute",
    }
    env.pop("REDIS_URL", None)
    server = subprocess.Popen([sys.executable, "-m", "bench.slow_server", str(mcp_port), "0"])
    api = subprocess.Popen(
        [sys.executable, "-m", "app", "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(mcp_port, server)
        wait_ready(api_port, api)
        target = f"http://127.0.0.1:{mcp_port}/mcp"
        anyio.run(baseline, 50, concurrency, target)  # warm up
        direct = anyio.run(baseline, n, concurrency, target)
        routed_work = anyio.run(
            in_process, n, concurrency, target, {k: v for k, v in env.items() if k != "MCP_SONDE_PORT"}
        )
        api_url = f"http://127.0.0.1:{api_port}"
        anyio.run(service, 50, concurrency, target, api_url)  # warm up
        wrk = shutil.which("wrk") is not None
        if wrk:
            through = service_wrk(max(3, n // 400), concurrency, target, api_url)
        else:
            through = anyio.run(service, n, concurrency, target, api_url)
    finally:
        for process in (api, server):
            process.terminate()
            process.wait(timeout=10)
    load = "wrk" if wrk else "an httpx2 client in this process"
    print(f"api benchmark: {n} full checks, {concurrency} in flight, fast local MCP server, service driven by {load}")
    print(f"  probe() directly        {direct:8.0f} checks/s   (the probe alone: nothing judged, signed or kept)")
    print(f"  run_check() directly    {routed_work:8.0f} checks/s   (the route's work without HTTP)")
    print(f"  POST /v1/mcp/check      {through:8.0f} checks/s")
    print(f"  ratio service/run_check {through / routed_work:8.2f}   (goal >= 0.8)")
    print(f"  ratio service/probe     {through / direct:8.2f}")


if __name__ == "__main__":
    main()
