"""The development chain: the shipped token is its source compiled, mainnets are refused
before anything starts, the facilitator settles a real payment, and ``/rpc`` only reads."""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
from importlib.resources import files

import anyio
import httpx2
import pytest

from app.devchain import facilitator_app, is_test_network, new_dev_chain
from app.devchain.chain import FUNDING, compiled_token
from app.payment.requirements import payment_required
from app.settings import PaymentNetwork, Settings
from tests.payment.chain import pay
from tests.servers.ports import free_port
from tests.servers.uvicorn_thread import serve


def test_the_shipped_token_is_its_source_compiled() -> None:
    import vyper

    source = files("app.devchain").joinpath("usdc_like.vy").read_text()
    compiled = vyper.compile_code(source, output_formats=["abi", "bytecode"])
    assert compiled_token() == {"abi": compiled["abi"], "bytecode": compiled["bytecode"]}


def test_mainnets_are_told_from_test_networks() -> None:
    networks = ("eip155:8453", "eip155:137", "eip155:1", "eip155:84532", "eip155:131277322940537")
    assert [is_test_network(network) for network in networks] == [False, False, False, True, True]
    assert not is_test_network("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp") and not is_test_network("eip155:x")


def test_dev_chain_refuses_unlisted_mainnet() -> None:
    # Sei, Celo and Mantle were absent from a deny-list of mainnets: the check is an allow-list now
    for network in ("eip155:1329", "eip155:42220", "eip155:5000", "eip155:99999999"):
        assert not is_test_network(network), network


def dev_chain(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MCP_SONDE_")} | env
    command = [sys.executable, "-m", "app", "dev-chain", *args]
    return subprocess.run(command, env=clean, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "env",
    [
        {"MCP_SONDE_PAY_TO": "0x" + "11" * 20},  # the default networks: Base and Polygon
        {"MCP_SONDE_PAYMENT_NETWORKS": '[{"network": "eip155:137", "asset": "0x' + "22" * 20 + '"}]'},
        {"MCP_SONDE_PAYMENT_NETWORKS": '[{"network": "eip155:1329", "asset": "0x' + "22" * 20 + '"}]'},
    ],
    ids=["pay_to_on_the_default_networks", "a_mainnet_named", "dev_chain_refuses_unlisted_mainnet"],
)
def test_it_refuses_to_run_beside_settings_that_take_real_money(env: dict[str, str]) -> None:
    done = dev_chain("--port", str(free_port()), env=env)
    assert done.returncode == 20, done.stderr
    assert "may move real value" in done.stderr and "eip155:" in done.stderr


def test_a_taken_port_is_exit_21_before_the_chain_is_built() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = dev_chain("--port", str(taken.getsockname()[1]), env={})
    assert done.returncode == 21 and "cannot listen on 127.0.0.1 port" in done.stderr


def test_the_facilitator_settles_a_payment_and_rpc_only_reads() -> None:
    chain = new_dev_chain(funded=2)
    payer, other = chain.accounts
    pay_to = "0x" + "33" * 20
    settings = Settings(
        pay_to=pay_to, payment_networks=[PaymentNetwork(network=chain.network, asset=chain.token.address)]
    )
    document = payment_required(settings, "payment_required")
    header = base64.b64encode(json.dumps(document.model_dump(mode="json", by_alias=True, exclude_none=True)).encode())
    signature = anyio.run(pay, payer, header.decode())
    payload = json.loads(base64.b64decode(signature))
    body = {"x402Version": 2, "paymentPayload": payload, "paymentRequirements": payload["accepted"]}
    with serve(facilitator_app(chain)) as port:
        base = f"http://127.0.0.1:{port}"
        supported = httpx2.get(f"{base}/supported", timeout=30).json()
        verified = httpx2.post(f"{base}/verify", json=body, timeout=30).json()
        settled = httpx2.post(f"{base}/settle", json=body, timeout=30).json()
        again = httpx2.post(f"{base}/settle", json=body, timeout=30).json()
        accounts = httpx2.get(f"{base}/accounts", timeout=30).json()
        read = httpx2.post(f"{base}/rpc", json={"jsonrpc": "2.0", "id": 7, "method": "eth_chainId"}, timeout=30)
        write = httpx2.post(
            f"{base}/rpc", json={"jsonrpc": "2.0", "id": 8, "method": "eth_sendTransaction", "params": [{}]}, timeout=30
        )
        garbage = httpx2.post(f"{base}/verify", content=b"{not json", timeout=30)
    assert supported["kinds"] == [{"x402Version": 2, "scheme": "exact", "network": chain.network}]
    assert verified["isValid"] is True and settled["success"] is True and again["success"] is False
    assert (
        chain.balance(pay_to) == 5000 and chain.balance(payer) == FUNDING - 5000 == accounts["accounts"][0]["balance"]
    )
    assert accounts["accounts"][1] == {"address": other.address, "balance": FUNDING}
    assert read.json() == {"jsonrpc": "2.0", "id": 7, "result": int(chain.network.split(":")[1])}
    assert write.json()["error"]["code"] == -32601 and garbage.status_code == 400
