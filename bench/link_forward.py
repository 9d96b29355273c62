"""The link of the link benchmark (:mod:`bench.link`): forwards IP packets between two network
namespaces through tun devices, holding each packet DELAY ms each way.

The same forwarder as ``tundelay.py`` of the shared ``linkdelay`` tools (this kernel has no
``netem``), with the namespaces named by the caller rather than fixed, so that each run of the
benchmark has a link of its own: run in the server namespace, it opens its tun device there,
enters the client namespace (``setns``) and opens the other one, then forwards until killed.
Prints ``ready`` once both are open.

Usage: ``ip netns exec SERVER_NS python -m bench.link_forward DELAY_MS CLIENT_NS`` (devices ``ta`` and ``tb``).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import heapq
import os
import select
import struct
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN, IFF_NO_PI = 0x0001, 0x1000
CLONE_NEWNET = 0x40000000


def open_tun(name: str) -> int:
    """Open the existing tun device ``name`` of the current namespace, non-blocking."""
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    return fd


def enter(namespace: str) -> None:
    """Move this process into the named network namespace."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    handle = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
    try:
        if libc.setns(handle, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {namespace}")
    finally:
        os.close(handle)


def forward(delay: float, server_tun: int, client_tun: int) -> None:
    """Forward packets between the two devices for ever, each held ``delay`` seconds."""
    peer = {server_tun: client_tun, client_tun: server_tun}
    held: list[tuple[float, int, int, bytes]] = []  # (due, sequence, device out, packet)
    sequence = 0
    while True:
        timeout = max(0.0, held[0][0] - time.monotonic()) if held else None
        readable, _, _ = select.select([server_tun, client_tun], [], [], timeout)
        now = time.monotonic()
        for device in readable:
            while True:
                try:
                    packet = os.read(device, 65536)
                except BlockingIOError:
                    break
                sequence += 1
                heapq.heappush(held, (now + delay, sequence, peer[device], packet))
        now = time.monotonic()
        while held and held[0][0] <= now:
            _, _, out, packet = heapq.heappop(held)
            with contextlib.suppress(OSError):  # a device gone as the run ends
                os.write(out, packet)


def main() -> None:
    """Parse the arguments, open both devices and forward."""
    delay, client_ns = float(sys.argv[1]) / 1000, sys.argv[2]
    server_tun = open_tun("ta")
    enter(client_ns)
    client_tun = open_tun("tb")
    print("ready", flush=True)
    forward(delay, server_tun, client_tun)


if __name__ == "__main__":
    main()
