"""The README and the docs name what the code has: the contract's paths, the packages of the
layers, the settings, the files of the repository, and links that lead somewhere."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.docs.blocks import ROOT, pages
from tests.test_layers import LAYERS

API_GUIDE = ROOT / "docs" / "api.md"
DEVELOPMENT = ROOT / "docs" / "development.md"

#: Variables named in the docs that are not settings: what the tests and their tools read.
NOT_SETTINGS = {
    "MCP_SONDE_TEST_REDIS_URL": "tests/servers/redis_server.py",
    "MCP_SONDE_TEST_POSTGRES_URL": "tests/history/conftest.py",
    "MCP_SONDE_TEST_WORKERS": "scripts/test",
    "MCP_SONDE_CHROMIUM": "tests/http/pages/browser.py",
    "MCP_SONDE_ARTEFACTS_DIR": "tests/http/pages/browser.py",
    "MCP_SONDE_SOAK_S": "tests/drills/test_soak.py",
}


def _texts() -> dict[str, str]:
    return {page: (ROOT / page).read_text("utf-8") for page in pages()}


def _contract_paths() -> list[str]:
    document = yaml.safe_load((ROOT / "openapi.yaml").read_text("utf-8"))
    return list(document["paths"])


def test_the_api_guide_names_every_path_of_the_contract() -> None:
    guide = API_GUIDE.read_text("utf-8")
    assert [path for path in _contract_paths() if path not in guide] == []


def test_every_v1_path_of_the_api_guide_is_in_the_contract() -> None:
    patterns = [re.compile(re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path))) for path in _contract_paths()]
    named = {match.rstrip(".,:;/") for match in re.findall(r"/v1/[A-Za-z0-9_{}$./-]*", API_GUIDE.read_text("utf-8"))}
    assert named, "the guide names no /v1/ path"
    unknown = sorted(path for path in named if not any(pattern.fullmatch(path) for pattern in patterns))
    assert unknown == []


def _layout_rows() -> list[tuple[int, str, str]]:
    text = DEVELOPMENT.read_text("utf-8")
    table = text.split("<!-- layout:start -->", 1)[1].split("<!-- layout:end -->", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `([a-z_]+)` \| (.*) \|$", table, flags=re.MULTILINE)
    return [(int(layer), package, what) for layer, package, what in rows]


def test_the_layout_lists_every_package_of_the_layers_once_in_their_order() -> None:
    expected = [(index, package) for index, (_, packages) in enumerate(LAYERS) for package in packages]
    assert [(layer, package) for layer, package, _ in _layout_rows()] == expected


def test_the_layout_names_only_files_its_packages_have() -> None:
    """Each row starts with the package's own path, then names modules of that package."""
    missing = []
    for _, package, what in _layout_rows():
        home = ROOT / "badges" if package == "badges" else ROOT / "app" / package
        own = "badges/" if package == "badges" else f"app/{package}/" if home.is_dir() else f"app/{package}.py"
        assert what.startswith(f"`{own}`: "), (package, what[:40])
        if not home.is_dir():
            continue
        for name in re.findall(r"`([A-Za-z0-9_]+(?:\.(?:py|yaml)|/))`", what.removeprefix(f"`{own}`")):
            if not (home / name).exists():
                missing.append(f"{package}: {name}")
    assert missing == []


def test_every_setting_the_docs_name_is_a_setting() -> None:
    from app.settings import Settings

    settings = {f"MCP_SONDE_{name.upper()}" for name in Settings.model_fields}
    unknown = {
        f"{page}: {name}"
        for page, text in _texts().items()
        for name in re.findall(r"\bMCP_SONDE_[A-Z0-9_]+\b", text)
        if name not in settings and name not in NOT_SETTINGS
    }
    assert unknown == set()
    for name, where in NOT_SETTINGS.items():
        assert name in (ROOT / where).read_text("utf-8"), f"{where} no longer reads {name}"


#: Backticked repository paths: a top-level folder, then a path without placeholders.
REPO_PATH = re.compile(r"`((?:app|badges|tests|bench|scripts|tools|docs)/[A-Za-z0-9_./-]*)`")
#: MCP methods, which read like paths under tools/.
MCP_METHODS = {"tools/list", "tools/call"}


#: Paths the docs name that a run makes, not the repository (each listed in .gitignore).
MADE_BY_RUNS = frozenset({"tests/artefacts/"})


def test_every_file_the_docs_name_is_there() -> None:
    ignored = (ROOT / ".gitignore").read_text("utf-8").split()
    assert all(path in ignored for path in MADE_BY_RUNS)
    missing = {
        f"{page}: {path}"
        for page, text in _texts().items()
        for path in REPO_PATH.findall(text)
        if path not in MCP_METHODS and path not in MADE_BY_RUNS and not (ROOT / path.rstrip("/")).exists()
    }
    assert missing == set()


def _anchors(text: str) -> set[str]:
    """The heading anchors of a page, as MkDocs (and GitHub, for these headings) write them."""
    anchors = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE):
        slug = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
        anchors.add(re.sub(r"[\s]+", "-", slug))
    return anchors


def test_the_readme_s_links_lead_to_pages_and_headings_that_are_there() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    links = re.findall(r"\]\(((?:docs/)[^)#\s]*)(?:#([^)\s]+))?\)", readme)
    assert links
    for target, anchor in links:
        path = ROOT / target
        assert path.exists(), target
        if anchor:
            assert anchor in _anchors(path.read_text("utf-8")), f"{target}#{anchor}"


def test_the_readme_is_the_front_door_only() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 250
    assert "<!-- reasons:start -->" not in readme  # the reason table lives in docs/checks.md
    assert "| variable | default |" not in readme  # and the settings in docs/settings.md


@pytest.mark.parametrize("page", sorted(path.name for path in (ROOT / "docs").glob("*.md")))
def test_the_navigation_holds_every_page(page: str) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    assert page in repr(config["nav"])
