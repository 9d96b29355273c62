"""An offline payment chain for development: an in-process EVM (eth-tester on py-evm), a
USDC-like EIP-3009 token, funded test accounts, and an x402 facilitator (the ``x402``
package's own verifier and settler) over HTTP on loopback.

With it a person can pay for a check, buy a monitor and approve a baseline on one machine
with the official x402 client and no money (``mcp-sonde dev-chain``, :mod:`app.cli.devchain`).
Its packages are the ``dev-chain`` extra; nothing else in the service imports this package.
"""

from app.devchain.chain import TEST_CHAIN_IDS, DevChain, is_test_network, new_dev_chain
from app.devchain.facilitator import facilitator_app, new_facilitator

__all__ = ["TEST_CHAIN_IDS", "DevChain", "facilitator_app", "is_test_network", "new_dev_chain", "new_facilitator"]
