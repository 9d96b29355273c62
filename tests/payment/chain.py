"""An offline EVM for payment tests: eth-tester on py-evm, the development chain's USDC-like
EIP-3009 token (:mod:`app.devchain`), and a real x402 facilitator (the ``x402`` package's own,
as :func:`app.devchain.new_facilitator` makes it) that verifies and settles against that
chain, served over HTTP on loopback with the hooks the payment tests need."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from web3 import Web3
from x402 import x402Client
from x402.client_base import SchemeRegistration, x402ClientConfig
from x402.extensions.payment_identifier import append_payment_identifier_to_extensions
from x402.mechanisms.evm.exact import ExactEvmClientScheme
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.schemas import PaymentPayload, PaymentRequired, SettleRequest, VerifyRequest

from app.devchain.chain import OnChain, deployed
from app.devchain.facilitator import new_facilitator

PRICE = 5000
START_BALANCE = 1_000_000


@dataclass
class Chain(OnChain):
    """The chain, the token and the accounts of one test."""

    w3: Web3
    token: Any
    payer: LocalAccount
    pay_to: LocalAccount
    facilitator_key: LocalAccount
    broke: LocalAccount
    state: dict[str, Any] = field(default_factory=dict)

    def transfers(self) -> list[Any]:
        """Every ``Transfer`` log of the token (mints included)."""
        return list(self.token.events.Transfer().get_logs(from_block=0))


def new_chain() -> Chain:
    """Deploy the token on a fresh in-process chain and fund the accounts."""
    payer, pay_to, facilitator_key, broke = (Account.create() for _ in range(4))
    w3, token = deployed(facilitator_key)
    deployer = w3.eth.accounts[0]
    token.functions.mint(payer.address, START_BALANCE).transact({"from": deployer})
    token.functions.mint(broke.address, PRICE - 1).transact({"from": deployer})
    return Chain(w3, token, payer, pay_to, facilitator_key, broke)


def facilitator_app(chain: Chain) -> Starlette:
    """A facilitator service (x402 v2 API) over the x402 package's own verifier and settler.

    ``GET /supported`` answers the real facilitator's kinds, unless ``chain.state["supported"]``
    says otherwise (read at each call): a list of kinds to answer instead, or an HTTP status to
    answer with no body. ``chain.state["supported_calls"]`` counts the calls.
    """
    facilitator = new_facilitator(chain.w3, chain.facilitator_key)
    calls: dict[str, int] = {"verify": 0, "settle": 0}
    chain.state["calls"] = calls
    chain.state["supported_calls"] = 0

    async def verify(request: Request) -> Response:
        calls["verify"] += 1
        body = VerifyRequest.model_validate(await request.json())
        answer = await facilitator.verify(body.payment_payload, body.payment_requirements)
        return JSONResponse(answer.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def settle(request: Request) -> Response:
        calls["settle"] += 1
        body = SettleRequest.model_validate(await request.json())
        drain = chain.state.pop("drain_before_settle", None)
        if callable(drain):
            drain()  # the payer empties the account after verify, just before the settlement
        answer = await facilitator.settle(body.payment_payload, body.payment_requirements)
        return JSONResponse(answer.model_dump(mode="json", by_alias=True, exclude_none=True))

    async def supported(request: Request) -> Response:
        chain.state["supported_calls"] += 1
        override = chain.state.get("supported")
        if isinstance(override, int):
            return Response(status_code=override)
        answer = facilitator.get_supported().model_dump(mode="json", by_alias=True, exclude_none=True)
        if override is not None:
            answer["kinds"] = override
        return JSONResponse(answer)

    return Starlette(
        routes=[
            Route("/verify", verify, methods=["POST"]),
            Route("/settle", settle, methods=["POST"]),
            Route("/supported", supported),
        ]
    )


async def pay(account: LocalAccount, required_header: str, identifier: str | None = None) -> str:
    """A ``PAYMENT-SIGNATURE`` header value: ``account`` signs an EIP-3009 authorization for the 402,
    with ``identifier`` in the ``payment-identifier`` extension when given (as the x402 client adds it)."""
    required = PaymentRequired.model_validate(json.loads(base64.b64decode(required_header)))
    client = x402Client.from_config(
        x402ClientConfig(
            schemes=[
                SchemeRegistration(network="eip155:*", client=ExactEvmClientScheme(signer=EthAccountSigner(account)))
            ],
            spend_controls=False,
        )
    )
    extensions = None
    if identifier is not None:
        extensions = append_payment_identifier_to_extensions(dict(required.extensions or {}), identifier)
    payload = await client.create_payment_payload(required, extensions=extensions)
    assert isinstance(payload, PaymentPayload)
    return encode(payload)


def encode(payload: PaymentPayload) -> str:
    """base64 JSON of a payload (the ``PAYMENT-SIGNATURE`` form)."""
    return base64.b64encode(
        json.dumps(payload.model_dump(mode="json", by_alias=True, exclude_none=True)).encode()
    ).decode()


def decode(header: str) -> PaymentPayload:
    """A ``PAYMENT-SIGNATURE`` value back to a payload."""
    return PaymentPayload.model_validate(json.loads(base64.b64decode(header)))


SECP256K1_N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141


def sign_authorization(
    chain: Chain,
    account: LocalAccount,
    *,
    to: str,
    value: int,
    valid_after: int,
    valid_before: int,
    nonce: bytes,
) -> str:
    """An EIP-3009 ``TransferWithAuthorization`` signature (EIP-712, the token's domain), 0x hex r||s||v."""
    typed = {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "TransferWithAuthorization": [
                {"name": "from", "type": "address"},
                {"name": "to", "type": "address"},
                {"name": "value", "type": "uint256"},
                {"name": "validAfter", "type": "uint256"},
                {"name": "validBefore", "type": "uint256"},
                {"name": "nonce", "type": "bytes32"},
            ],
        },
        "primaryType": "TransferWithAuthorization",
        "domain": {
            "name": "USD Coin",
            "version": "2",
            "chainId": chain.w3.eth.chain_id,
            "verifyingContract": chain.token.address,
        },
        "message": {
            "from": account.address,
            "to": to,
            "value": value,
            "validAfter": valid_after,
            "validBefore": valid_before,
            "nonce": nonce,
        },
    }
    signed = Account.sign_typed_data(account.key, full_message=typed)
    return "0x" + bytes(signed.signature).hex()


def malleate(signature: str) -> str:
    """The other valid ECDSA signature of the same message: (r, n - s, v flipped)."""
    raw = bytes.fromhex(signature.removeprefix("0x"))
    r, s, v = raw[:32], int.from_bytes(raw[32:64], "big"), raw[64]
    twin_s = (SECP256K1_N - s).to_bytes(32, "big")
    return "0x" + (r + twin_s + bytes([55 - v if v in (27, 28) else v ^ 1])).hex()


def with_authorization(header: str, chain: Chain, account: LocalAccount, **changes: Any) -> str:
    """The same payment re-signed with some authorization fields changed (still a valid signature)."""
    payload = decode(header)
    authorization = dict(payload.payload["authorization"])
    fields = {
        "to": authorization["to"],
        "value": int(authorization["value"]),
        "valid_after": int(authorization["validAfter"]),
        "valid_before": int(authorization["validBefore"]),
        "nonce": bytes.fromhex(authorization["nonce"].removeprefix("0x")),
    }
    fields.update(changes)
    signature = sign_authorization(chain, account, **fields)
    authorization.update(
        {
            "from": account.address,
            "to": fields["to"],
            "value": str(fields["value"]),
            "validAfter": str(fields["valid_after"]),
            "validBefore": str(fields["valid_before"]),
            "nonce": "0x" + fields["nonce"].hex(),
        }
    )
    updated = payload.model_copy(update={"payload": {"signature": signature, "authorization": authorization}})
    return encode(updated)
