"""Regenerate the benign tool lists in ``tests/data/hygiene/benign/`` from real MCP servers.

Each server is started over stdio and listed with the ``mcp`` SDK client (``tools/list``, every
page); its tools are saved exactly as listed, with the wire (camelCase) field names, beside the
package, the installed version and the client that listed them. The lists are the benign corpus
of the tool-description hygiene scanner (:mod:`app.suite.hygiene`): none of their tools may
raise a finding.

Install the servers outside the repository (nothing of them is committed): the npm ones into
one folder, each PyPI one into a virtualenv of its own (their ``mcp`` pins differ)::

    mkdir -p /tmp/hygiene-corpus/npm && cd /tmp/hygiene-corpus/npm && npm init -y
    PUPPETEER_SKIP_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install \\
        @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem \\
        @modelcontextprotocol/server-memory @modelcontextprotocol/server-sequential-thinking \\
        @modelcontextprotocol/server-github @modelcontextprotocol/server-gitlab \\
        @modelcontextprotocol/server-slack @modelcontextprotocol/server-google-maps \\
        @modelcontextprotocol/server-brave-search @modelcontextprotocol/server-postgres \\
        @modelcontextprotocol/server-redis @modelcontextprotocol/server-puppeteer \\
        @modelcontextprotocol/server-aws-kb-retrieval @modelcontextprotocol/server-everart \\
        @playwright/mcp @notionhq/notion-mcp-server @upstash/context7-mcp firecrawl-mcp \\
        mcp-server-kubernetes
    for p in mcp-server-time mcp-server-fetch mcp-server-git mcp-server-sqlite \\
             duckduckgo-mcp-server arxiv-mcp-server; do
        python3 -m venv /tmp/hygiene-corpus/pypi/$p && /tmp/hygiene-corpus/pypi/$p/bin/pip install $p
    done
    /tmp/hygiene-corpus/pypi/mcp-server-sqlite/bin/pip install 'mcp<2'  # it predates mcp 2

The Redis server needs ``redis-server`` on the PATH (it is started on loopback inside the
namespace for the listing).

Then list them from the repository root, as root, in a fresh network namespace that has only
loopback, so no server can send anything anywhere (``--unshare`` re-executes this script
under ``unshare --net`` after bringing ``lo`` up; without it the script refuses to run unless
loopback is the only interface)::

    .venv/bin/python scripts/hygiene_corpus.py --unshare \\
        --npm-root /tmp/hygiene-corpus/npm --pypi-root /tmp/hygiene-corpus/pypi

Servers that need credentials get fake ones; servers that would connect somewhere are pointed
at a closed port on loopback. ``--only NAME`` lists one server.
"""

from __future__ import annotations

import argparse
import json
import shlex
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "hygiene" / "benign"
CLOSED = "127.0.0.1:9"  # the discard port on loopback: nothing listens there
FAKE = "hygiene-corpus-fake-credential"
LIST_TIMEOUT_S = 60.0
MAX_PAGES = 50


@dataclass(frozen=True)
class Server:
    """One server of the corpus: where it comes from and how to start it."""

    name: str
    registry: Literal["npm", "pypi"]
    package: str
    entry: str  # npm: the bin name; pypi: the console script
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


SERVERS: tuple[Server, ...] = (
    Server("server-everything", "npm", "@modelcontextprotocol/server-everything", "mcp-server-everything"),
    Server(
        "server-filesystem", "npm", "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem", ("{sandbox}",)
    ),
    Server(
        "server-memory",
        "npm",
        "@modelcontextprotocol/server-memory",
        "mcp-server-memory",
        env={"MEMORY_FILE_PATH": "{sandbox}/memory.jsonl"},
    ),
    Server(
        "server-sequential-thinking",
        "npm",
        "@modelcontextprotocol/server-sequential-thinking",
        "mcp-server-sequential-thinking",
    ),
    Server(
        "server-github",
        "npm",
        "@modelcontextprotocol/server-github",
        "mcp-server-github",
        env={"GITHUB_PERSONAL_ACCESS_TOKEN": FAKE},
    ),
    Server(
        "server-gitlab",
        "npm",
        "@modelcontextprotocol/server-gitlab",
        "mcp-server-gitlab",
        env={"GITLAB_PERSONAL_ACCESS_TOKEN": FAKE, "GITLAB_API_URL": f"http://{CLOSED}/api/v4"},
    ),
    Server(
        "server-slack",
        "npm",
        "@modelcontextprotocol/server-slack",
        "mcp-server-slack",
        env={"SLACK_BOT_TOKEN": f"xoxb-{FAKE}", "SLACK_TEAM_ID": "T00000000"},
    ),
    Server(
        "server-google-maps",
        "npm",
        "@modelcontextprotocol/server-google-maps",
        "mcp-server-google-maps",
        env={"GOOGLE_MAPS_API_KEY": FAKE},
    ),
    Server(
        "server-brave-search",
        "npm",
        "@modelcontextprotocol/server-brave-search",
        "mcp-server-brave-search",
        env={"BRAVE_API_KEY": FAKE},
    ),
    Server(
        "server-postgres",
        "npm",
        "@modelcontextprotocol/server-postgres",
        "mcp-server-postgres",
        (f"postgresql://{CLOSED}/corpus",),
    ),
    Server("server-redis", "npm", "@modelcontextprotocol/server-redis", "mcp-server-redis", ("redis://{redis}",)),
    Server("server-puppeteer", "npm", "@modelcontextprotocol/server-puppeteer", "mcp-server-puppeteer"),
    Server("playwright-mcp", "npm", "@playwright/mcp", "playwright-mcp", ("--headless", "--isolated")),
    Server(
        "server-aws-kb-retrieval",
        "npm",
        "@modelcontextprotocol/server-aws-kb-retrieval",
        "mcp-server-aws-kb-retrieval",
        env={"AWS_ACCESS_KEY_ID": FAKE, "AWS_SECRET_ACCESS_KEY": FAKE, "AWS_REGION": "us-east-1"},
    ),
    Server(
        "server-everart",
        "npm",
        "@modelcontextprotocol/server-everart",
        "mcp-server-everart",
        env={"EVERART_API_KEY": FAKE},
    ),
    Server(
        "notion-mcp-server",
        "npm",
        "@notionhq/notion-mcp-server",
        "notion-mcp-server",
        env={"NOTION_TOKEN": FAKE},
    ),
    Server("context7-mcp", "npm", "@upstash/context7-mcp", "context7-mcp"),
    Server(
        "firecrawl-mcp",
        "npm",
        "firecrawl-mcp",
        "firecrawl-mcp",
        env={"FIRECRAWL_API_KEY": f"fc-{FAKE}", "FIRECRAWL_API_URL": f"http://{CLOSED}"},
    ),
    Server(
        "mcp-server-kubernetes",
        "npm",
        "mcp-server-kubernetes",
        "mcp-server-kubernetes",
        env={"KUBECONFIG": "{sandbox}/kubeconfig"},
    ),
    Server("mcp-server-time", "pypi", "mcp-server-time", "mcp-server-time", ("--local-timezone", "UTC")),
    Server("mcp-server-fetch", "pypi", "mcp-server-fetch", "mcp-server-fetch"),
    Server("mcp-server-git", "pypi", "mcp-server-git", "mcp-server-git", ("--repository", "{sandbox}/repo")),
    Server("mcp-server-sqlite", "pypi", "mcp-server-sqlite", "mcp-server-sqlite", ("--db-path", "{sandbox}/db.sqlite")),
    Server("duckduckgo-mcp-server", "pypi", "duckduckgo-mcp-server", "duckduckgo-mcp-server"),
    Server(
        "arxiv-mcp-server",
        "pypi",
        "arxiv-mcp-server",
        "arxiv-mcp-server",
        ("--storage-path", "{sandbox}/arxiv"),
    ),
)


def only_loopback() -> bool:
    """True when this process's network namespace has no interface but ``lo``."""
    return [name for _, name in socket.if_nameindex()] == ["lo"]


def npm_command(root: Path, server: Server) -> tuple[list[str], str]:
    """``node <bin script>`` and the installed version of an npm package under ``root``."""
    package_dir = root / "node_modules" / server.package
    manifest = json.loads((package_dir / "package.json").read_text())
    bins = manifest["bin"]
    script = bins if isinstance(bins, str) else bins[server.entry]
    return ["node", str(package_dir / script)], str(manifest["version"])


def pypi_command(root: Path, server: Server) -> tuple[list[str], str]:
    """The console script and the installed version of a PyPI package in its venv under ``root``."""
    venv = root / server.package
    probe = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"
    found = subprocess.run(
        [str(venv / "bin" / "python"), "-c", probe, server.package], capture_output=True, text=True, check=True
    )
    return [str(venv / "bin" / server.entry)], found.stdout.strip()


async def list_tools(command: list[str], env: dict[str, str], errlog: TextIO) -> list[dict[str, Any]]:
    """Every tool the server lists, page by page, serialised as on the wire."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    tools: list[dict[str, Any]] = []
    with anyio.fail_after(LIST_TIMEOUT_S):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy", cache=None) as client:
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools.extend(tool.model_dump(mode="json", by_alias=True, exclude_unset=True) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
    return tools


KUBECONFIG = f"""apiVersion: v1
kind: Config
clusters: [{{name: corpus, cluster: {{server: "https://{CLOSED}"}}}}]
users: [{{name: corpus, user: {{token: {FAKE}}}}}]
contexts: [{{name: corpus, context: {{cluster: corpus, user: corpus}}}}]
current-context: corpus
"""


def prepare_sandbox(sandbox: Path) -> None:
    """A scratch folder for servers that need a directory, a git repository or a kubeconfig."""
    (sandbox / "repo").mkdir(exist_ok=True)
    subprocess.run(["git", "init", "-q", str(sandbox / "repo")], check=True)
    (sandbox / "kubeconfig").write_text(KUBECONFIG)


def free_port() -> int:
    """A TCP port nothing listens on, on loopback."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each ``{name}`` placeholder replaced."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def record(server: Server, version: str, tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The saved form of one listing."""
    return {
        "source": {"registry": server.registry, "package": server.package, "version": version},
        "listed_with": f"mcp {installed_version('mcp')} stdio client",
        "tools": tools,
    }


def wanted(server: Server, args: argparse.Namespace) -> bool:
    """Whether ``--only`` selects ``server`` (everything when it is not given)."""
    return not args.only or server.name in args.only


def list_one(server: Server, args: argparse.Namespace, values: dict[str, str], errlog: TextIO) -> int:
    """List one server and save its tools; 1 when it could not be listed, else 0."""
    if server.registry == "npm":
        command, version = npm_command(args.npm_root, server)
    else:
        command, version = pypi_command(args.pypi_root, server)
    command += [fill(a, values) for a in server.args]
    env = {k: fill(v, values) for k, v in server.env.items()}
    try:
        tools = anyio.run(list_tools, command, env, errlog)
    except Exception as exc:  # one server failing must not stop the others
        print(f"{server.name}: FAILED {exc!r}", file=sys.stderr)
        return 1
    path = OUT / f"{server.name}.json"
    path.write_text(json.dumps(record(server, version, tools), indent=2, ensure_ascii=False) + "\n")
    print(f"{server.name} {version}: {len(tools)} tools -> {path.relative_to(OUT.parents[3])}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--npm-root", type=Path, default=Path("/tmp/hygiene-corpus/npm"))
    parser.add_argument("--pypi-root", type=Path, default=Path("/tmp/hygiene-corpus/pypi"))
    parser.add_argument("--only", action="append", default=[], help="list only this server (repeatable)")
    parser.add_argument("--unshare", action="store_true", help="re-run inside a new loopback-only namespace")
    args = parser.parse_args()
    if args.unshare:
        rest = [a for a in sys.argv[1:] if a != "--unshare"]
        inner = "ip link set lo up && exec " + shlex.join([sys.executable, __file__, *rest])
        return subprocess.call(["unshare", "--net", "--", "sh", "-c", inner])
    if not only_loopback():
        print("refusing to start servers: this namespace has interfaces besides lo (use --unshare)", file=sys.stderr)
        return 2
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hygiene-corpus-") as scratch:
        sandbox = Path(scratch)
        prepare_sandbox(sandbox)
        port = free_port()
        redis = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            cwd=scratch,
        )
        values = {"sandbox": scratch, "redis": f"127.0.0.1:{port}"}
        try:
            with (sandbox / "servers.log").open("w") as errlog:
                failures = sum(list_one(server, args, values, errlog) for server in SERVERS if wanted(server, args))
        finally:
            redis.terminate()
            redis.wait()
        if failures:
            print((sandbox / "servers.log").read_text()[-4000:], file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
