"""Benchmark: what paying adds to a check.

Against the same local MCP server (``bench/slow_server.py``, no delay) and the same service
(in this process's thread, offline chain and the x402 package's facilitator on loopback, as in
the payment tests), N free-pool checks and N paid checks run one after another; each paid check
signs a fresh EIP-3009 authorization (signing is the client's cost and is done before timing).
Prints the median milliseconds of each and the median added by payment (verify, lock, settle).

Usage: ``python -m bench.payment [N]`` (default 50).
"""

from __future__ import annotations

import logging
import statistics
import subprocess
import sys
import time

import anyio
import httpx2

from app.http import create_app
from app.settings import PaymentNetwork, Settings
from tests.payment.chain import facilitator_app, new_chain, pay
from tests.servers.ports import free_port, wait_listening
from tests.servers.uvicorn_thread import serve


def main() -> None:
    """Print the figures."""
    logging.disable(logging.WARNING)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    chain = new_chain()
    mcp_port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "bench.slow_server", str(mcp_port), "0"])
    try:
        wait_listening(mcp_port, server)
        with serve(facilitator_app(chain)) as facilitator_port:
            settings = Settings(
                allow_private=True,
                host_start_interval_s=0,
                rate_limit="100000/minute",
                free_pool_size=10 * n,
                free_pool_per_ip=10 * n,
                pay_to=chain.pay_to.address,
                payment_networks=[PaymentNetwork(network=chain.network, asset=chain.token.address)],
                facilitator_url=f"http://127.0.0.1:{facilitator_port}",
                redis_url=None,
            )
            with serve(create_app(settings), proxy_headers=False) as api_port:
                base = f"http://127.0.0.1:{api_port}"
                free_ms, paid_ms = [], []
                with httpx2.Client(timeout=30) as client:
                    for i in range(n):
                        body = {"url": f"http://127.0.0.1:{mcp_port}/mcp?free={i}"}
                        started = time.perf_counter()
                        assert client.post(f"{base}/v1/mcp/check", json=body, headers={"X-Free-Pool": "1"}).is_success
                        free_ms.append((time.perf_counter() - started) * 1000)
                        body = {"url": f"http://127.0.0.1:{mcp_port}/mcp?paid={i}"}
                        required = client.post(f"{base}/v1/mcp/check", json=body).headers["payment-required"]
                        signature = anyio.run(pay, chain.payer, required)
                        started = time.perf_counter()
                        answer = client.post(
                            f"{base}/v1/mcp/check", json=body, headers={"PAYMENT-SIGNATURE": signature}
                        )
                        assert answer.status_code == 200, answer.text
                        paid_ms.append((time.perf_counter() - started) * 1000)
    finally:
        server.terminate()
        server.wait(timeout=10)
    free, paid = statistics.median(free_ms), statistics.median(paid_ms)
    print(f"payment benchmark: {n} free-pool and {n} paid checks, offline chain, facilitator on loopback")
    print(f"  free-pool check   median {free:8.1f} ms")
    print(f"  paid check        median {paid:8.1f} ms")
    print(f"  added by payment  median {paid - free:8.1f} ms  (ratio {paid / free:.2f})")


if __name__ == "__main__":
    main()
