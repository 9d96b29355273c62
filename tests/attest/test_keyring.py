"""The key ring and ``mcp-sonde keys``: generation at start, rotation, revocation, configured keys.

Each test keeps its key document in its own temporary directory. A service started by a test
signs with the key ring of its own ``data_dir``.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pydantic import SecretStr

from app.attest import keyring
from app.attest.document import KeyDocument, locked, read_document, utc_now, write_document
from app.attest.errors import KeyDocumentError, NoSigningKey
from app.attest.keyring import KeyRing, configured_key, keyring_of, open_keyring
from app.attest.keys import key_id, load_private, private_pem, public_pem, write_private
from app.attest.verify.keydoc import parse_keys
from app.attest.verify.reasons import VerificationFailed
from app.attest.verify.verifier import verify
from app.cli import main
from app.settings import Settings
from tests.attest import forge
from tests.conftest import Service, reason_of
from tests.servers.raw import RawServer, Request
from tests.servers.raw_mcp import MiniMcp

ROOT = Path(__file__).resolve().parents[2]
FREE = {"X-Free-Pool": "1"}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """The key document of a data directory of this test (not created yet)."""
    return tmp_path / "data" / "keys" / "keys.json"


def keys_cli(path: Path, *argv: str) -> tuple[int, str, str]:
    """``mcp-sonde keys --keys-file PATH *argv`` in this process: exit code, stdout, stderr."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["keys", "--keys-file", str(path), *argv])
    return code, out.getvalue(), err.getvalue()


def pem_files(path: Path) -> list[Path]:
    return sorted(path.parent.glob("*.pem"))


def wait_for(condition: Callable[[], bool], within_s: float) -> float:
    """Seconds until ``condition()`` held (polled every 20 ms); fails after ``within_s``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within_s:
            raise AssertionError(f"not within {within_s} s")
        time.sleep(0.02)
    return time.monotonic() - started


# --- start ---------------------------------------------------------------------------------------


def test_first_start_generates_one_key_and_logs_it(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """On an empty data directory the first start makes exactly one key, lists it in the
    document (open-ended, unrevoked, valid from now) with its private key beside it, says so
    in the log, and signs with it."""
    caplog.set_level(logging.INFO, logger="mcp_sonde.attest")
    before = utc_now()
    ring = open_keyring(path)
    [entry] = read_document(path).keys
    assert before <= entry.valid_from <= utc_now()
    assert (entry.valid_until, entry.revoked, entry.revoked_at) == (None, False, None)
    assert pem_files(path) == [path.parent / f"{entry.keyid}.pem"]
    key = load_private((path.parent / f"{entry.keyid}.pem").read_bytes(), "test")
    assert key_id(key.public_key()) == entry.keyid and public_pem(key.public_key()) == entry.public_key
    assert ring.signing_key(datetime.now(UTC)).keyid == entry.keyid
    [record] = [r for r in caplog.records if r.name == "mcp_sonde.attest"]
    assert record.levelno == logging.WARNING
    assert f"generated {entry.keyid} into {path.parent}" in record.getMessage()


def test_a_second_start_reuses_the_key(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A second start finds the key the first made: no new key, no new file, the same key signs,
    and nothing says "generated" (``serve`` names the signing key once, in its own start-up line)."""
    first = open_keyring(path).signing_key(datetime.now(UTC)).keyid
    document = path.read_bytes()
    caplog.set_level(logging.DEBUG, logger="mcp_sonde.attest")
    caplog.clear()
    second = open_keyring(path).signing_key(datetime.now(UTC)).keyid
    assert second == first
    assert path.read_bytes() == document
    assert len(pem_files(path)) == 1
    messages = [r.getMessage() for r in caplog.records if r.name == "mcp_sonde.attest"]
    assert messages == [f"results are signed with key {first} ({path.parent / (first + '.pem')})"]


def test_a_service_started_twice_on_one_data_dir_publishes_one_key(service: Service, tmp_path: Path) -> None:
    """Two services started one after the other on one data directory publish the same one key."""
    published = []
    for _ in range(2):
        with service(data_dir=tmp_path) as base:
            published.append(httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10).json())
    assert published[0] == published[1]
    assert len(published[0]["keys"]) == 1


_START = """
import sys, time
from pathlib import Path
from datetime import UTC, datetime
from app.attest.keyring import open_keyring
at = float(sys.argv[2])
time.sleep(max(0.0, at - time.time() - 0.02))
while time.time() < at:
    pass
print(open_keyring(Path(sys.argv[1])).signing_key(datetime.now(UTC)).keyid)
"""


def test_processes_starting_at_once_on_an_empty_data_dir_make_one_key(path: Path) -> None:
    """Four processes starting at the same instant on an empty data directory (just before a
    second begins, where a start that took "now" before the lock would miss the key made
    meanwhile) end with one key in the document, one private key file, and all sign with it."""
    at = float(int(time.time()) + 2) - 0.003
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _START, str(path), str(at)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [process.communicate(timeout=60) for process in processes]
    assert all(process.returncode == 0 for process in processes), outputs
    keyids = {out.strip() for out, _ in outputs}
    [entry] = read_document(path).keys
    assert keyids == {entry.keyid}
    assert pem_files(path) == [path.parent / f"{entry.keyid}.pem"]
    assert sum("generated" in err for _, err in outputs) == 1


def test_threads_starting_at_once_with_their_own_opens_make_one_key(path: Path) -> None:
    """Eight threads (each its own open of the lock file, so flock excludes them as it does
    processes) starting together make one key, and every ring signs with it."""
    barrier = threading.Barrier(8)
    keyids: list[str] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            barrier.wait()
            keyids.append(open_keyring(path).signing_key(datetime.now(UTC)).keyid)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    [entry] = read_document(path).keys
    assert keyids == [entry.keyid] * 8
    assert len(pem_files(path)) == 1


def test_regression_a_start_that_waited_for_the_lock_across_a_second_reuses_the_key_made_meanwhile(
    path: Path,
) -> None:
    """A start blocked on the lock while another process generated the first key in a later
    second reuses that key. ``open_keyring`` took "now" before the lock, so the key made
    meanwhile (valid from the next second) was not yet valid at that "now": the waiting start
    generated a second key."""
    rings: list[KeyRing] = []
    with locked(path):
        waiting = threading.Thread(target=lambda: rings.append(open_keyring(path)))
        waiting.start()
        time.sleep(0.2)  # the thread is blocked on the lock
        second = int(time.time())
        while int(time.time()) == second:
            time.sleep(0.005)
        made = keyring._generate(path, read_document(path), None, None)  # the other process, lock held
    waiting.join(10)
    assert [entry.keyid for entry in read_document(path).keys] == [made.keyid]
    assert rings[0].signing_key(datetime.now(UTC)).keyid == made.keyid


def test_private_key_files_and_the_directory_are_private(path: Path) -> None:
    """A generated private key file is mode 0600 and its directory 0700 (whatever the umask
    lets through beyond that, never more); the key document is world-readable (it is public)."""
    old = os.umask(0o022)
    try:
        open_keyring(path)
        code, out, _ = keys_cli(path, "new")
    finally:
        os.umask(old)
    assert code == 0, out
    files = pem_files(path)
    assert len(files) == 2
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_private_key_file_is_never_overwritten(tmp_path: Path) -> None:
    """``write_private`` refuses a path that exists (``keys_unwritable``) and leaves it as it was."""
    target = tmp_path / "key.pem"
    target.write_bytes(b"keep me")
    with pytest.raises(KeyDocumentError) as failure:
        write_private(target, Ed25519PrivateKey.generate())
    assert failure.value.reason == "keys_unwritable"
    assert target.read_bytes() == b"keep me"


# --- which key signs -----------------------------------------------------------------------------


def _held(path: Path, *keys: forge.Key, held: tuple[forge.Key, ...] | None = None) -> None:
    """Write a document listing ``keys`` and the private key files of ``held`` (default: all)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_document(path, KeyDocument(keys=[key.entry for key in keys]))
    for key in keys if held is None else held:
        write_private(path.parent / f"{key.keyid}.pem", key.private)


def test_the_newest_held_valid_key_signs(path: Path) -> None:
    """Of the keys valid at a moment, the one with the latest ``valid_from`` that is held here
    signs; a newer key not held here, a revoked one, a retired one and one not yet valid do not."""
    jan, mar, jun, sep, dec = (datetime(2026, month, 1, tzinfo=UTC) for month in (1, 3, 6, 9, 12))
    old = forge.make_key(valid_from=jan)
    middle = forge.make_key(valid_from=mar)
    retired = forge.make_key(valid_from=jun, valid_until=datetime(2026, 8, 1, tzinfo=UTC))
    revoked = forge.make_key(valid_from=sep, revoked=True)
    not_held = forge.make_key(valid_from=dec)
    future = forge.make_key(valid_from=datetime(2099, 1, 1, tzinfo=UTC))
    _held(path, old, middle, retired, revoked, not_held, future, held=(old, middle, retired, revoked, future))
    ring = KeyRing(path)
    assert ring.signing_key(datetime(2026, 2, 1, tzinfo=UTC)).keyid == old.keyid
    assert ring.signing_key(datetime(2026, 4, 1, tzinfo=UTC)).keyid == middle.keyid
    assert ring.signing_key(datetime(2026, 7, 1, tzinfo=UTC)).keyid == retired.keyid
    assert ring.signing_key(datetime(2026, 8, 2, tzinfo=UTC)).keyid == middle.keyid  # retired ended
    assert ring.signing_key(datetime(2026, 12, 15, tzinfo=UTC)).keyid == middle.keyid  # not held, revoked
    assert ring.signing_key(datetime(2099, 6, 1, tzinfo=UTC)).keyid == future.keyid
    with pytest.raises(NoSigningKey):
        ring.signing_key(datetime(2025, 12, 31, tzinfo=UTC))


def test_of_two_keys_valid_from_one_second_the_one_listed_later_signs(path: Path) -> None:
    """Two keys with the same ``valid_from``: the one added later (listed later) signs."""
    first, second = forge.make_key(), forge.make_key()
    _held(path, first, second)
    assert KeyRing(path).signing_key(datetime(2026, 6, 1, tzinfo=UTC)).keyid == second.keyid
    _held(path.parent.parent / "other" / "keys.json", second, first)
    other = KeyRing(path.parent.parent / "other" / "keys.json")
    assert other.signing_key(datetime(2026, 6, 1, tzinfo=UTC)).keyid == first.keyid


def test_a_key_file_holding_another_key_is_not_held(path: Path) -> None:
    """A ``<keyid>.pem`` holding a different private key is not taken for that key id."""
    listed, impostor = forge.make_key(), forge.make_key()
    _held(path, listed, held=())
    write_private(path.parent / f"{listed.keyid}.pem", impostor.private)
    with pytest.raises(NoSigningKey):
        KeyRing(path).signing_key(datetime(2026, 6, 1, tzinfo=UTC))


def test_keys_new_is_picked_up_by_a_running_ring_within_a_second(path: Path) -> None:
    """``mcp-sonde keys new`` while a ring runs: within about a second (no restart) the new key
    signs, and the document the ring serves lists both keys."""
    ring = open_keyring(path)
    first = ring.signing_key(datetime.now(UTC)).keyid
    code, out, err = keys_cli(path, "new")
    assert code == 0, err
    new = out.split()[2]
    assert out.startswith(f"new key {new} (valid from ") and out.rstrip().endswith(f"{path.parent / new}.pem")
    assert new != first
    took = wait_for(lambda: ring.signing_key(datetime.now(UTC)).keyid == new, within_s=2.0)
    assert took <= 1.3
    assert [entry.keyid for entry in ring.document().keys] == [first, new]


def test_revoking_the_only_key_leaves_no_signing_key(path: Path) -> None:
    """``keys revoke`` of the only key: within about a second the running ring has no key that
    may sign (``NoSigningKey``, reason ``signing_key_unavailable``), and the document says when."""
    ring = open_keyring(path)
    keyid = ring.signing_key(datetime.now(UTC)).keyid
    code, out, err = keys_cli(path, "revoke", keyid)
    assert (code, out) == (0, f"revoked key {keyid} in {path}\n"), err

    def revoked() -> bool:
        try:
            ring.signing_key(datetime.now(UTC))
        except NoSigningKey as exc:
            assert exc.reason == "signing_key_unavailable"
            return True
        return False

    assert wait_for(revoked, within_s=2.0) <= 1.3
    [entry] = read_document(path).keys
    assert entry.revoked and entry.revoked_at is not None and entry.revoked_at <= utc_now()


def test_keys_retire_ends_validity_but_what_was_signed_still_verifies(path: Path) -> None:
    """``keys retire --at T``: the key signs nothing after T, still signs before it, and an
    envelope it signed before T still verifies with the published document."""
    ring = open_keyring(path)
    keyid = ring.signing_key(datetime.now(UTC)).keyid
    at = utc_now() + timedelta(seconds=5)
    code, _, err = keys_cli(path, "retire", keyid, "--at", at.strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert code == 0, err
    ring.refresh()
    assert ring.signing_key(at).keyid == keyid
    with pytest.raises(NoSigningKey):
        ring.signing_key(at + timedelta(seconds=1))
    [entry] = read_document(path).keys
    assert entry.valid_until == at and not entry.revoked
    # An envelope it signed, observed before T, verifies against the document as published.
    statement = forge.statement()
    statement["predicate"]["observed_at"] = (at - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    key = forge.Key(load_private((path.parent / f"{keyid}.pem").read_bytes(), "test"), entry)
    published = json.dumps(ring.document().published()).encode()
    assert verify(forge.dumps(forge.envelope(statement, key)), parse_keys(published)).keys[0].keyid == keyid
    statement["predicate"]["observed_at"] = (at + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with pytest.raises(VerificationFailed) as late:
        verify(forge.dumps(forge.envelope(statement, key)), parse_keys(published))
    assert late.value.reason == "key_not_valid_at_observed_at"


def test_keys_list_shows_validity_revocation_and_what_is_held(path: Path, tmp_path: Path) -> None:
    """``keys list`` prints one line per key: its id, validity, revocation and whether its private
    key file is held beside the document."""
    ring = open_keyring(path)
    first = ring.signing_key(datetime.now(UTC)).keyid
    assert keys_cli(path, "revoke", first, "--at", "2026-12-01T12:00:00Z")[0] == 0
    code, out, _ = keys_cli(path, "new", "--private-key-out", str(tmp_path / "secret.pem"))
    assert code == 0
    second = out.split()[2]
    code, out, _ = keys_cli(path, "list")
    assert code == 0
    document, header, *rows = out.splitlines()
    assert document == f"key document {path}"
    assert header.split() == ["keyid", "valid_from", "valid_until", "revoked", "pem_beside"]
    assert rows[0].split()[0] == first and rows[0].split()[2:] == ["-", "2026-12-01T12:00:00Z", "yes"]
    assert rows[1].split()[0] == second and rows[1].split()[2:] == ["-", "no", "no"]


def test_keys_new_private_key_out_writes_the_key_there_only(path: Path, tmp_path: Path) -> None:
    """``keys new --private-key-out FILE`` writes the private key to FILE (mode 0600), not beside
    the document; the document lists its public half; a service given FILE signs with it."""
    out_file = tmp_path / "secrets" / "signing.pem"
    code, out, err = keys_cli(path, "new", "--private-key-out", str(out_file))
    assert code == 4 and "does not exist" in err  # (its directory is not made: it may be a typo)
    out_file.parent.mkdir()
    code, out, err = keys_cli(path, "new", "--private-key-out", str(out_file))
    assert code == 0, err
    [entry] = read_document(path).keys
    assert out.rstrip().endswith(f"private key in {out_file}")
    assert stat.S_IMODE(out_file.stat().st_mode) == 0o600
    key = load_private(out_file.read_bytes(), "test")
    assert key_id(key.public_key()) == entry.keyid
    assert pem_files(path) == []
    assert KeyRing(path).document().keys == [entry]
    with pytest.raises(NoSigningKey):  # not held beside the document
        KeyRing(path).signing_key(datetime.now(UTC))
    ring = keyring_of(Settings(keys_file=path, signing_key_file=out_file))
    assert ring.signing_key(datetime.now(UTC)).keyid == entry.keyid
    assert len(read_document(path).keys) == 1  # it was listed already: not added again


def test_keys_new_valid_until(path: Path) -> None:
    """``keys new --valid-until T`` makes a key valid up to T only."""
    code, _, err = keys_cli(path, "new", "--valid-until", "2099-01-01T00:00:00Z")
    assert code == 0, err
    [entry] = read_document(path).keys
    assert entry.valid_until == datetime(2099, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize("action", ["revoke", "retire"])
def test_keys_revoke_or_retire_of_an_unknown_key_exits_4(path: Path, action: str) -> None:
    """``keys revoke``/``retire`` of a key id the document does not list exits 4 with
    ``key_unknown`` and leaves the document as it was."""
    open_keyring(path)
    before = path.read_bytes()
    code, out, err = keys_cli(path, action, "0123456789abcdef")
    assert (code, out) == (4, "")
    assert err == f"mcp-sonde keys: {path} lists no key 0123456789abcdef (key_unknown)\n"
    assert path.read_bytes() == before


def test_keys_on_a_corrupt_document_exits_4(path: Path) -> None:
    """``keys list`` and ``keys new`` on a document that is not one exit 4 with ``keys_invalid``
    (and ``new`` does not replace it)."""
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"keys": [{"keyid": "nope"}]}')
    for argv in (["list"], ["new"]):
        code, _, err = keys_cli(path, *argv)
        assert code == 4 and err.endswith("(keys_invalid)\n"), (argv, err)
    assert path.read_bytes() == b'{"keys": [{"keyid": "nope"}]}'
    assert pem_files(path) == []


# --- configured keys -----------------------------------------------------------------------------


def test_a_configured_key_is_added_to_the_document_and_signs(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``Settings(signing_key=PEM)``: the key is added to the document (valid from now), signs,
    and no key is generated; a second start does not add it again."""
    private = Ed25519PrivateKey.generate()
    settings = Settings(keys_file=path, signing_key=SecretStr(private_pem(private).decode()))
    caplog.set_level(logging.INFO, logger="mcp_sonde.attest")
    ring = keyring_of(settings)
    [entry] = read_document(path).keys
    assert entry.keyid == key_id(private.public_key()) and entry.public_key == public_pem(private.public_key())
    assert ring.signing_key(datetime.now(UTC)).key is not None
    assert ring.signing_key(datetime.now(UTC)).keyid == entry.keyid
    assert pem_files(path) == []
    assert any("was added to the key document" in r.getMessage() for r in caplog.records)
    keyring_of(settings)
    assert read_document(path).keys == [entry]


def test_a_configured_key_file_is_added_to_the_document(path: Path, tmp_path: Path) -> None:
    """``Settings(signing_key_file=FILE)`` works as ``signing_key``; a held key file beside the
    document is then not used, even when newer."""
    beside = forge.make_key(valid_from=datetime(2026, 1, 1, tzinfo=UTC))
    _held(path, beside)
    private = Ed25519PrivateKey.generate()
    key_file = tmp_path / "signing.pem"
    write_private(key_file, private)
    ring = keyring_of(Settings(keys_file=path, signing_key_file=key_file))
    assert [entry.keyid for entry in read_document(path).keys] == [beside.keyid, key_id(private.public_key())]
    assert ring.signing_key(datetime.now(UTC)).keyid == key_id(private.public_key())
    with pytest.raises(NoSigningKey):  # the key file beside the document is not this instance's
        ring.signing_key(datetime(2026, 6, 1, tzinfo=UTC))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"revoked": True, "revoked_at": datetime(2026, 6, 1, tzinfo=UTC)}, "signing_key_revoked"),
        ({"valid_until": datetime(2026, 6, 1, tzinfo=UTC)}, "signing_key_expired"),
        ({"valid_from": datetime(2099, 1, 1, tzinfo=UTC)}, "signing_key_expired"),
    ],
)
def test_a_configured_key_the_document_revoked_or_expired_stops_the_start(
    path: Path, change: dict[str, Any], reason: str
) -> None:
    """A configured key the document lists as revoked, or as not valid now, makes ``open_keyring``
    raise with ``signing_key_revoked`` / ``signing_key_expired`` (the service does not start), and
    the document is left as it was."""
    key = forge.make_key()
    key.entry = key.entry.model_copy(update=change)
    _held(path, key, held=())
    before = path.read_bytes()
    with pytest.raises(KeyDocumentError) as failure:
        keyring_of(Settings(keys_file=path, signing_key=SecretStr(private_pem(key.private).decode())))
    assert failure.value.reason == reason
    assert key.keyid in failure.value.message
    assert path.read_bytes() == before


def test_a_configured_key_that_is_no_private_key_is_private_key_invalid(tmp_path: Path) -> None:
    """A configured key that is not an unencrypted Ed25519 PKCS#8 PEM is ``private_key_invalid``;
    a configured key file that cannot be read is ``keys_unreadable``."""
    with pytest.raises(KeyDocumentError) as failure:
        configured_key(
            Settings(signing_key=SecretStr("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
        )
    assert failure.value.reason == "private_key_invalid"
    with pytest.raises(KeyDocumentError) as failure:
        configured_key(Settings(signing_key_file=tmp_path / "absent.pem"))
    assert failure.value.reason == "keys_unreadable"


# --- a corrupt document --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [b"not json", b'{"keys": {}}', b'{"keys": [{"keyid": "0123456789abcdef"}]}', b'{"keys": [], "extra": 1}'],
    ids=["not-json", "keys-not-a-list", "entry-incomplete", "extra-member"],
)
def test_a_corrupt_key_document_is_keys_invalid(path: Path, content: bytes) -> None:
    """A start on a document that is not a key document raises ``keys_invalid`` (and generates nothing)."""
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(KeyDocumentError) as failure:
        open_keyring(path)
    assert failure.value.reason == "keys_invalid"
    assert path.read_bytes() == content and pem_files(path) == []


def test_a_key_document_listing_one_key_twice_is_keys_invalid(path: Path) -> None:
    """One key id listed twice is ``keys_invalid``."""
    key = forge.make_key()
    path.parent.mkdir(parents=True)
    path.write_bytes(json.dumps({"keys": json.loads(forge.keys_document(key))["keys"] * 2}).encode())
    with pytest.raises(KeyDocumentError) as failure:
        read_document(path)
    assert failure.value.reason == "keys_invalid"


def test_a_running_ring_keeps_the_last_good_document_when_the_file_is_corrupted(
    path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A document corrupted while the ring runs is logged as an error and the last good one is
    kept (the key still signs); once repaired, changes are read again."""
    ring = open_keyring(path)
    keyid = ring.signing_key(datetime.now(UTC)).keyid
    good = path.read_bytes()
    caplog.set_level(logging.ERROR, logger="mcp_sonde.attest")
    path.write_bytes(b"{corrupt")
    ring.refresh()
    assert ring.signing_key(datetime.now(UTC)).keyid == keyid
    assert any("keys_invalid" in r.getMessage() for r in caplog.records)
    document = KeyDocument.model_validate_json(good)
    entry = document.keys[0].model_copy(update={"revoked": True, "revoked_at": utc_now()})
    write_document(path, KeyDocument(keys=[entry]))
    ring.refresh()
    with pytest.raises(NoSigningKey):
        ring.signing_key(datetime.now(UTC))


# --- the service ---------------------------------------------------------------------------------


def _check(base: str, url: str) -> httpx2.Response:
    return httpx2.post(f"{base}/v1/mcp/check", json={"url": url}, headers=FREE, timeout=30)


def _published(base: str) -> list[dict[str, Any]]:
    keys: list[dict[str, Any]] = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10).json()["keys"]
    return keys


def _assert_signing_key_unavailable(response: httpx2.Response) -> None:
    assert response.status_code == 503, response.text
    assert reason_of(response) == "signing_key_unavailable"
    assert "x-free-pool-remaining" not in response.headers
    assert "attestation" not in response.json()


def test_a_service_whose_only_key_was_revoked_answers_503_and_charges_nothing(
    service: Service, sdk_base: str, tmp_path: Path
) -> None:
    """Revoking the service's only key between checks: the next check answers 503
    ``signing_key_unavailable`` (problem details) and takes no free-pool draw; after ``keys new``
    (no restart) a check is served again, signed by the new key, and the free pool shows exactly
    one check more taken than before the refusal."""
    path = tmp_path / "keys" / "keys.json"
    url = f"{sdk_base}/stateless-json/mcp"
    with service(data_dir=tmp_path) as base:
        first = _check(base, url)
        assert first.status_code == 200, first.text
        remaining = int(first.headers["x-free-pool-remaining"])
        [entry] = _published(base)
        assert keys_cli(path, "revoke", entry["keyid"])[0] == 0
        wait_for(lambda: _published(base)[0]["revoked"], within_s=3.0)  # the ring has read it again
        _assert_signing_key_unavailable(_check(base, url))
        _assert_signing_key_unavailable(_check(base, url))
        ready = httpx2.get(f"{base}/readyz", timeout=10).json()
        assert (ready["status"], ready["signing"]) == ("degraded", {"ok": False, "keyid": None})
        code, out, _ = keys_cli(path, "new")
        assert code == 0
        new = out.split()[2]
        wait_for(lambda: len(_published(base)) == 2, within_s=3.0)
        again = _check(base, url)
        assert again.status_code == 200, again.text
        assert int(again.headers["x-free-pool-remaining"]) == remaining - 1
        assert again.json()["attestation"]["signatures"][0]["keyid"] == new
        keys = httpx2.get(f"{base}/.well-known/mcp-sonde-keys.json", timeout=10).content
    assert verify(again.content, parse_keys(keys)).result_checked
    with pytest.raises(VerificationFailed) as revoked:
        verify(first.content, parse_keys(keys))
    assert revoked.value.reason == "key_revoked"


def test_a_key_revoked_while_a_check_runs_answers_503_and_gives_the_draw_back(
    service: Service, raw: RawServer, tmp_path: Path
) -> None:
    """The only key revoked after the check passed its start-up test, while the server is being
    probed: the check answers 503 ``signing_key_unavailable`` when it comes to be signed, and its
    free-pool draw is given back (the next served check shows one check taken, not two)."""
    path = tmp_path / "keys" / "keys.json"
    mcp = MiniMcp(discover="modern")
    during: list[str] = []

    @raw.route("/mcp")
    def slow(request: Request, conn: socket.socket) -> bool | None:
        if request.message.get("method") == "tools/list" and during:
            keyring.revoke(path, during.pop())
            time.sleep(1.2)  # past the ring's look-again interval
        return mcp(request, conn)

    with service(data_dir=tmp_path) as base:
        first = _check(base, raw.url("/mcp"))
        assert first.status_code == 200, first.text
        remaining = int(first.headers["x-free-pool-remaining"])
        [entry] = _published(base)
        during.append(entry["keyid"])
        _assert_signing_key_unavailable(_check(base, raw.url("/mcp")))
        assert during == [] and read_document(path).keys[0].revoked  # revoked during that check
        assert len([r for r in raw.requests_to("/mcp") if r.message.get("method") == "tools/list"]) == 2
        assert keys_cli(path, "new")[0] == 0
        wait_for(lambda: len(_published(base)) == 2, within_s=3.0)
        again = _check(base, raw.url("/mcp"))
        assert again.status_code == 200, again.text
        assert int(again.headers["x-free-pool-remaining"]) == remaining - 1


def test_keys_list_of_a_missing_document_says_so_and_exits_4(tmp_path: Path) -> None:
    """A mistyped data directory must not look like an empty key ring."""
    code, out, err = keys_cli(tmp_path / "nowhere" / "keys.json", "list")
    assert (code, out) == (4, "") and "no key document at" in err


def test_regression_key_documents_the_service_choked_on_are_refused_with_a_reason(tmp_path: Path) -> None:
    """A naive time crashed serve (TypeError), an offset that leaves the years 1-9999 made the
    published document a 500 (OverflowError), a key id not its key's was signed with, a FIFO
    blocked the start for ever, and a valid_until in the past made a key that never signs."""
    import os

    good = keyring.generate(tmp_path / "ok" / "keys.json")
    entry = good.model_dump(mode="json")
    cases = {
        "naive": entry | {"valid_from": "2026-01-01T00:00:00"},
        "overflow": entry | {"valid_from": "0001-01-01T00:00:00+23:59"},
        "not its key": entry | {"keyid": "0" * 16},
    }
    for name, broken in cases.items():
        path = tmp_path / name / "keys.json"
        path.parent.mkdir()
        path.write_text(json.dumps({"keys": [broken]}))
        with pytest.raises(KeyDocumentError) as refused:
            read_document(path)
        assert refused.value.reason == "keys_invalid", name
    fifo = tmp_path / "fifo" / "keys.json"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(KeyDocumentError) as refused:
        read_document(fifo)
    assert refused.value.reason == "keys_unreadable"
    with pytest.raises(KeyDocumentError) as refused:
        keyring.generate(tmp_path / "ok" / "keys.json", valid_until=datetime(2020, 1, 1, tzinfo=UTC))
    assert refused.value.reason == "keys_invalid"


def test_regression_a_key_document_deleted_while_serving_keeps_the_last_one(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was published as {"keys": []} and every check refused; a corrupt one already kept the last."""
    monkeypatch.setattr(keyring, "RELOAD_S", 0.0)  # look at the file on every use
    ring = open_keyring(path)
    before = ring.document()
    assert before.keys
    path.unlink()
    assert ring.document() == before and ring.signing_key(datetime.now(UTC)).keyid == before.keys[0].keyid
