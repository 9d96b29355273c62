"""``mcp-sonde verify`` end to end: verdicts, summaries, one exit code per failure reason, keys URLs.

Every case runs the command in this process (``app.cli.main``) on files in a temporary
directory and reads what it printed. Forged envelopes carry correct signatures unless the case
is about the signature, so each failure is the one step it names (the order of
:mod:`app.attest.verify.verifier`), not an earlier one.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.attest import dsse
from app.attest.verify import source
from app.attest.verify.reasons import FAILURES
from app.canonical import canonical_bytes
from app.cli import main
from app.net import fetch
from tests.attest import forge
from tests.conftest import Service
from tests.servers.raw import RawServer, Request, send, send_json

FREE = {"X-Free-Pool": "1"}
OBSERVED = datetime(2026, 12, 1, 16, 17, 27, 247000, tzinfo=UTC)  # the sample statement's observed_at


@dataclass
class Ran:
    """What one ``mcp-sonde verify`` printed, and its exit code."""

    code: int
    out: str
    err: str


Verify = Callable[..., Ran]


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Verify:
    """``run(*argv)``: ``mcp-sonde verify *argv`` in this process."""

    def verify(*argv: str) -> Ran:
        capsys.readouterr()
        code = main(["verify", *argv])
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return verify


@dataclass
class Case:
    """Files for one verification: the input and the key document."""

    root: Path
    key: forge.Key

    def write(self, name: str, data: bytes | dict[str, Any]) -> str:
        path = self.root / name
        path.write_bytes(data if isinstance(data, bytes) else forge.dumps(data))
        return str(path)

    def keys(self, *keys: forge.Key) -> str:
        """The key document listing ``keys`` (default: this case's key)."""
        return self.write("keys.json", forge.keys_document(*(keys or (self.key,))))

    def args(self, envelope: bytes | dict[str, Any], *keys: forge.Key) -> list[str]:
        """``ENVELOPE --keys KEYS`` for ``envelope`` (bytes: the file's bytes as they are)."""
        return [self.write("envelope.json", envelope), "--keys", self.keys(*keys)]


@pytest.fixture
def case(tmp_path: Path) -> Case:
    return Case(tmp_path, forge.make_key())


def canonical(statement: dict[str, Any]) -> bytes:
    return canonical_bytes(statement)


def compact(statement: dict[str, Any]) -> bytes:
    """Sorted compact JSON, written by hand: the canonical form for the sample statement's values
    (checked below), so that bytes can be changed after serialising without re-normalising."""
    return json.dumps(statement, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def signed(
    case: Case, payload: bytes, payload_type: str = dsse.PAYLOAD_TYPE, keyid: str | None = None
) -> dict[str, Any]:
    """An envelope of exactly ``payload``, correctly signed by the case's key."""
    return dict(dsse.sign(payload, [(keyid or case.key.keyid, case.key.private)], payload_type))


def test_the_handwritten_compact_form_is_the_canonical_form_of_the_sample() -> None:
    """Precondition of the byte-level forgeries below: sorted compact JSON of the sample is its
    canonical form, so an edit of those bytes is the only difference from canonical."""
    assert compact(forge.statement()) == canonical(forge.statement())


# --- verified ----------------------------------------------------------------------------------


def test_an_honest_envelope_verifies_and_prints_its_summary(case: Case, run: Verify) -> None:
    """Exit 0; the summary names the key, the server URL, the time, status, coverage, the
    credential state and the check counts, and nothing goes to stderr."""
    ran = run(*case.args(forge.envelope(forge.statement(), case.key)))
    assert ran.code == 0, ran.err
    assert ran.err == ""
    lines = ran.out.splitlines()
    assert lines[0] == f"VERIFIED: signed by key {case.key.keyid} (valid at observed_at, not revoked)"
    assert "server:       http://127.0.0.1:34887/stateless-json/mcp  (query string bound by its SHA-256)" in lines
    assert "observed at:  2026-12-01T16:17:27.247Z by mcp-sonde 0.2.0" in lines
    assert "status:       ok (ok), 2026-07-28 over streamable_http" in lines
    assert "coverage:     full" in lines
    assert "credentialed: no" in lines
    assert "checks:       2 unverified, 11 verified" in lines
    assert "  tls_certificate: unverified (not_applicable)" in lines
    assert not any(line.startswith("result:") for line in lines)  # a bare envelope: no answer to match


def test_json_output_of_an_honest_envelope(case: Case, run: Verify) -> None:
    """``--json`` prints one JSON document: verified, the key with its validity, and the statement's facts."""
    ran = run(*case.args(forge.envelope(forge.statement(), case.key)), "--json")
    assert ran.code == 0, ran.err
    report = json.loads(ran.out)
    predicate = forge.statement()["predicate"]
    assert report["verified"] is True
    assert report["keys"] == [{"keyid": case.key.keyid, "valid_from": "2026-01-01T00:00:00Z", "valid_until": None}]
    assert report["subject"] == forge.statement()["subject"][0]
    for name in ("url", "url_query_sha256", "observed_at", "status", "reason", "coverage", "credentialed", "checks"):
        assert report[name] == predicate[name], name
    assert report["server"] == predicate["server"]
    assert report["result_checked"] is False


def test_json_output_of_a_failure(case: Case, run: Verify) -> None:
    """``--json`` on a failure prints verified false with the reason on stdout, and the exit code is the reason's."""
    ran = run(*case.args(forge.envelope(forge.statement(), case.key), forge.make_key()), "--json")
    assert ran.code == FAILURES["key_unknown"][0]
    report = json.loads(ran.out)
    assert report["verified"] is False and report["reason"] == "key_unknown" and report["detail"]
    assert ran.err.startswith("NOT VERIFIED (key_unknown): ")


@pytest.fixture
def served(service: Service, sdk_base: str, tmp_path: Path) -> Iterator[tuple[dict[str, Any], dict[str, Any], str]]:
    """A real served check: the answer, the ``GET /v1/attestations/{id}`` answer, the key document file."""
    with service() as base:
        answer = httpx2.post(
            f"{base}/v1/mcp/check", json={"url": f"{sdk_base}/stateless-json/mcp"}, headers=FREE, timeout=30
        )
        assert answer.status_code == 200, answer.text
        stored = httpx2.get(f"{base}/v1/attestations/{answer.json()['attestation_id']}", timeout=10)
        assert stored.status_code == 200
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10).content
    path = tmp_path / "served-keys.json"
    path.write_bytes(keys)
    yield answer.json(), stored.json(), str(path)


def test_a_check_answer_verifies_with_its_result(
    served: tuple[dict[str, Any], dict[str, Any], str], case: Case, run: Verify
) -> None:
    """A check answer as served verifies, and the summary says the answer beside the envelope is the one signed."""
    answer, _, keys = served
    ran = run(case.write("answer.json", answer), "--keys", keys)
    assert ran.code == 0, ran.err
    assert ran.out.startswith(f"VERIFIED: signed by key {answer['attestation']['signatures'][0]['keyid']}")
    assert f"server:       {answer['url']}" in ran.out.splitlines()
    assert ran.out.splitlines()[-1] == "result:       the check answer beside the envelope is the one signed"
    report = json.loads(run(case.write("answer.json", answer), "--keys", keys, "--json").out)
    assert report["result_checked"] is True


def test_a_stored_attestation_answer_verifies(
    served: tuple[dict[str, Any], dict[str, Any], str], case: Case, run: Verify
) -> None:
    """The ``GET /v1/attestations/{id}`` answer (``{"id", "envelope"}``) verifies, without a result to match."""
    answer, stored, keys = served
    assert stored["id"] == answer["attestation_id"]
    ran = run(case.write("stored.json", stored), "--keys", keys)
    assert ran.code == 0, ran.err
    assert "result:" not in ran.out
    assert hashlib.sha256(forge.payload_of(stored["envelope"])).hexdigest() == stored["id"]


def test_a_check_answer_with_one_field_changed_is_result_mismatch(
    served: tuple[dict[str, Any], dict[str, Any], str], case: Case, run: Verify
) -> None:
    """The served answer with its tool count changed (envelope untouched) fails ``result_mismatch``."""
    answer, _, keys = served
    answer["tools"]["count"] += 1
    ran = run(case.write("answer.json", answer), "--keys", keys)
    assert ran.code == FAILURES["result_mismatch"][0]
    assert "NOT VERIFIED (result_mismatch)" in ran.err


def test_an_envelope_on_standard_input_verifies(case: Case, run: Verify, monkeypatch: pytest.MonkeyPatch) -> None:
    """``-`` reads the envelope from standard input."""
    import io
    import sys

    raw = forge.dumps(forge.envelope(forge.statement(), case.key))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
    ran = run("-", "--keys", case.keys())
    assert ran.code == 0, ran.err
    assert ran.out.startswith("VERIFIED")


def test_without_keys_the_installations_document_is_used(
    case: Case, run: Verify, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without ``--keys`` the key document of ``MCP_SONDE_DATA_DIR`` is used (and one lacking the key fails)."""
    monkeypatch.setenv("MCP_SONDE_DATA_DIR", str(tmp_path / "data"))
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    assert run(envelope).code == FAILURES["keys_unavailable"][0]  # no document there yet
    (tmp_path / "data" / "keys").mkdir(parents=True)
    (tmp_path / "data" / "keys" / "keys.json").write_bytes(forge.keys_document(forge.make_key()))
    assert run(envelope).code == FAILURES["key_unknown"][0]
    (tmp_path / "data" / "keys" / "keys.json").write_bytes(forge.keys_document(case.key))
    assert run(envelope).code == 0


# --- what the summary says ---------------------------------------------------------------------


def test_a_credentialed_statement_says_so_with_the_header_names(case: Case, run: Verify) -> None:
    """A statement of a check run with the caller's credentials prints ``credentialed: YES`` and
    names the headers (never values: there are none in the statement)."""
    statement = forge.statement()
    statement["predicate"]["credentialed"] = True
    statement["predicate"]["credential_headers"] = ["Authorization", "X-Api-Key"]
    ran = run(*case.args(forge.envelope(statement, case.key)))
    assert ran.code == 0, ran.err
    line = next(line for line in ran.out.splitlines() if line.startswith("credentialed:"))
    assert line.startswith("credentialed: YES")
    assert "(Authorization, X-Api-Key)" in line
    assert "visible to that caller only" in line
    report = json.loads(run(*case.args(forge.envelope(statement, case.key)), "--json").out)
    assert report["credentialed"] is True and report["credential_headers"] == ["Authorization", "X-Api-Key"]


HOSTILE_NAME = "evil\x1b[2J\x1b]0;pwned\x07\r\nVERIFIED: by key 0000\u202e\u009b31m\\u001b"


def test_regression_server_name_with_terminal_escapes_is_printed_escaped_in_the_summary(
    case: Case, run: Verify
) -> None:
    """A server name (and protocol version) holding terminal escapes, a C1 CSI, a bidi override,
    a line break and a literal backslash is printed as data: no control or format character
    reaches the terminal, the text cannot forge a line of its own, and an escape in the text
    cannot pass for an escaped character."""
    statement = forge.statement()
    statement["predicate"]["server"]["name"] = HOSTILE_NAME
    statement["predicate"]["protocol_version"] = "2026\x1b[31m"
    ran = run(*case.args(forge.envelope(statement, case.key)))
    assert ran.code == 0, ran.err
    assert not any(not ch.isprintable() for ch in ran.out.replace("\n", ""))
    lines = ran.out.splitlines()
    assert sum(line.startswith("VERIFIED") for line in lines) == 1
    server = next(line for line in lines if line.startswith("server info:"))
    assert "evil\\u001b[2J\\u001b]0;pwned\\u0007\\u000d\\u000aVERIFIED: by key 0000\\u202e\\u009b31m\\\\u001b" in server
    assert "2026\\u001b[31m over streamable_http" in ran.out


def test_regression_json_output_passed_a_c1_csi_and_a_bidi_override_raw(case: Case, run: Verify) -> None:
    """``--json`` output holds no raw control or format character either: U+009B (CSI) and
    U+202E in the protocol version and the server name were written as they are by
    ``json.dumps(ensure_ascii=False)``; now they are JSON escapes and read back to the exact text."""
    statement = forge.statement()
    statement["predicate"]["server"]["name"] = HOSTILE_NAME
    statement["predicate"]["protocol_version"] = "2026\u009b31m\u202e"
    ran = run(*case.args(forge.envelope(statement, case.key)), "--json")
    assert ran.code == 0, ran.err
    assert not any(not ch.isprintable() for ch in ran.out.replace("\n", ""))
    assert "\\u009b31m\\u202e" in ran.out
    report = json.loads(ran.out)
    assert report["server"]["name"] == HOSTILE_NAME
    assert report["protocol_version"] == "2026\u009b31m\u202e"


# --- one exit code per failure reason ----------------------------------------------------------


def _not_json(case: Case) -> list[str]:
    return [case.write("envelope.json", b"this is not JSON\n"), "--keys", case.keys()]


def _missing_file(case: Case) -> list[str]:
    return [str(case.root / "no-such-envelope.json"), "--keys", case.keys()]


def _not_an_envelope(case: Case) -> list[str]:
    return [case.write("envelope.json", b'{"hello": "world"}'), "--keys", case.keys()]


def _payload_type(case: Case) -> list[str]:
    return case.args(signed(case, canonical(forge.statement()), payload_type="application/json"))


def _keys_missing(case: Case) -> list[str]:
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    return [envelope, "--keys", str(case.root / "no-such-keys.json")]


def _keys_invalid(case: Case) -> list[str]:
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    document = json.loads(forge.keys_document(case.key))
    document["keys"][0]["keyid"] = "0" * 16  # not the SHA-256 prefix of its public key
    return [envelope, "--keys", case.write("keys.json", json.dumps(document).encode())]


def _keys_not_json(case: Case) -> list[str]:
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    return [envelope, "--keys", case.write("keys.json", b"<html>keys</html>")]


def _key_unknown(case: Case) -> list[str]:
    return case.args(forge.envelope(forge.statement(), case.key), forge.make_key())


def _changed_payload_byte(case: Case) -> list[str]:
    envelope = forge.envelope(forge.statement(), case.key)
    payload = forge.payload_of(envelope).replace(b'"count":3', b'"count":4')
    return case.args(dict(envelope, payload=base64.b64encode(payload).decode()))


def _swapped_keyid(case: Case) -> list[str]:
    other = forge.make_key()
    return case.args(forge.envelope(forge.statement(), case.key, keyid=other.keyid), case.key, other)


def _key_revoked(case: Case) -> list[str]:
    case.key.entry.revoked = True
    case.key.entry.revoked_at = datetime(2026, 12, 2, tzinfo=UTC)
    return case.args(forge.envelope(forge.statement(), case.key))


def _duplicate_key(case: Case) -> list[str]:
    payload = canonical(forge.statement())
    assert payload.startswith(b'{"_type":')
    return case.args(signed(case, b'{"_type":"x",' + payload[1:]))


def _whitespace(case: Case) -> list[str]:
    return case.args(signed(case, json.dumps(forge.statement(), sort_keys=True).encode()))


def _unsorted(case: Case) -> list[str]:
    statement = forge.statement()
    backwards = {name: statement[name] for name in sorted(statement, reverse=True)}
    return case.args(signed(case, json.dumps(backwards, separators=(",", ":")).encode()))


def _not_nfc(case: Case) -> list[str]:
    statement = forge.statement()
    statement["predicate"]["server"]["name"] = "cafe\u0301"  # NFD; NFC is "caf\u00e9"
    return case.args(signed(case, compact(statement)))


def _one_point_zero(case: Case) -> list[str]:
    payload = compact(forge.statement())
    assert payload.count(b'"count":3') == 1
    return case.args(signed(case, payload.replace(b'"count":3', b'"count":3.0')))


def _statement_invalid(case: Case) -> list[str]:
    statement = forge.statement()
    statement["_type"] = "https://in-toto.io/Statement/v0.1"
    return case.args(forge.envelope(statement, case.key))


def _predicate_invalid(case: Case) -> list[str]:
    statement = forge.statement()
    statement["predicate"]["status"] = "splendid"
    return case.args(forge.envelope(statement, case.key))


def _before_valid_from(case: Case) -> list[str]:
    late = forge.make_key(valid_from=datetime(2026, 12, 2, tzinfo=UTC))
    return Case(case.root, late).args(forge.envelope(forge.statement(), late))


def _after_valid_until(case: Case) -> list[str]:
    retired = forge.make_key(valid_until=datetime(2026, 11, 30, tzinfo=UTC))
    return Case(case.root, retired).args(forge.envelope(forge.statement(), retired))


def _result_mismatch(case: Case) -> list[str]:
    result = {"url": "http://127.0.0.1:34887/stateless-json/mcp", "status": "ok", "tools": {"count": 3}}
    statement = forge.statement()
    statement["predicate"]["result_sha256"] = hashlib.sha256(canonical(result)).hexdigest()
    envelope = forge.envelope(statement, case.key)
    answer = dict(result, status="server_error", attestation=envelope, attestation_id=forge.id_of(envelope))
    return [case.write("answer.json", answer), "--keys", case.keys()]


def _id_mismatch(case: Case) -> list[str]:
    envelope = forge.envelope(forge.statement(), case.key)
    return [case.write("record.json", {"id": "0" * 64, "envelope": envelope}), "--keys", case.keys()]


CASES: dict[str, tuple[str, Callable[[Case], list[str]]]] = {
    "non-JSON file": ("envelope_unreadable", _not_json),
    "missing file": ("envelope_unreadable", _missing_file),
    "JSON that is no envelope": ("envelope_unreadable", _not_an_envelope),
    "payloadType application/json": ("payload_type_unexpected", _payload_type),
    "missing key document": ("keys_unavailable", _keys_missing),
    "key document with a wrong keyid": ("keys_unavailable", _keys_invalid),
    "key document not JSON": ("keys_unavailable", _keys_not_json),
    "key not listed": ("key_unknown", _key_unknown),
    "one payload byte changed": ("signature_invalid", _changed_payload_byte),
    "key id swapped": ("signature_invalid", _swapped_keyid),
    "key revoked": ("key_revoked", _key_revoked),
    "duplicate key": ("payload_duplicate_key", _duplicate_key),
    "extra whitespace": ("payload_not_canonical", _whitespace),
    "unsorted keys": ("payload_not_canonical", _unsorted),
    "text not in NFC": ("payload_not_canonical", _not_nfc),
    "1.0 instead of 1": ("payload_not_canonical", _one_point_zero),
    "not an in-toto statement v1": ("statement_invalid", _statement_invalid),
    "predicate against its schema": ("predicate_invalid", _predicate_invalid),
    "before valid_from": ("key_not_valid_at_observed_at", _before_valid_from),
    "after valid_until": ("key_not_valid_at_observed_at", _after_valid_until),
    "answer not the signed result": ("result_mismatch", _result_mismatch),
    "a record whose id is not its payload's": ("id_mismatch", _id_mismatch),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_failure_exits_with_its_reasons_code(name: str, case: Case, run: Verify) -> None:
    """Each forged input fails with the reason it was forged for: its exit code, ``NOT VERIFIED
    (reason)`` on stderr, nothing on stdout (and ``--json`` says the same reason)."""
    reason, build = CASES[name]
    argv = build(case)
    ran = run(*argv)
    assert (ran.code, ran.out) == (FAILURES[reason][0], ""), ran.err
    assert ran.err.startswith(f"NOT VERIFIED ({reason}): ")
    assert json.loads(run(*argv, "--json").out)["reason"] == reason


def test_every_reason_has_a_case_and_the_exit_codes_are_pairwise_distinct(case: Case, run: Verify) -> None:
    """Running one case per reason gives as many distinct exit codes as there are reasons, each
    differing from 0 (verified), 1 (internal fault) and 2 (usage)."""
    assert {reason for reason, _ in CASES.values()} == set(FAILURES)
    seen: dict[str, int] = {}
    for index, (reason, build) in enumerate(CASES.values()):
        root = case.root / str(index)
        root.mkdir()
        seen.setdefault(reason, run(*build(Case(root, forge.make_key()))).code)
    codes = list(seen.values())
    assert len(set(codes)) == len(FAILURES) == len(codes)
    assert not {0, 1, 2} & set(codes)
    assert seen == {reason: code for reason, (code, _) in FAILURES.items()}


def test_the_forgeries_honest_twins_verify(case: Case, run: Verify) -> None:
    """The forgeries' honest twins verify, so each failure above is the forgery's doing: the
    hand-written compact form signed as the byte-level cases sign it, and the answer of the
    ``result_mismatch`` case left as the statement signed it (then the answer is matched)."""
    assert run(*case.args(signed(case, compact(forge.statement())))).code == 0
    result = {"url": "http://127.0.0.1:34887/stateless-json/mcp", "status": "ok", "tools": {"count": 3}}
    statement = forge.statement()
    statement["predicate"]["result_sha256"] = hashlib.sha256(canonical(result)).hexdigest()
    envelope = forge.envelope(statement, case.key)
    answer = dict(result, attestation=envelope, attestation_id=hashlib.sha256(forge.payload_of(envelope)).hexdigest())
    ran = run(case.write("answer.json", answer), "--keys", case.keys())
    assert ran.code == 0, ran.err
    assert ran.out.splitlines()[-1] == "result:       the check answer beside the envelope is the one signed"


# --- keys URLs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/keys.json",
        "https://169.254.169.254/keys.json",
        "https://127.0.0.1/keys.json",
        "https://[::1]/keys.json",
        "https://10.0.0.1/keys.json",
        "https://127.0.0.1:8443/keys.json",
    ],
)
def test_a_keys_url_the_guard_refuses_is_never_dialled(
    url: str, case: Case, run: Verify, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``--allow-private`` a keys URL to a metadata, loopback or private address (or not
    https on 443) is ``keys_unavailable``, refused before any connection is built."""

    def no_transport(*args: object, **kwargs: object) -> object:
        raise AssertionError("a refused keys URL reached the transport")

    monkeypatch.setattr(fetch, "build_transport", no_transport)
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    ran = run(envelope, "--keys", url)
    assert ran.code == FAILURES["keys_unavailable"][0], ran.err
    assert "refused" in ran.err


@pytest.fixture
def keys_server(raw: RawServer, case: Case) -> RawServer:
    """A loopback server of the case's key document at ``/keys.json`` (and hostile variants)."""
    document = forge.keys_document(case.key)

    @raw.route("/keys.json")
    def keys(request: Request, conn: socket.socket) -> None:
        send(conn, 200, {"content-type": "application/json"}, document)

    @raw.route("/moved.json")
    def moved(request: Request, conn: socket.socket) -> None:
        send(conn, 302, {"location": raw.url("/keys.json")})

    @raw.route("/large.json")
    def large(request: Request, conn: socket.socket) -> None:
        # A valid key document padded past 64 kB: only its size is wrong.
        send(conn, 200, {"content-type": "application/json"}, document[:-1] + b" " * (64 * 1024) + b"}")

    @raw.route("/large-chunked.json")
    def large_chunked(request: Request, conn: socket.socket) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
        chunk = b" " * 16384
        for _ in range(8):
            conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        conn.sendall(b"0\r\n\r\n")
        return True

    @raw.route("/missing.json")
    def missing(request: Request, conn: socket.socket) -> None:
        send_json(conn, 404, {"error": "not found"})

    return raw


def test_a_keys_url_on_loopback_with_allow_private_verifies(keys_server: RawServer, case: Case, run: Verify) -> None:
    """``--allow-private`` lets a keys URL on loopback be fetched: a 200 key document verifies,
    fetched once, asking for JSON without content coding."""
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    ran = run(envelope, "--keys", keys_server.url("/keys.json"), "--allow-private")
    assert ran.code == 0, ran.err
    assert ran.out.startswith(f"VERIFIED: signed by key {case.key.keyid}")
    [request] = keys_server.requests_to("/keys.json")
    assert request.method == "GET"
    assert request.headers["accept"] == "application/json"
    assert request.headers["accept-encoding"] == "identity"


def test_a_keys_url_on_loopback_is_refused_without_allow_private(
    keys_server: RawServer, case: Case, run: Verify
) -> None:
    """The same loopback keys URL without ``--allow-private`` is refused and never requested."""
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    ran = run(envelope, "--keys", keys_server.url("/keys.json"))
    assert ran.code == FAILURES["keys_unavailable"][0]
    assert keys_server.connections == 0


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/moved.json", "HTTP 302 (redirects are not followed)"),
        ("/missing.json", "HTTP 404"),
        ("/large.json", "larger than 65536 bytes"),
        ("/large-chunked.json", "larger than 65536 bytes"),
    ],
)
def test_a_keys_url_that_redirects_or_answers_too_much_is_keys_unavailable(
    path: str, said: str, keys_server: RawServer, case: Case, run: Verify
) -> None:
    """A redirect is not followed (its target is never requested), a non-200 answer is not read,
    and a body over 64 kB (with a length or chunked) is refused: each ``keys_unavailable``."""
    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    ran = run(envelope, "--keys", keys_server.url(path), "--allow-private")
    assert ran.code == FAILURES["keys_unavailable"][0], ran.err
    assert said in ran.err
    assert len(keys_server.requests_to(path)) == 1
    assert keys_server.requests_to("/keys.json") == []


def test_a_keys_url_that_never_answers_is_cut_at_the_fetch_timeout(
    raw: RawServer, case: Case, run: Verify, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A keys URL that accepts the request and never answers is cut at ``FETCH_TIMEOUT_S`` (5 s;
    made 0.5 s here to keep the test fast) as ``keys_unavailable``."""
    assert source.FETCH_TIMEOUT_S == 5.0
    monkeypatch.setattr(source, "FETCH_TIMEOUT_S", 0.5)
    release = threading.Event()

    @raw.route("/silent.json")
    def silent(request: Request, conn: socket.socket) -> bool:
        release.wait(30)
        return True

    envelope = case.write("envelope.json", forge.envelope(forge.statement(), case.key))
    started = time.monotonic()
    try:
        ran = run(envelope, "--keys", raw.url("/silent.json"), "--allow-private")
    finally:
        release.set()
    elapsed = time.monotonic() - started
    assert ran.code == FAILURES["keys_unavailable"][0], ran.err
    assert "did not answer within 0.5 s" in ran.err
    assert 0.45 <= elapsed < 3.0
    assert len(raw.requests_to("/silent.json")) == 1
