"""Read a tcpdump capture of the client's side of the link and count what each run did.

A run is the window a client reported (:mod:`bench.link_client`): from ``start`` to ``end``.
Per run: TCP connections the client opened (SYN without ACK), HTTP requests it sent (a
payload starting with a method; invisible under TLS), and the span from the first SYN to the
last server packet carrying payload that arrived by ``result`` (when the verdict was final),
in milliseconds and in round trips of the link.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_METHODS = (b"GET ", b"POST ", b"DELETE ", b"PUT ", b"HEAD ", b"OPTIONS ")


@dataclass(frozen=True)
class Packet:
    """One TCP segment: when, which way, flags, payload length and its first bytes."""

    at: float
    from_client: bool
    syn_only: bool
    length: int
    head: bytes


@dataclass(frozen=True)
class RunFigures:
    """What one run did on the wire."""

    connections: int
    requests: int
    request_lines: tuple[str, ...]
    span_ms: float


def read(path: Path, client: str) -> list[Packet]:
    """The TCP segments of a pcap file (raw IP or Linux cooked), seen from ``client``'s address."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    strip = {113: 16, 276: 20}.get(linktype, 0)
    address = bytes(int(part) for part in client.split("."))
    packets, offset = [], 24
    while offset + 16 <= len(data):
        seconds, fraction, included, _original = struct.unpack(endian + "IIII", data[offset : offset + 16])
        raw = data[offset + 16 + strip : offset + 16 + included]
        offset += 16 + included
        if len(raw) < 20 or raw[0] >> 4 != 4 or raw[9] != 6:
            continue
        ihl = (raw[0] & 15) * 4
        total = struct.unpack("!H", raw[2:4])[0]
        tcp = raw[ihl:]
        data_offset = (tcp[12] >> 4) * 4
        flags = tcp[13]
        length = total - ihl - data_offset
        packets.append(
            Packet(
                at=seconds + fraction / (1e9 if nano else 1e6),
                from_client=raw[12:16] == address,
                syn_only=bool(flags & 0x02) and not flags & 0x10,
                length=max(0, length),
                head=bytes(tcp[data_offset : data_offset + 80]),
            )
        )
    return packets


def figures(packets: list[Packet], start: float, result: float, end: float) -> RunFigures:
    """The figures of the run between ``start`` and ``end`` (``result``: when the verdict was final)."""
    window = [p for p in packets if start - 0.001 <= p.at <= end + 0.05]
    syns = [p for p in window if p.from_client and p.syn_only]
    requests = [p for p in window if p.from_client and p.length and p.head.startswith(_METHODS)]
    answered = [p for p in window if not p.from_client and p.length and p.at <= result + 0.0005]
    if not syns or not answered:
        return RunFigures(len(syns), len(requests), (), float("nan"))
    lines = tuple(p.head.split(b"\r\n", 1)[0].decode("latin-1")[:60] for p in requests if p.at <= result)
    span = (answered[-1].at - syns[0].at) * 1000
    return RunFigures(len(syns), len(requests), lines, span)
