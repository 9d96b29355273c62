"""The Dockerfile's shape, read with ``dockerfile-parse`` (no Docker engine runs the tests).

Two stages: a builder that installs ``requirements.lock`` with ``--require-hashes`` (wheels
only) and then the project without dependencies into one venv, and a runtime stage that copies
that venv alone, installs no compiler, keeps cairo and the DejaVu face for PNG badges, runs as
a non-root user and keeps the health check, entry point and command. ``.dockerignore`` lets
in exactly what the COPY lines name.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser

ROOT = Path(__file__).resolve().parent.parent
COMPILERS = {"gcc", "g++", "cc", "c++", "clang", "make", "build-essential", "cpp", "python3-dev"}


def stages() -> list[list[dict[str, Any]]]:
    """The Dockerfile's instructions, one list per ``FROM`` (comments left out)."""
    found: list[list[dict[str, Any]]] = []
    for instruction in DockerfileParser(str(ROOT / "Dockerfile")).structure:
        if instruction["instruction"] == "FROM":
            found.append([])
        if instruction["instruction"] != "COMMENT":
            found[-1].append(instruction)
    return found


def values(stage: list[dict[str, Any]], name: str) -> list[str]:
    return [instruction["value"] for instruction in stage if instruction["instruction"] == name]


def words(stage: list[dict[str, Any]]) -> list[str]:
    """Every word of the stage's RUN lines."""
    return [word for line in values(stage, "RUN") for word in shlex.split(line)]


@pytest.fixture(scope="module")
def builder() -> list[dict[str, Any]]:
    return stages()[0]


@pytest.fixture(scope="module")
def runtime() -> list[dict[str, Any]]:
    return stages()[-1]


def test_two_stages_on_the_slim_python_image() -> None:
    bases = [values(stage, "FROM")[0] for stage in stages()]
    assert bases == ["python:3.11-slim AS builder", "python:3.11-slim AS runtime"]


def test_builder_installs_the_lock_with_hashes_then_the_project_alone(builder: list[dict[str, Any]]) -> None:
    runs = values(builder, "RUN")
    locked = [line for line in runs if "-r requirements.lock" in line]
    assert len(locked) == 1 and "--require-hashes" in locked[0] and "--only-binary :all:" in locked[0]
    project = [line for line in runs if line.rstrip().endswith("install --no-deps .")]
    assert len(project) == 1 and runs.index(locked[0]) < runs.index(project[0])
    assert "requirements.lock ./" in values(builder, "COPY")


def test_runtime_copies_the_venv_alone_and_installs_no_compiler(runtime: list[dict[str, Any]]) -> None:
    assert values(runtime, "COPY") == ["--from=builder /opt/venv /opt/venv"]
    run = words(runtime)
    start = run.index("install")
    packages = {word for word in run[start + 1 : run.index("&&", start)] if not word.startswith("-")}
    assert packages == {"libcairo2", "fonts-dejavu-core"}
    assert COMPILERS.isdisjoint(run)
    assert not [word for word in run if word.endswith("-dev")]


def test_runtime_runs_as_a_system_user_with_health_check_and_entry_point(runtime: list[dict[str, Any]]) -> None:
    (user,) = values(runtime, "USER")
    assert user not in {"root", "0"} and not user.startswith(("root:", "0:"))
    run = words(runtime)
    created = run.index("useradd")
    assert user in run[created:]
    uid = run[run.index("--uid", created) + 1]
    assert int(uid) >= 1000
    (health,) = values(runtime, "HEALTHCHECK")
    assert "/readyz" in health  # (503 while it starts; 200 ready or degraded)
    assert "--start-period=60s" in health.split()
    assert [json.loads(v) for v in values(runtime, "ENTRYPOINT")] == [["mcp-sonde"]]
    assert [json.loads(v) for v in values(runtime, "CMD")] == [["serve"]]


def test_the_data_directory_is_the_user_s_own_and_a_volume(runtime: list[dict[str, Any]]) -> None:
    """The key document and a generated signing key live in the data directory: it must be
    writable by the service's user (or the first start fails) and outlive the container."""
    env = " ".join(values(runtime, "ENV"))
    assert "MCP_SONDE_DATA_DIR=/var/lib/mcp-sonde" in env.split()
    run = words(runtime)
    made = run.index("install")
    made = run.index("install", made + 1)  # (the first is apt-get's)
    assert run[made : made + 8] == ["install", "-d", "-o", "sonde", "-g", "sonde", "-m", "0700"]
    assert run[made + 8] == "/var/lib/mcp-sonde"
    assert [json.loads(v) for v in values(runtime, "VOLUME")] == [["/var/lib/mcp-sonde"]]
    (user,) = values(runtime, "USER")
    assert user == "sonde"


def test_dockerignore_lets_in_exactly_what_the_builder_copies(builder: list[dict[str, Any]]) -> None:
    lines = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()]
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert patterns[0] == "*"
    allowed = {pattern[1:].rstrip("/") for pattern in patterns if pattern.startswith("!")}
    copied = {source for value in values(builder, "COPY") for source in shlex.split(value)[:-1]}
    assert copied == allowed
    assert all((ROOT / source).exists() for source in copied)


def test_compose_runs_two_apis_behind_a_proxy_workers_a_scheduler_postgres_and_redis() -> None:
    import yaml

    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert {"proxy", "api-1", "api-2", "worker", "scheduler", "postgres", "redis", "migrate"} <= set(services)
    upstream = compose["configs"]["nginx"]["content"]
    assert "server api-1:8000 " in upstream and "server api-2:8000 " in upstream
    # a client's own X-Forwarded-For is replaced by the address nginx sees, never appended to
    assert "proxy_set_header X-Forwarded-For $$remote_addr;" in upstream and "proxy_add_x_forwarded_for" not in upstream
    # idempotent requests go to the other instance when one is down, restarting or starting
    assert "proxy_next_upstream error timeout http_502 http_503 http_504;" in upstream
    assert "non_idempotent" not in upstream  # (a POST may have been paid for: never sent twice)
    assert services["proxy"]["depends_on"] == {f"api-{n}": {"condition": "service_healthy"} for n in (1, 2)}
    assert "version" not in compose and compose["name"] == "mcp-sonde"  # (Compose v2: no version key)
    assert services["worker"]["command"] == ["worker"] and services["scheduler"]["command"] == ["scheduler"]
    for name in ("api-1", "api-2", "worker", "scheduler"):
        env = services[name]["environment"]
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert (
            env["MCP_SONDE_DATABASE_URL"].startswith("postgresql+asyncpg://")
            and "@postgres:5432/" in env["MCP_SONDE_DATABASE_URL"]
        )
        assert services[name]["volumes"] == ["sonde-data:/var/lib/mcp-sonde"]  # one signing key for all
        assert services[name]["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert "--appendonly" in services["redis"]["command"]  # queued jobs survive a restart
