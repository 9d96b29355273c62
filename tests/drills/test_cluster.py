"""The cluster drill (``scripts/drill --quick``, :mod:`tests.drills.cluster`) as a test: compose.yaml's
topology as processes, under load and one fault at a time; nothing lost, duplicated, overdrawn or
badly signed. Marked ``soak`` (``scripts/test -m soak``); it needs root, Debian's nginx,
PostgreSQL 15's binaries and redis-server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.soak, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
LAST = re.compile(
    r"^cluster drill: requests=(?P<requests>\d+) 5xx=(?P<fivexx>\d+) pool_overdrawn=(?P<pool_overdrawn>\d+) "
    r"runs_lost=(?P<runs_lost>\d+) runs_duplicated=(?P<runs_duplicated>\d+) webhooks_lost=(?P<webhooks_lost>\d+) "
    r"webhooks_duplicated=(?P<webhooks_duplicated>\d+) bad_signatures=(?P<bad_signatures>\d+)$"
)
#: Fewest requests a quick drill sends through nginx (it sends a few thousand).
REQUESTS_FLOOR = 500


def test_the_quick_cluster_drill_loses_duplicates_overdraws_and_missigns_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
        pytest.skip("nginx is not installed (Debian's nginx package; .ci/run installs it)")
    if shutil.which("redis-server") is None or not Path("/usr/lib/postgresql/15/bin/pg_ctl").exists():
        pytest.skip("redis-server or PostgreSQL 15 is not installed")
    if os.geteuid() != 0:
        pytest.skip("the cluster drill runs nginx as root and PostgreSQL as postgres: needs root")
    done = subprocess.run([str(ROOT / "scripts" / "drill"), "--quick"], capture_output=True, text=True, timeout=840,
                          check=False, cwd=ROOT)  # fmt: skip
    with capsys.disabled():  # the drill's table shows in every run
        print("\n" + done.stdout[-6000:])
    lines = done.stdout.strip().splitlines()
    assert lines, done.stderr[-4000:]
    found = LAST.match(lines[-1])
    assert found is not None, (lines[-1], done.stderr[-4000:])
    figures = {name: int(value) for name, value in found.groupdict().items()}
    assert done.returncode == 0, (figures, done.stdout[-4000:], done.stderr[-4000:])
    for name in ("pool_overdrawn", "runs_lost", "runs_duplicated", "webhooks_lost", "webhooks_duplicated",
                 "bad_signatures"):  # fmt: skip
        assert figures[name] == 0, (name, figures)
    assert figures["requests"] > REQUESTS_FLOOR, figures
