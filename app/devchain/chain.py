"""The chain: a fresh in-process EVM, the token deployed on it, and accounts funded with it.

The token (``usdc_like.vy``, Vyper 0.4.3) ships compiled (``usdc_like.json``: its ABI and
bytecode; a test compiles the source again and compares), so running the chain needs no
compiler. Its EIP-712 domain is USDC's (name ``USD Coin``, version ``2``) and it has 6
decimals, so the service's default payment option fits it with only the asset address
changed. Accounts are new random keys at every start: they hold test tokens on a chain that
exists only in this process, and are printed for that reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from eth_account import Account
from eth_account.signers.local import LocalAccount
from web3 import EthereumTesterProvider, Web3

#: EIP-155 chain ids of networks whose tokens are worth nothing: this development chain
#: (eth-tester's id), local chains (1337, Hardhat and Anvil's 31337) and the public test networks
#: (Sepolia, Base Sepolia, Polygon Amoy, OP Sepolia, Arbitrum Sepolia, Avalanche Fuji). The list
#: is an allow-list, so the check fails closed: the development chain never runs beside settings
#: that accept payments on any other network, a mainnet named here or not (EIP-155 ids are
#: assigned without a registry this code could follow).
TEST_CHAIN_IDS = frozenset({131277322940537, 1337, 31337, 11155111, 84532, 80002, 11155420, 421614, 43113})
#: Token units (6 decimals) given to each funded account: 1,000 test USDC.
FUNDING = 1_000 * 10**6
TOKEN_NAME, TOKEN_VERSION = "USD Coin", "2"


def is_test_network(network: str) -> bool:
    """Whether a CAIP-2 network is an ``eip155:<id>`` chain of :data:`TEST_CHAIN_IDS`; any other
    network, of any namespace, may move real value."""
    namespace, _, reference = network.partition(":")
    return namespace == "eip155" and reference.isdigit() and int(reference) in TEST_CHAIN_IDS


@cache
def compiled_token() -> dict[str, Any]:
    """ABI and bytecode of the token, as shipped."""
    document: dict[str, Any] = json.loads(files("app.devchain").joinpath("usdc_like.json").read_text())
    return document


class OnChain:
    """What is read off a chain with a token (``w3``, ``token``): its network and balances."""

    w3: Web3
    token: Any

    @property
    def network(self) -> str:
        """CAIP-2 id of the chain."""
        return f"eip155:{self.w3.eth.chain_id}"

    def balance(self, account: LocalAccount | str) -> int:
        """Token balance, atomic units."""
        address = account if isinstance(account, str) else account.address
        return int(self.token.functions.balanceOf(address).call())


@dataclass
class DevChain(OnChain):
    """The chain, the token, the facilitator's gas account and the funded accounts."""

    w3: Web3
    token: Any
    facilitator_key: LocalAccount
    accounts: list[LocalAccount]

    def mint(self, address: str, amount: int) -> None:
        """Give ``address`` ``amount`` token units."""
        self.token.functions.mint(address, amount).transact({"from": self.w3.eth.accounts[0]})


def deployed(gas: LocalAccount) -> tuple[Web3, Any]:
    """A fresh in-process chain with the token deployed on it, and ``gas`` given 10 ether to
    settle with; the chain's first account (the deployer) may mint."""
    w3 = Web3(EthereumTesterProvider())
    deployer = w3.eth.accounts[0]
    compiled = compiled_token()
    contract = w3.eth.contract(abi=compiled["abi"], bytecode=compiled["bytecode"])
    receipt = w3.eth.wait_for_transaction_receipt(
        contract.constructor(TOKEN_NAME, TOKEN_VERSION).transact({"from": deployer})
    )
    w3.eth.send_transaction({"from": deployer, "to": gas.address, "value": w3.to_wei(10, "ether")})
    return w3, w3.eth.contract(address=receipt["contractAddress"], abi=compiled["abi"])


def new_dev_chain(funded: int = 3, funding: int = FUNDING) -> DevChain:
    """Deploy the token on a fresh chain, give the facilitator gas and ``funded`` accounts tokens."""
    facilitator_key = Account.create()
    w3, token = deployed(facilitator_key)
    chain = DevChain(w3, token, facilitator_key, [Account.create() for _ in range(funded)])
    for account in chain.accounts:
        chain.mint(account.address, funding)
    return chain
