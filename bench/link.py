"""Benchmark: round trips per probe across a real 50 ms link, beside the floor and the ``mcp`` SDK client.

Sets up two network namespaces of this run's own (named for its pid, so a run never touches
another's link) joined by tun devices and a forwarder that holds every packet 25 ms each way
(:mod:`bench.link_forward`: the link of ``linkdelay`` from the shared tools, whose scripts use
fixed names), runs real MCP servers in the server namespace (the ``mcp`` SDK fixture servers
over http and over https with a trustme certificate, ``@modelcontextprotocol/server-everything``
over Streamable HTTP and HTTP+SSE), and runs each client N times in the client namespace while
tcpdump captures the client's side of the link.

Each run's round trips are counted from the capture (:mod:`bench.pcap`): the waits across the
link on the way to the final verdict, a wait being a server answer (a SYN-ACK or a payload)
that arrived at least half a round trip after the client's last send on its connection, with
answers that no client send separates counted once (the closing DELETE comes after the verdict
and is not counted). CPU time between packets, the client's or the server's, is not a round
trip, so a loaded machine does not add any. The elapsed span from the first SYN to the last
answer by the verdict, in round trips of 50 ms, is printed beside it (``span``): that one does
grow with load. Prints medians, with connections and requests per run (requests are counted on
plain http only: TLS hides them).

The floor: 1 round trip for the TCP connect (+1 for TLS 1.3), and 1 for each request that
must wait for an earlier answer: ``server/discover``, ``initialize`` or the legacy stream's
``endpoint`` event, each ``tools/list`` page, the refusal call.

Needs root (namespaces), ``ip``, ``/dev/net/tun`` and ``tcpdump`` (``apt-get install tcpdump``);
prints why and exits 0 where any is missing; a run that fails says why in one line on stderr
and exits 1. Usage: ``python -m bench.link [N]`` (default 10).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from bench import pcap

ROOT = Path(__file__).resolve().parent.parent
RUN = f"sonde-link-{os.getpid()}"
SERVER_NS, CLIENT_NS = f"{RUN}-a", f"{RUN}-b"  # this run's own: nothing else creates or deletes them
SERVER_IP, CLIENT_IP = "10.231.0.1", "10.231.0.2"
DELAY_MS = 25
RTT_MS = 2 * DELAY_MS
EVERYTHING = (
    ROOT / "tests" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
)


@dataclass(frozen=True)
class Case:
    """One server kind: where it listens, its floor in round trips, and how the SDK client speaks to it."""

    label: str
    url: str
    floor: int
    sdk_sse: bool = False


def cases() -> list[Case]:
    """The server kinds measured (http, then the same servers over TLS)."""
    http, https = f"http://{SERVER_IP}:8001", f"https://{SERVER_IP}:8443"
    found = [
        Case("modern stateless, JSON", f"{http}/stateless-json/mcp", 4),
        Case("modern stateless, SSE", f"{http}/stateless-sse/mcp", 4),
        Case("modern sessions, SSE", f"{http}/stateful-sse/mcp", 4),
        Case("2025-era only, SSE replies", f"{http}/initialize-only/mcp", 5),
        Case("2025-era only, JSON", f"{http}/initialize-only-json/mcp", 5),
        Case("legacy HTTP+SSE", f"{http}/legacy-sse/sse", 6, sdk_sse=True),
        Case("modern stateless, JSON, TLS", f"{https}/stateless-json/mcp", 5),
        Case("2025-era only, SSE, TLS", f"{https}/initialize-only/mcp", 6),
        Case("legacy HTTP+SSE, TLS", f"{https}/legacy-sse/sse", 7, sdk_sse=True),
    ]
    if EVERYTHING.exists() and shutil.which("node"):
        found += [
            Case("server-everything, Streamable HTTP", f"http://{SERVER_IP}:3001/mcp", 5),
            Case("server-everything, HTTP+SSE", f"http://{SERVER_IP}:3002/sse", 6, sdk_sse=True),
        ]
    return found


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tcpdump"):
        if shutil.which(tool) is None:
            return f"needs {tool} (apt-get install {'iproute2' if tool == 'ip' else tool})"
    if not Path("/dev/net/tun").exists():
        return "needs /dev/net/tun"
    return None


def _in(namespace: str, *command: str) -> list[str]:
    return ["ip", "netns", "exec", namespace, *command]


class Failed(Exception):
    """The benchmark cannot go on; the message says why in one line."""


def _ip(*arguments: str) -> None:
    done = subprocess.run(["ip", *arguments], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise Failed(f"ip {' '.join(arguments)}: {why}")


@contextmanager
def link() -> Iterator[None]:
    """This run's two namespaces and the delaying forwarder between them, torn down afterwards.

    Only what this block created is torn down: a namespace of the same name that exists already
    (left by a run that was killed) fails the run rather than being deleted.
    """
    made: list[str] = []
    forwarder: subprocess.Popen[str] | None = None
    try:
        for namespace in (SERVER_NS, CLIENT_NS):
            _ip("netns", "add", namespace)
            made.append(namespace)
        for namespace, device, ours, theirs in (
            (SERVER_NS, "ta", SERVER_IP, CLIENT_IP),
            (CLIENT_NS, "tb", CLIENT_IP, SERVER_IP),
        ):
            _ip("-n", namespace, "link", "set", "lo", "up")
            _ip("-n", namespace, "tuntap", "add", "dev", device, "mode", "tun")
            _ip("-n", namespace, "addr", "add", ours, "peer", theirs, "dev", device)
            _ip("-n", namespace, "link", "set", device, "up")
        command = _in(SERVER_NS, sys.executable, "-m", "bench.link_forward", str(DELAY_MS), CLIENT_NS)
        forwarder = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert forwarder.stdout is not None and forwarder.stderr is not None
        if forwarder.stdout.readline().strip() != "ready":
            why = (forwarder.stderr.read().strip().splitlines() or ["no output"])[-1]
            raise Failed(f"the link's forwarder did not start: {why[:200]}")
        yield
    finally:
        if forwarder is not None:
            forwarder.kill()
            forwarder.wait()
        for namespace in made:
            _stop_left_in(namespace)
            subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)


def _stop_left_in(namespace: str) -> None:
    """Kill what this run started in its own ``namespace`` and is still running there (none, normally)."""
    done = subprocess.run(["ip", "netns", "pids", namespace], capture_output=True, text=True, check=False)
    for pid in done.stdout.split():
        with suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def _wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    probe = "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=0.2).close()"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        done = subprocess.run(_in(SERVER_NS, sys.executable, "-c", probe, SERVER_IP, str(port)), capture_output=True)
        if done.returncode == 0:
            return
        time.sleep(0.2)
    exited = "" if process.poll() is None else f" (the server exited with {process.returncode})"
    raise Failed(f"nothing listens on {SERVER_IP}:{port}{exited}")


@contextmanager
def started(command: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[None]:
    """Run a server in the server namespace until the block ends."""
    process = subprocess.Popen(
        _in(SERVER_NS, *command), cwd=ROOT, env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_listening(port, process)
        yield
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def servers(stack: ExitStack, certs: Path) -> None:
    """Start every server of :func:`cases`."""
    uvicorn = [
        sys.executable,
        "-m",
        "uvicorn",
        "tests.servers.sdk_apps:build_app",
        "--factory",
        "--log-level",
        "warning",
    ]
    stack.enter_context(started([*uvicorn, "--host", SERVER_IP, "--port", "8001"], 8001))
    tls = ["--ssl-certfile", str(certs / "cert.pem"), "--ssl-keyfile", str(certs / "key.pem")]
    stack.enter_context(started([*uvicorn, "--host", SERVER_IP, "--port", "8443", *tls], 8443))
    if EVERYTHING.exists() and shutil.which("node"):
        for mode, port in (("streamableHttp", 3001), ("sse", 3002)):
            stack.enter_context(started(["node", str(EVERYTHING), mode], port, {"PORT": str(port)}))


def certificates(folder: Path) -> Path:
    """A trustme CA and a certificate for the server's address; returns the CA's PEM path."""
    import trustme

    authority = trustme.CA()
    issued = authority.issue_cert(SERVER_IP)
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    issued.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    authority.cert_pem.write_to_path(str(folder / "ca.pem"))
    return folder / "ca.pem"


def measure(case: Case, client: str, n: int, ca: Path, folder: Path) -> tuple[list[pcap.RunFigures], set[str]]:
    """Run one client ``n`` times against ``case`` under a capture; the figures of each run and what it saw."""
    capture = folder / f"{client}-{abs(hash(case.url))}.pcap"
    dump = subprocess.Popen(
        _in(CLIENT_NS, "tcpdump", "-i", "tb", "-s", "200", "-U", "-n", "-w", str(capture), "tcp"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert dump.stderr is not None
    dump.stderr.readline()  # "listening on tb ..."
    command = [sys.executable, "-m", "bench.link_client", client, case.url, str(n), "--ca", str(ca)]
    if case.sdk_sse:
        command.append("--sse")
    env = {**os.environ, "SSL_CERT_FILE": str(ca)}
    done = subprocess.run(_in(CLIENT_NS, *command), cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    time.sleep(0.3)
    dump.send_signal(signal.SIGINT)
    dump.wait(timeout=10)
    if os.environ.get("MCP_SONDE_LINK_KEEP"):
        shutil.copy(capture, Path(os.environ["MCP_SONDE_LINK_KEEP"]) / f"{client}-{case.label.replace(' ', '_')}.pcap")
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise Failed(f"{client} against {case.url} failed: {last[:200]}")
    packets = pcap.read(capture, CLIENT_IP)
    runs, seen = [], set()
    for line in done.stdout.splitlines():
        mark = json.loads(line)
        runs.append(pcap.figures(packets, mark["start"], mark["result"], mark["end"]))
        seen.add(mark["seen"])
    return runs, seen


def _median(runs: list[pcap.RunFigures], field: str) -> float:
    return float(statistics.median(getattr(run, field) for run in runs))


def _measured(n: int) -> list[tuple[Case, list[pcap.RunFigures], list[pcap.RunFigures], set[str]]]:
    rows = []
    with tempfile.TemporaryDirectory() as name, link(), ExitStack() as stack:
        folder = Path(name)
        os.chmod(folder, 0o755)
        ca = certificates(folder)
        servers(stack, folder)
        only = os.environ.get("MCP_SONDE_LINK_ONLY")
        for case in cases():
            if only and only not in case.label:
                continue
            ours, ours_seen = measure(case, "sonde", n, ca, folder)
            theirs, _ = measure(case, "sdk", n, ca, folder)
            rows.append((case, ours, theirs, ours_seen))
    return rows


def _stop(signum: int, _frame: object) -> None:
    raise Failed(f"stopped by signal {signum}")  # so the link is torn down on the way out


def main() -> None:
    """Print the table."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 10
    reason = _missing()
    if reason is not None:
        print(f"link benchmark skipped: {reason}")
        return
    signal.signal(signal.SIGTERM, _stop)
    try:
        rows = _measured(n)
    except (Failed, OSError, subprocess.SubprocessError) as exc:
        print(f"link benchmark failed: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", file=sys.stderr)
        sys.exit(1)
    print(f"link benchmark: {RTT_MS} ms round trip, N={n} runs per client, medians (round trips to the final verdict,")
    print("counted from the capture; span: first SYN to the last answer before the verdict, in round trips)")
    header = f"{'server':<36}{'floor':>6}{'goal':>6}{'mcp-sonde':>11}{'span':>7}{'conns':>7}{'reqs':>6}{'ratio':>7}"
    print(header + f"{'mcp SDK':>9}{'span':>7}")
    for case, ours, theirs, seen in rows:
        rtt, sdk = _median(ours, "round_trips"), _median(theirs, "round_trips")
        span, sdk_span = _median(ours, "span_ms") / RTT_MS, _median(theirs, "span_ms") / RTT_MS
        line = f"{case.label:<36}{case.floor:>6}{case.floor * 1.1:>6.1f}{rtt:>11.1f}{span:>7.2f}"
        line += f"{_median(ours, 'connections'):>7.0f}{_median(ours, 'requests'):>6.0f}{rtt / case.floor:>7.2f}"
        line += f"{sdk:>9.1f}{sdk_span:>7.2f}"
        print(line + ("" if rtt <= case.floor * 1.1 else "   over goal"))
        if "-v" in sys.argv:
            print(f"    saw {sorted(seen)}; requests {ours[0].request_lines}")
            counts = [run.round_trips for run in ours], [run.round_trips for run in theirs]
            print(f"    round trips per run: mcp-sonde {counts[0]}, SDK {counts[1]}")


if __name__ == "__main__":
    main()
