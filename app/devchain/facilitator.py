"""The development chain's HTTP face: an x402 v2 facilitator and a read-only view of the chain.

- ``POST /verify``, ``POST /settle``, ``GET /supported``: the x402 facilitator API, answered by
  the ``x402`` package's own ``x402Facilitator`` with its exact-EVM scheme, verifying EIP-3009
  authorizations and settling them with ``transferWithAuthorization`` on the chain.
- ``POST /rpc``: Ethereum JSON-RPC for reading the chain (balances, calls, receipts, logs);
  methods that write are refused with JSON-RPC error -32601.
- ``GET /accounts``: the funded accounts and their token balances.

It listens on loopback only (:mod:`app.cli.devchain`); bodies are capped at 64 KiB.
"""

from __future__ import annotations

from typing import Any

from eth_account.signers.local import LocalAccount
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from web3 import Web3
from x402 import x402Facilitator
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme
from x402.mechanisms.evm.signers import FacilitatorWeb3Signer
from x402.schemas import SettleRequest, VerifyRequest

from app.devchain.chain import DevChain

MAX_BODY = 64 * 1024
#: JSON-RPC methods ``/rpc`` answers: reads only.
READ_METHODS = frozenset(
    {"eth_chainId", "net_version", "eth_blockNumber", "eth_getBalance", "eth_call", "eth_getCode",
     "eth_getTransactionByHash", "eth_getTransactionReceipt", "eth_getLogs", "eth_getBlockByNumber",
     "eth_getTransactionCount"}
)  # fmt: skip


def new_facilitator(w3: Web3, gas: LocalAccount) -> x402Facilitator:
    """The x402 package's facilitator, settling on the in-process chain ``w3`` with ``gas``'s account."""
    signer = FacilitatorWeb3Signer(private_key=gas.key.hex(), rpc_url="http://127.0.0.1:9")
    signer._w3 = w3  # (the signer reads and writes the in-process chain, never that URL)
    facilitator = x402Facilitator()
    facilitator.register([f"eip155:{w3.eth.chain_id}"], ExactEvmFacilitatorScheme(signer))
    return facilitator


async def _json(request: Request) -> Any:
    body = await request.body()
    if len(body) > MAX_BODY:
        return None
    try:
        return await request.json()
    except ValueError:
        return None


def facilitator_app(chain: DevChain) -> Starlette:
    """The HTTP app (see the module docs)."""
    facilitator = new_facilitator(chain.w3, chain.facilitator_key)

    def dumped(answer: Any) -> JSONResponse:
        return JSONResponse(answer.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def verify(request: Request) -> Response:
        try:
            body = VerifyRequest.model_validate(await _json(request))
        except ValueError:
            return JSONResponse({"error": "invalid_request"}, 400)
        return dumped(await facilitator.verify(body.payment_payload, body.payment_requirements))

    async def settle(request: Request) -> Response:
        try:
            body = SettleRequest.model_validate(await _json(request))
        except ValueError:
            return JSONResponse({"error": "invalid_request"}, 400)
        return dumped(await facilitator.settle(body.payment_payload, body.payment_requirements))

    async def supported(request: Request) -> Response:
        return dumped(facilitator.get_supported())

    async def rpc(request: Request) -> Response:
        call = await _json(request)
        if not isinstance(call, dict) or not isinstance(call.get("method"), str):
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}})
        if call["method"] not in READ_METHODS:
            error = {"code": -32601, "message": "Method not found (this chain's /rpc only reads)"}
            return JSONResponse({"jsonrpc": "2.0", "id": call.get("id"), "error": error})
        params = call.get("params")
        answer = chain.w3.provider.make_request(call["method"], params if isinstance(params, list) else [])
        return JSONResponse({**dict(answer), "jsonrpc": "2.0", "id": call.get("id")})

    async def accounts(request: Request) -> Response:
        listed = [{"address": one.address, "balance": chain.balance(one)} for one in chain.accounts]
        return JSONResponse({"network": chain.network, "asset": chain.token.address, "accounts": listed})

    return Starlette(
        routes=[
            Route("/verify", verify, methods=["POST"]),
            Route("/settle", settle, methods=["POST"]),
            Route("/supported", supported),
            Route("/rpc", rpc, methods=["POST"]),
            Route("/accounts", accounts),
        ]
    )
