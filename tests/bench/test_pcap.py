"""Round trips counted from a capture (bench/pcap.py): waits across the link, never elapsed time."""

from __future__ import annotations

from bench.pcap import Packet, round_trips

FINISHED = b"\x14\x03\x03\x00\x01\x01\x17\x03\x03\x00\x45" + bytes(69)  # ChangeCipherSpec, then Finished


def send(ms: float, port: int, head: bytes = b"POST / HTTP/1.1\r\n", syn: bool = False) -> Packet:
    length = 0 if syn else len(head) if head == FINISHED else max(len(head), 200)
    return Packet(ms / 1000, True, port, syn, syn, length, b"" if syn else head[:80])


def answer(ms: float, port: int, head: bytes = b"HTTP/1.1 200 OK\r\n", syn: bool = False) -> Packet:
    return Packet(ms / 1000, False, port, syn, False, 0 if syn else 300, b"" if syn else head)


def ack(ms: float, port: int, from_client: bool) -> Packet:
    return Packet(ms / 1000, from_client, port, False, False, 0, b"")


def test_each_request_that_waits_for_an_answer_is_one_round_trip_however_long_the_client_computes() -> None:
    packets = [send(0, 1, syn=True), answer(50, 1, syn=True), send(51, 1), answer(101, 1), ack(101, 1, True)]
    packets += [send(180, 1), answer(230, 1), answer(231, 1), send(400, 1), answer(450, 1)]  # CPU stalls between
    assert round_trips(packets) == 4


def test_an_answer_sooner_than_half_a_round_trip_after_the_last_send_on_its_connection_ends_no_wait() -> None:
    packets = [send(0, 1, syn=True), answer(50, 1, syn=True), send(51, 1), send(90, 1), answer(101, 1)]
    packets += [answer(140, 1)]  # the first request's answer came 11 ms after the second left
    assert round_trips(packets) == 2


def test_a_connection_dialled_ahead_adds_no_round_trip_when_its_handshake_ends_during_a_stall() -> None:
    hello, server_hello = b"\x16\x03\x01\x02\x00", b"\x16\x03\x03\x00\x7a"
    packets = [send(0, 1, syn=True), answer(50, 1, syn=True), send(51, 1, hello), answer(101, 1, server_hello)]
    packets += [send(102, 1, FINISHED), send(103, 1, b"\x17\x03\x03\x02\x4b"), send(104, 2, syn=True)]
    packets += [answer(154, 2, syn=True), answer(155, 1, b"\x17\x03\x03"), send(156, 2, hello)]  # ticket, answer
    packets += [answer(206, 2, server_hello), send(207, 2, FINISHED), send(230, 1, b"\x17\x03\x03\x02\x41")]
    packets += [answer(257, 2, b"\x17\x03\x03"), answer(280, 1, b"\x17\x03\x03")]  # 2's ticket, 1's answer
    assert round_trips(packets) == 4  # connect, TLS, two requests: connection 2's handshake runs beside them


def test_a_request_sent_with_the_finished_message_waits_for_its_answer() -> None:
    packets = [send(0, 1, syn=True), answer(50, 1, syn=True), send(51, 1, b"\x16\x03\x01\x02\x00")]
    packets += [answer(101, 1, b"\x16\x03\x03\x00\x7a")]
    with_request = Packet(0.102, True, 1, False, False, len(FINISHED) + 500, FINISHED)
    packets += [with_request, answer(152, 1, b"\x17\x03\x03"), send(153, 2, syn=True), answer(203, 2, syn=True)]
    assert round_trips(packets) == 3  # connect, TLS, the request; a SYN-ACK is no request's answer
    alone = [*packets[:4], send(102, 1, FINISHED), answer(152, 1, b"\x17\x03\x03")]
    assert round_trips(alone) == 0  # the answer to Finished alone (a session ticket) answers no request


def test_a_request_on_a_connection_dialled_ahead_stands_behind_the_answers_of_the_others() -> None:
    packets = [send(0, 1, syn=True), send(0, 2, syn=True), answer(50, 1, syn=True), answer(50, 2, syn=True)]
    packets += [send(51, 1), answer(101, 1), send(102, 2), answer(152, 2), send(153, 1), answer(203, 1)]
    assert round_trips(packets) == 4
