"""The payment code of the README and the API guide works as written: the guide's testnet
settings parse into the values of the ``x402`` package's own tables, its HTTP client pays the
service on the offline chain (a retry after a lost answer included), and the README's MCP
clients, Python and TypeScript, pay the tool there once."""

from __future__ import annotations

import json
import re
import shlex
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from eth_account import Account
from x402 import x402Client
from x402.client_base import SchemeRegistration, x402ClientConfig
from x402.http.constants import DEFAULT_FACILITATOR_URL
from x402.mechanisms.evm.default_assets import DEFAULT_ASSETS
from x402.mechanisms.evm.exact import ExactEvmClientScheme
from x402.mechanisms.evm.signers import EthAccountSigner

from app.settings import Settings
from tests.payment.chain import PRICE, START_BALANCE, Chain
from tests.payment.conftest import PaidService
from tests.payment.test_paid_check import settled_transfers
from tests.servers.mcp_clients import CALL_SCRIPT, PROCESS_TIMEOUT_S
from tests.servers.node import NPM, require
from tests.servers.raw import RawServer, send
from tests.servers.raw import Request as RawRequest
from tests.servers.raw_mcp import MiniMcp

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
GUIDE = (ROOT / "docs" / "api.md").read_text()


def block(name: str, page: str = GUIDE) -> str:
    """The fenced code between ``<!-- name:start -->`` and ``<!-- name:end -->`` of ``page``."""
    section = page.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]
    match = re.search(r"```[a-z]*\n(.*?)```", section, flags=re.DOTALL)
    assert match is not None
    return match.group(1)


def test_testnet_settings_parse_and_match_the_x402_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    exported: dict[str, str] = {}
    for line in block("testnet").splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == "export":
            name, _, value = words[1].partition("=")
            exported[name] = value
    assert set(exported) == {
        "MCP_SONDE_PAY_TO",
        "MCP_SONDE_PAYMENT_NETWORKS",
        "MCP_SONDE_FACILITATOR_URL",
        "MCP_SONDE_PUBLIC_URL",
    }
    assert exported["MCP_SONDE_PAY_TO"] == "0xYOUR_ADDRESS"  # the one placeholder the reader replaces
    exported["MCP_SONDE_PAY_TO"] = "0x" + "1" * 40
    for name, value in exported.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    (option,) = settings.payment_networks
    (usdc,) = DEFAULT_ASSETS["eip155:84532"]
    assert option.network == "eip155:84532"
    assert (option.asset, option.name, option.version, option.decimals) == (
        usdc["asset"],
        usdc["name"],
        usdc["version"],
        usdc["decimals"],
    )
    assert settings.facilitator_url == DEFAULT_FACILITATOR_URL == "https://x402.org/facilitator"


def lossy_proxy(base: str) -> RawServer:
    """Forwards to the service; the answer to the first paid request is lost (the connection
    closes after the service has served and settled it)."""
    proxy = RawServer()
    lost = {"done": False}

    @proxy.route("/v1/mcp/check")
    def forward(request: RawRequest, conn: socket.socket) -> bool:
        headers = {
            name: value for name, value in request.headers.items() if name in ("content-type", "payment-signature")
        }
        answer = httpx2.post(f"{base}/v1/mcp/check", content=request.body, headers=headers, timeout=60)
        if "payment-signature" in headers and not lost["done"]:
            lost["done"] = True
            return True  # close without an answer
        kept = ("content-type", "payment-required", "payment-response")
        send(
            conn,
            answer.status_code,
            {name: answer.headers[name] for name in kept if name in answer.headers},
            answer.content,
        )
        return False

    return proxy


def test_the_client_code_pays_once_and_recovers_a_lost_answer(
    paid_service: PaidService, chain: Chain, raw: RawServer
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    namespace: dict[str, Any] = {}
    exec(compile(block("client"), "docs/api.md", "exec"), namespace)
    assert isinstance(namespace["payer"](chain.payer.key.hex()), x402Client)
    # The guide's payer() keeps the package's spend controls, which allow only known stablecoins;
    # the offline chain's token is not one, so this test signs with the same scheme without them.
    scheme = ExactEvmClientScheme(signer=EthAccountSigner(Account.from_key(chain.payer.key)))
    client = x402Client.from_config(
        x402ClientConfig(schemes=[SchemeRegistration(network="eip155:*", client=scheme)], spend_controls=False)
    )
    with paid_service() as base:
        proxy = lossy_proxy(base)
        proxy.start()
        try:
            result, transaction = anyio.run(namespace["paid_check"], proxy.url(""), raw.url("/mcp"), client)
        finally:
            proxy.stop()
    paid = [r for r in proxy.seen if "payment-signature" in r.headers]
    assert len(paid) == 2 and paid[0].headers["payment-signature"] == paid[1].headers["payment-signature"]
    assert result["status"] == "ok" and transaction.startswith("0x")
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1
    assert sum(1 for r in raw.seen if r.message.get("method") == "server/discover") == 1


def test_the_readme_s_python_mcp_client_pays_the_tool_once(
    paid_service: PaidService, chain: Chain, raw: RawServer
) -> None:
    raw.routes["/mcp"] = MiniMcp()
    namespace: dict[str, Any] = {}
    exec(compile(block("mcp-python", README), "README.md", "exec"), namespace)
    client = namespace["payer"]("0x" + bytes(chain.payer.key).hex())
    # The package's spend controls allow only the stablecoins it knows: the offline chain's token
    # is opted into, with the price as its cap, as an agent would for another token.
    allowed = {"network": chain.network, "asset": chain.token.address, "max_amount_per_payment": str(PRICE)}
    client.set_spend_controls({"allowed_assets": [allowed]})
    with paid_service() as base:
        result, transaction = anyio.run(namespace["paid_tool_check"], base, raw.url("/mcp"), client)
        with pytest.raises(RuntimeError, match="scheme_not_https"):  # a refusal that is no price: said, unpaid
            anyio.run(namespace["paid_tool_check"], base, "ftp://example.com/mcp", client)
    assert result["status"] == "ok" and result["server"]["name"] == "mini" and transaction.startswith("0x")
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1


RUN_TYPESCRIPT = """
import { payer, paidToolCheck } from "./readme.mjs";
const [sonde, url, key, network, asset, cap] = process.argv.slice(1);
const client = payer(key);
client.setSpendControls({ allowedAssets: [{ network, asset, maxAmountPerPayment: cap }] });
const [result, transaction] = await paidToolCheck(sonde, url, client);
let refused = null;
await paidToolCheck(sonde, "ftp://example.com/mcp", client).catch((error) => { refused = error.message; });
process.stdout.write(JSON.stringify({ result, transaction, refused }));
"""


def test_the_readme_s_typescript_mcp_client_pays_the_tool_once(
    paid_service: PaidService, chain: Chain, raw: RawServer
) -> None:
    require(CALL_SCRIPT)
    raw.routes["/mcp"] = MiniMcp()
    with tempfile.TemporaryDirectory(dir=NPM) as here, paid_service() as base:  # (under tests/npm: its modules)
        (Path(here) / "readme.mjs").write_text(block("mcp-typescript", README))
        key = "0x" + bytes(chain.payer.key).hex()
        args = [base, raw.url("/mcp"), key, chain.network, chain.token.address, str(PRICE)]
        done = subprocess.run(
            ["node", "--input-type=module", "-e", RUN_TYPESCRIPT, *args],
            cwd=here, capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    read = json.loads(done.stdout)
    assert read["result"]["status"] == "ok" and read["result"]["server"]["name"] == "mini"
    assert read["transaction"].startswith("0x") and "scheme_not_https" in read["refused"]
    assert chain.balance(chain.payer) == START_BALANCE - PRICE and len(settled_transfers(chain)) == 1
