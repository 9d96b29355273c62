"""Read a tcpdump capture of the client's side of the link and count what each run did.

A run is the window a client reported (:mod:`bench.link_client`): from ``start`` to ``end``,
with ``result`` when the verdict was final. Per run: TCP connections the client opened (SYN
without ACK), HTTP requests it sent (a payload starting with a method; invisible under TLS),
the round trips it waited for on the way to the verdict, and the elapsed span from the first
SYN to the last server packet carrying payload that arrived by ``result``.

Round trips are counted from the packets and their timing, not from elapsed time, so CPU
time spent between packets (the client's or the server's) never reads as a round trip. A
client *send* is a segment it sent with a SYN or a payload (not a bare ACK, FIN or RST); a
server *answer* is a segment with a SYN or a payload. An answer ended a wait across the link
when it arrived at least :data:`WAIT_S` (half the 50 ms round trip) after the client's last
send on the same connection: nothing can come back sooner than one round trip after what it
answers, so an answer sooner than that answers something sent before that last send. Each
send stands behind a number of waits, and an answer that ended a wait stands behind one more
than the send it answers. The run's round trips are the most waits behind any answer by
``result``: the longest chain of waits to the verdict (the TCP connect, the TLS handshake,
each request that waited for its answer), not the number of waits, so a connection dialled
ahead in parallel adds none of its own.

What a send stands behind: a connection's handshake (its SYN, a ClientHello, the client's
ChangeCipherSpec and Finished) waits only for that connection's earlier answers; any other send
(a request) is taken to depend on every request's answer that had arrived when it left (the
capture cannot tell which one it used), and a SYN on the answers to requests alone. Answers to
a handshake (a SYN-ACK, the server's handshake flight, a TLS 1.3 session ticket) concern their
own connection only, so a handshake that finishes while a request is being written does not
make the request wait for it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

_METHODS = (b"GET ", b"POST ", b"DELETE ", b"PUT ", b"HEAD ", b"OPTIONS ")
_SYN, _ACK = 0x02, 0x10
WAIT_S = 0.025  # half the link's round trip: an answer later than this after the last send had to cross it
SLACK_S = 0.0005  # the client's clock read after the kernel stamped the last answer


@dataclass(frozen=True)
class Packet:
    """One TCP segment: when, which way, its connection (the client's port), flags, payload length, first bytes."""

    at: float
    from_client: bool
    port: int
    syn: bool
    syn_only: bool
    length: int
    head: bytes

    @property
    def counts(self) -> bool:
        """Whether the segment is a send or an answer (a SYN or a payload), not a bare ACK, FIN or RST."""
        return self.syn or self.length > 0


@dataclass(frozen=True)
class RunFigures:
    """What one run did on the wire."""

    connections: int
    requests: int
    request_lines: tuple[str, ...]
    round_trips: int
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
        if len(tcp) < 14:
            continue
        data_offset = (tcp[12] >> 4) * 4
        flags = tcp[13]
        length = total - ihl - data_offset
        from_client = raw[12:16] == address
        source, destination = struct.unpack("!HH", tcp[:4])
        packets.append(
            Packet(
                at=seconds + fraction / (1e9 if nano else 1e6),
                from_client=from_client,
                port=source if from_client else destination,
                syn=bool(flags & _SYN),
                syn_only=bool(flags & _SYN) and not flags & _ACK,
                length=max(0, length),
                head=bytes(tcp[data_offset : data_offset + 80]),
            )
        )
    packets.sort(key=lambda packet: packet.at)
    return packets


def _handshake(packet: Packet) -> bool:
    """Whether a client send only sets up its connection: a SYN, a TLS ClientHello, or ChangeCipherSpec
    and Finished with nothing after them (records in the segment's first bytes)."""
    if packet.syn:
        return True
    head = packet.head
    if head[:1] == b"\x16" and head[1:2] == b"\x03":
        return True  # a ClientHello (TLS 1.2's client key exchange, too)
    if head[:1] != b"\x14" or head[1:2] != b"\x03" or len(head) < 11:
        return False
    change = 5 + int.from_bytes(head[3:5], "big")
    finished = 5 + int.from_bytes(head[change + 3 : change + 5], "big") if len(head) >= change + 5 else -1
    return packet.length == change + finished  # a request sent in the same segment makes it a request


@dataclass
class _Connection:
    """What the run did on one connection: its last send (when, waits behind it, whether a handshake)
    and the most waits behind its answers."""

    sent_at: float
    sent_behind: int
    sent_handshake: bool
    behind: int


def round_trips(packets: list[Packet]) -> int:
    """The longest chain of waits across the link in ``packets`` (one run's, in time order, up to its verdict)."""
    connections: dict[int, _Connection] = {}  # by the client's port
    answered = 0  # the most waits behind any request's answer so far
    for packet in packets:
        if not packet.counts:
            continue
        known = connections.get(packet.port)
        if packet.from_client:
            handshake = _handshake(packet)
            own = known.behind if known else 0
            behind = answered if packet.syn_only else own if handshake else max(answered, own)
            connections[packet.port] = _Connection(packet.at, behind, handshake, max(own, behind))
        elif known is not None and packet.at - known.sent_at >= WAIT_S:
            known.behind = max(known.behind, known.sent_behind + 1)
            if not known.sent_handshake:
                answered = max(answered, known.sent_behind + 1)
    return answered


def figures(packets: list[Packet], start: float, result: float, end: float) -> RunFigures:
    """The figures of the run between ``start`` and ``end`` (``result``: when the verdict was final)."""
    window = [p for p in packets if start - 0.001 <= p.at <= end + 0.05]
    syns = [p for p in window if p.from_client and p.syn_only]
    requests = [p for p in window if p.from_client and p.length and p.head.startswith(_METHODS)]
    to_verdict = [p for p in window if p.at <= result + SLACK_S]
    answered = [p for p in to_verdict if not p.from_client and p.length]
    if not syns or not answered:
        return RunFigures(len(syns), len(requests), (), 0, float("nan"))
    lines = tuple(p.head.split(b"\r\n", 1)[0].decode("latin-1")[:60] for p in requests if p.at <= result)
    span = (answered[-1].at - syns[0].at) * 1000
    return RunFigures(len(syns), len(requests), lines, round_trips(to_verdict), span)
