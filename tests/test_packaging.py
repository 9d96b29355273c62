"""What the package ships and says about itself: one version, typed packages, data, licence, locks.

The lock files are ``scripts/lock``'s output (``uv pip compile --generate-hashes``): every
pin of ``pyproject.toml`` must be in them at the same version, so a pin changed without
re-locking fails here rather than in an install that quietly takes the old version.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import app
from tests.conftest import Service

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: What a wheel is built from (the Dockerfile copies the same).
SOURCES = ("pyproject.toml", "README.md", "LICENSE", "app", "badges")
LOCK_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


def pins(requirements: list[str]) -> dict[str, str]:
    """``name -> version`` of each ``==`` pin (the project's own extras are not pins)."""
    found: dict[str, str] = {}
    for text in requirements:
        requirement = Requirement(text)
        specifiers = list(requirement.specifier)
        if canonicalize_name(requirement.name) == "mcp-sonde":
            continue
        assert len(specifiers) == 1 and specifiers[0].operator == "==", f"not an exact pin: {text}"
        found[canonicalize_name(requirement.name)] = specifiers[0].version
    return found


def locked(path: Path) -> dict[str, set[str]]:
    """``name -> versions`` in a lock file; each entry must carry at least one sha256 hash."""
    entries: dict[str, set[str]] = {}
    blocks = re.split(r"\n(?=[A-Za-z0-9])", path.read_text())
    for block in blocks:
        match = LOCK_LINE.match(block)
        if match is None:
            continue
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", block), f"{path.name}: no hash for {match.group(1)}"
        entries.setdefault(canonicalize_name(match.group(1)), set()).add(match.group(2))
    return entries


def test_one_version_in_metadata_cli_and_served_openapi(service: Service, tmp_path: Path) -> None:
    stale = yaml.safe_load((ROOT / "app/http/openapi.yaml").read_text())
    stale["info"]["version"] = "0.0.0-stale"
    path = tmp_path / "openapi.yaml"
    path.write_text(yaml.safe_dump(stale))
    with service(openapi_path=str(path)) as base:
        served = httpx2.get(f"{base}/openapi.json").json()["info"]["version"]
    cli = subprocess.run([sys.executable, "-m", "app", "--version"], capture_output=True, text=True, check=True)
    metadata = importlib.metadata.version("mcp-sonde")
    assert (served, cli.stdout.strip(), metadata) == (app.__version__, f"mcp-sonde {app.__version__}", app.__version__)


def test_version_is_read_from_the_package_by_setuptools() -> None:
    assert "version" not in PYPROJECT["project"]
    assert PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "app.__version__"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[zipfile.ZipFile]:
    """The wheel built from a copy of the sources, offline (the build backend comes from the test extras)."""
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(origin, source / name)
    out = tmp_path_factory.mktemp("wheel")
    # The PEP 517 hook that pip calls, called directly: pip's own start-up would triple the time.
    backend = PYPROJECT["build-system"]["build-backend"]
    hook = f"import sys, {backend} as backend; backend.build_wheel(sys.argv[1])"
    built = subprocess.run([sys.executable, "-c", hook, str(out)], cwd=source, capture_output=True, timeout=110)
    assert built.returncode == 0, built.stderr.decode(errors="replace")[-4000:]
    (path,) = out.glob("mcp_sonde-*.whl")
    with zipfile.ZipFile(path) as wheel:
        yield wheel


def test_wheel_ships_every_file_of_the_packages(wheel: zipfile.ZipFile) -> None:
    shipped = set(wheel.namelist())
    wanted = {
        path.relative_to(ROOT).as_posix()
        for package in ("app", "badges")
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {"app/py.typed", "badges/py.typed", "badges/data/verdana-11px-normal.json"} <= wanted
    assert {
        "app/http/pages/templates/base.html",
        "app/http/pages/static/site.css",
        "app/http/pages/explanations.yaml",
    } <= wanted
    assert sorted(wanted - shipped) == []


def test_wheel_metadata_has_the_version_and_the_licence_expression(wheel: zipfile.ZipFile) -> None:
    info = f"mcp_sonde-{app.__version__}.dist-info"
    headers = wheel.read(f"{info}/METADATA").decode().split("\n\n", 1)[0]  # the README follows
    assert re.search(rf"^Version: {re.escape(app.__version__)}$", headers, flags=re.MULTILINE)
    assert re.search(r"^License-Expression: MIT$", headers, flags=re.MULTILINE)
    assert not re.search(r"^(License:|Classifier: License ::)", headers, flags=re.MULTILINE)
    assert wheel.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert b"2026 The mcp-sonde authors" in (ROOT / "LICENSE").read_bytes()


def test_lock_files_hold_every_pin_at_its_version() -> None:
    project = PYPROJECT["project"]
    runtime = pins(project["dependencies"])
    extras = {name: pins(requirements) for name, requirements in project["optional-dependencies"].items()}
    lock, dev_lock = locked(ROOT / "requirements.lock"), locked(ROOT / "requirements-dev.lock")
    expected = [("requirements.lock", name, version) for name, version in runtime.items()]
    for extra in ("test", "dev"):
        for name, version in (runtime | extras[extra]).items():
            expected.append(("requirements-dev.lock", name, version))
    files = {"requirements.lock": lock, "requirements-dev.lock": dev_lock}
    wrong = [(file, name, version, files[file].get(name)) for file, name, version in expected]
    assert [row for row in wrong if row[3] != {row[2]}] == []
    assert set(extras["otel"].items()) <= set(extras["test"].items())  # so the dev lock has them too
    assert set(extras["dev-chain"].items()) <= set(extras["test"].items())
