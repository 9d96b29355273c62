"""``mcp-sonde dev-chain [--port P] [--accounts N] [--env-file FILE]``: an offline payment chain
for trying paid checks, monitors and baseline approvals on one machine (:mod:`app.devchain`).

It starts an in-process EVM with a USDC-like token, funds ``--accounts`` new test accounts,
serves an x402 facilitator on ``127.0.0.1:P`` (default 8402), and prints the settings that
point ``mcp-sonde serve`` at it, with the funded accounts' private keys for the x402 client.
``--env-file`` writes the settings as shell ``NAME=value`` lines, with ``DEV_CHAIN_NETWORK``,
``DEV_CHAIN_ASSET`` and the first account's key as ``DEV_CHAIN_PAYER_KEY``. Everything lives in this
process: stopping it (Ctrl-C, SIGTERM) ends the chain and every balance on it.

It refuses to start (exit 20) when the environment's settings accept payments on any network
that is not a known test network (:data:`app.devchain.TEST_CHAIN_IDS`), since such a network
may move real value: a ``PAY_TO`` with the default networks (Base and Polygon), or
``MCP_SONDE_PAYMENT_NETWORKS`` naming any other chain. Exit 21:
the port cannot be bound; 22: the ``dev-chain`` extra is not installed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli.codes import EXIT_USAGE, SERVE_EXIT_PORT, SERVE_EXIT_SETTINGS, SERVE_EXIT_STARTUP

HELP = (
    f"exit codes: 0 stopped (SIGTERM or Ctrl-C); {EXIT_USAGE} usage error; {SERVE_EXIT_SETTINGS} the settings "
    f"accept payments on a network that is not a test network; {SERVE_EXIT_PORT} the port cannot be bound; "
    f"{SERVE_EXIT_STARTUP} the dev-chain "
    "extra is not installed (pip install 'mcp-sonde[dev-chain]')"
)


def real_networks_configured() -> list[str] | None:
    """The networks other than test networks the environment's settings would take payments on
    ([] for none), or None when the settings are invalid (the error is on stderr)."""
    from app.cli.check import settings_of
    from app.devchain.chain import is_test_network

    settings = settings_of({})
    if settings is None:
        return None
    if settings.pay_to is None and "payment_networks" not in settings.model_fields_set:
        return []  # (no payTo: this environment takes no payments at all)
    return [option.network for option in settings.payment_networks if not is_test_network(option.network)]


def settings_lines(chain: Any, pay_to: str, url: str) -> list[str]:
    """``NAME=value`` lines pointing ``mcp-sonde serve`` at the chain (shell syntax)."""
    networks = json.dumps([{"network": chain.network, "asset": chain.token.address}], separators=(",", ":"))
    # (single-quoted: the JSON's quotes survive a shell's `. FILE` and Compose's env_file alike)
    return [
        f"MCP_SONDE_PAY_TO={pay_to}",
        f"MCP_SONDE_PAYMENT_NETWORKS='{networks}'",
        f"MCP_SONDE_FACILITATOR_URL={url}",
    ]


def hex_key(account: Any) -> str:
    """An account's private key as 0x-prefixed hex (as wallets and ``Account.from_key`` take it)."""
    return "0x" + str(account.key.hex()).removeprefix("0x")


def _run(args: argparse.Namespace) -> int:
    refused = real_networks_configured()
    if refused is None:
        return SERVE_EXIT_SETTINGS
    if refused:
        sys.stderr.write(
            f"mcp-sonde dev-chain: the settings accept payments on {', '.join(refused)}, not a known test network "
            "(it may move real value); unset MCP_SONDE_PAY_TO and MCP_SONDE_PAYMENT_NETWORKS "
            "(this chain is for development only)\n"
        )
        return SERVE_EXIT_SETTINGS
    from app.cli.serve import bind, run_server

    try:
        sock = bind("127.0.0.1", args.port)
    except OSError as exc:
        sys.stderr.write(f"mcp-sonde dev-chain: cannot listen on 127.0.0.1 port {args.port}: {exc.strerror}\n")
        return SERVE_EXIT_PORT
    try:
        import uvicorn
        from eth_account import Account

        from app.devchain import facilitator_app, new_dev_chain
    except ImportError as exc:
        sock.close()
        sys.stderr.write(f"mcp-sonde dev-chain: {exc.name} is missing: pip install 'mcp-sonde[dev-chain]'\n")
        return SERVE_EXIT_STARTUP
    chain = new_dev_chain(args.accounts)
    pay_to = Account.create().address
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    lines = settings_lines(chain, pay_to, url)
    keys = [
        f"DEV_CHAIN_NETWORK={chain.network}",
        f"DEV_CHAIN_ASSET={chain.token.address}",
        f"DEV_CHAIN_PAYER_KEY={hex_key(chain.accounts[0])}",
    ]
    if args.env_file is not None:
        args.env_file.write_text("\n".join(lines + keys) + "\n", encoding="utf-8")
    out = sys.stdout
    out.write(f"dev-chain: {chain.network}, token {chain.token.address}, x402 facilitator at {url}\n")
    out.write("settings for mcp-sonde serve (an offline chain: its tokens are worth nothing):\n")
    out.writelines(f"  {line}\n" for line in lines)
    out.write(f"funded accounts ({chain.balance(chain.accounts[0]) / 10**6:g} test USDC each), address and key:\n")
    out.writelines(f"  {one.address} {hex_key(one)}\n" for one in chain.accounts)
    out.write(f"reads: GET {url}/accounts, JSON-RPC at POST {url}/rpc; Ctrl-C ends the chain\n")
    out.flush()
    config = uvicorn.Config(facilitator_app(chain), log_level="warning", lifespan="off")
    try:
        return run_server(uvicorn.Server(config), [sock], [])
    finally:
        sock.close()


def add_parser(commands: Any) -> None:
    """Add ``dev-chain`` to the subcommands."""
    parser = commands.add_parser(
        "dev-chain",
        help="run an offline payment chain and x402 facilitator for development",
        description="Run an offline EVM with a USDC-like token, funded test accounts and an x402 facilitator on "
        "loopback, and print the settings that make mcp-sonde serve take payments on it.",
        epilog=HELP,
    )
    parser.add_argument("--port", type=int, default=8402, help="the facilitator's port on 127.0.0.1 (default 8402)")
    parser.add_argument("--accounts", type=int, default=3, choices=range(1, 101), metavar="N",
                        help="funded test accounts (default 3)")  # fmt: skip
    parser.add_argument("--env-file", type=Path, help="also write the settings and a payer key to FILE")
    parser.set_defaults(handler=_run)
