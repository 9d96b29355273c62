"""``mcp-sonde optout add|remove|list`` as a process, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

from app.db import migrate


def optout(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    environment = os.environ | {"MCP_SONDE_DATABASE_URL": url}
    return subprocess.run(
        [sys.executable, "-m", "app", "optout", *args], capture_output=True, text=True, timeout=60, check=False,
        env=environment,
    )  # fmt: skip


def test_add_list_remove(database_url: str) -> None:
    unmigrated = optout(database_url, "list")
    assert unmigrated.returncode == 5 and "mcp-sonde db upgrade" in unmigrated.stderr
    asyncio.run(migrate.upgrade(database_url))
    added = optout(database_url, "add", "Example.COM")
    assert added.returncode == 0 and added.stdout == "added: host example.com\n"
    assert optout(database_url, "add", "example.com").stdout == "already listed: host example.com\n"
    assert (
        optout(database_url, "add", "https://other.test/mcp?key=s3cret").stdout == "added: url https://other.test/mcp\n"
    )
    listed = optout(database_url, "list")
    assert listed.returncode == 0
    assert [line.split("\t")[:2] for line in listed.stdout.splitlines()] == [
        ["host", "example.com"], ["url", "https://other.test/mcp"]]  # fmt: skip
    assert "s3cret" not in listed.stdout
    refused = optout(database_url, "add", "example.com/path")
    assert refused.returncode == 2 and "optout_invalid" in refused.stderr
    assert optout(database_url, "remove", "example.com").stdout == "removed\n"
    assert optout(database_url, "remove", "example.com").stdout == "not listed\n"
    assert optout(database_url, "list").stdout.count("\n") == 1
