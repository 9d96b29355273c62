"""A DNS server on loopback (UDP and TCP) whose TXT records a test sets, built on dnspython's
message codec: a real nameserver for the resolver to ask, not a stand-in for the resolver.

``records`` maps a name to its TXT records (each a list of character-strings); a name not in
it is NXDOMAIN, one in ``silent`` is never answered, one in ``failing`` answers SERVFAIL, and
``truncate`` answers every UDP query truncated (TC set, RFC 1035 §4.2.1) so the client asks
again over TCP. ``asked`` counts the queries by transport.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest


@dataclass
class DnsServer:
    records: dict[str, list[list[str]]] = field(default_factory=dict)
    silent: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    truncate: bool = False
    asked: Counter[str] = field(default_factory=Counter)
    port: int = 0

    def __post_init__(self) -> None:
        self._udp, self._tcp = self._bind()
        self.port = self._udp.getsockname()[1]
        self._tcp.listen(16)
        self._stopped = threading.Event()

    @staticmethod
    def _bind(attempts: int = 50) -> tuple[socket.socket, socket.socket]:
        """A UDP and a TCP socket on the same free loopback port. The port the kernel gives the
        UDP socket may be taken for TCP (by another test's connection), so a clash draws again."""
        for _ in range(attempts):
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 0))
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                tcp.bind(("127.0.0.1", udp.getsockname()[1]))
            except OSError:
                udp.close()
                tcp.close()
                continue
            return udp, tcp
        raise OSError("no loopback port was free for both UDP and TCP")

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def publish(self, name: str, *texts: str | list[str]) -> None:
        self.records[name.rstrip(".").lower()] = [[text] if isinstance(text, str) else text for text in texts]

    def _answer(self, wire: bytes, over_udp: bool) -> bytes | None:
        try:
            query = dns.message.from_wire(wire)
        except dns.exception.DNSException:
            return None  # (not a query: the empty read of a socket shut down, say)
        question = query.question[0]
        name = question.name.to_text(omit_final_dot=True).lower()
        self.asked["udp" if over_udp else "tcp"] += 1
        if name in self.silent:
            return None
        response = dns.message.make_response(query)
        if name in self.failing:
            response.set_rcode(dns.rcode.SERVFAIL)
        elif name not in self.records:
            response.set_rcode(dns.rcode.NXDOMAIN)
        elif over_udp and self.truncate:
            response.flags |= dns.flags.TC
        elif question.rdtype == dns.rdatatype.TXT:
            texts = [" ".join(f'"{part}"' for part in record) for record in self.records[name]]
            if texts:
                rrset = dns.rrset.from_text(question.name, 60, dns.rdataclass.IN, dns.rdatatype.TXT, *texts)
                response.answer.append(rrset)
        return bytes(response.to_wire())

    def _serve_udp(self) -> None:
        while not self._stopped.is_set():
            try:
                wire, peer = self._udp.recvfrom(4096)
            except OSError:
                return
            reply = self._answer(wire, over_udp=True)
            if reply is not None:
                self._udp.sendto(reply, peer)

    def _serve_tcp(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._tcp.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    (length,) = struct.unpack("!H", conn.recv(2, socket.MSG_WAITALL))
                    reply = self._answer(conn.recv(length, socket.MSG_WAITALL), over_udp=False)
                    if reply is not None:
                        conn.sendall(struct.pack("!H", len(reply)) + reply)
                except (OSError, struct.error):
                    continue

    def start(self) -> DnsServer:
        for target in (self._serve_udp, self._serve_tcp):
            threading.Thread(target=target, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        for sock in (self._udp, self._tcp):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


@pytest.fixture
def nameserver_on_loopback() -> Iterator[DnsServer]:
    """A started :class:`DnsServer`, stopped after the test."""
    server = DnsServer().start()
    try:
        yield server
    finally:
        server.stop()
