"""Every code block a reader of the README or the docs is told to paste is run, or says why not.

The static tests hold every page to the marker convention (``tests/docs/blocks.py``); the
session tests run the README's quickstart end to end and then every ``<!-- run -->`` block of
the docs, in one bash session in a copy of the working tree, whose ``.venv`` is a link to this
checkout's virtualenv instead of the README's install block (``tests/docs/session.py`` says
exactly what is real and what is substituted). The session takes about 40 s on 2 idle cores.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.docs.blocks import ROOT, RUNNABLE, all_blocks, blocks, pages, stray_markers
from tests.docs.session import Session, ordered_run_blocks, run_session

SESSION_TIMEOUT = pytest.mark.timeout(400)


def test_every_block_names_its_language_and_each_runnable_one_its_marker() -> None:
    unnamed = [block.where for block in all_blocks() if not block.language]
    assert unnamed == [], "a fenced block without a language (write text for output)"
    unmarked = [block.where for block in all_blocks() if block.language in RUNNABLE and block.marker is None]
    assert unmarked == [], "a block a reader runs, with neither <!-- run --> nor <!-- not run: why -->"


def test_markers_stand_above_blocks_only() -> None:
    stray = {page: lines for page in pages() if (lines := stray_markers(page))}
    assert stray == {}


def test_run_elsewhere_names_a_test_that_is_there() -> None:
    for block in all_blocks():
        if block.kind == "elsewhere":
            assert block.marker is not None
            path = block.marker.removeprefix("run elsewhere: ").split(" ", 1)[0]
            assert path.startswith("tests/") and (ROOT / path).is_file(), (block.where, path)


def test_the_install_and_stop_blocks_are_the_readme_s_only() -> None:
    special = [(block.page, block.kind) for block in all_blocks() if block.kind in ("install", "stop")]
    assert special == [("README.md", "install"), ("README.md", "stop")]


def test_the_install_block_is_the_bare_install_ci_makes() -> None:
    """The one block the session does not run: the README's install, from the runtime lock with
    hashes, then the project without dependencies, as ``.ci/run`` installs a bare venv and starts
    the service from it (wheels only there, and not editable)."""
    (install,) = [block for block in blocks("README.md") if block.kind == "install"]
    assert install.code.splitlines() == [
        "python3 -m venv .venv && .venv/bin/pip install --require-hashes -r requirements.lock",
        ".venv/bin/pip install --no-deps -e .",
    ]
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "--require-hashes --only-binary :all: -r requirements.lock" in ci
    assert "--no-deps ." in ci


def test_the_fixture_servers_need_only_the_runtime_lock() -> None:
    """The quickstart starts ``tests/servers/sdk_apps.py`` with what the runtime lock installs."""
    tree = ast.parse((ROOT / "tests" / "servers" / "sdk_apps.py").read_text("utf-8"))
    modules = {"uvicorn"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    distributions = importlib.metadata.packages_distributions()
    third_party = {module for module in modules if module in distributions and module not in ("tests", "app")}
    locked = {
        re.sub(r"[-_.]+", "-", line.split("==", 1)[0]).lower()
        for line in (ROOT / "requirements.lock").read_text("utf-8").splitlines()
        if "==" in line and not line.startswith((" ", "#"))
    }
    for module in third_party:
        names = {re.sub(r"[-_.]+", "-", name).lower() for name in distributions[module]}
        assert names & locked, f"{module} ({names}) is not in requirements.lock"


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    ran, holder = run_session()
    try:
        yield ran
    finally:
        holder.cleanup()


@SESSION_TIMEOUT
def test_the_readme_quickstart_runs_end_to_end(session: Session) -> None:
    readme = [i for i, block in enumerate(session.blocks) if block.page == "README.md"]
    assert len(readme) >= 6
    assert not session.timed_out, session.report()
    assert [session.state(i) for i in readme] == ["ok"] * len(readme), session.report()
    assert session.returncode == 0, session.report()
    print(f"\ndocs session: {len(session.blocks)} blocks in {session.seconds:.1f} s\n{session.timings()}")  # noqa: T201
    outputs = "".join(session.output_of(i) for i in readme)
    assert "status     ok (ok)" in outputs  # mcp-sonde check
    assert re.search(r"(?im)^x-badge-state: ok\r?$", outputs), outputs  # the badge
    assert "VERIFIED: signed by key" in outputs  # mcp-sonde verify
    answer = json.loads((session.workdir / "answer.json").read_text("utf-8"))
    assert (answer["status"], answer["reason"]) == ("ok", "ok")
    assert {check["state"] for check in answer["checks"]} <= {"verified", "unverified"}
    assert answer["attestation_id"] and answer["attestation"]["payloadType"] == "application/vnd.in-toto+json"
    assert (session.workdir / "badge.svg").read_text("utf-8").startswith("<svg")


@SESSION_TIMEOUT
def test_the_quickstart_stops_what_it_started(session: Session) -> None:
    """The README's own stop block ends both servers: nothing of the session outlives it."""
    assert session.returncode == 0, session.report()
    assert session.leftover == []


@SESSION_TIMEOUT
def test_every_run_block_of_the_docs_runs(session: Session) -> None:
    docs = [i for i, block in enumerate(session.blocks) if block.page != "README.md"]
    assert docs, "no page of the docs has a run block"
    failed = [(session.blocks[i].where, session.state(i)) for i in docs if session.state(i) != "ok"]
    assert failed == [], session.report()


@SESSION_TIMEOUT
def test_the_docs_blocks_say_what_the_pages_say(session: Session) -> None:
    """A few answers the pages quote, as the session got them."""
    by_page: dict[str, str] = {}
    for index, block in enumerate(session.blocks):
        by_page[block.page] = by_page.get(block.page, "") + session.output_of(index)
    api = by_page["docs/api.md"]
    assert '"reason":"address_not_public"' in api
    assert '"verdict":"breaking"' in api and '"rule":"maximum_lowered"' in api
    assert '{"x402Version":2,"resources":[]}' in api
    assert '"reason":"admin_disabled"' in api
    assert '"reason":"payments_not_configured"' in by_page["docs/monitors.md"]
    assert '"host_proof"' in by_page["docs/monitors.md"]
    baselined = [b for b in session.blocks if "baseline-check.json" in b.code]
    assert baselined, "the baseline example moved"
    assert "added: host example.com" in by_page["docs/operations.md"]
    assert (session.workdir / "history-backup.sqlite3").stat().st_size > 0
    assert (session.workdir / "check.json").is_file()


def test_the_session_runs_the_readme_first_and_stops_last() -> None:
    ordered = ordered_run_blocks()
    assert ordered[0].page == "README.md" and ordered[-1].kind == "stop"
    assert all(block.kind == "run" for block in ordered[:-1])
    assert Path(ordered[-1].page).name == "README.md"
