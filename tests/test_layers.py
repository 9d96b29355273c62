"""The packages' layers: every import goes down, never up or sideways, so no two packages import each other.

The graph is built from the source with :mod:`ast`: every ``import`` and ``from ... import`` of
an ``app`` module, at the top of a module, inside a function or under ``TYPE_CHECKING`` alike,
is an edge from the importing package to the imported one (a module directly under ``app/`` is
a package of its own; ``badges`` is the badge renderer beside ``app``). :data:`LAYERS` lists the
packages bottom up; a package may import packages of lower layers only. Run with ``-s`` to see
the layers and their sizes.
"""

from __future__ import annotations

import ast
import collections
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The layers, bottom up: (what the layer is, its packages).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the roots: the error hierarchy, stopping background tasks", ("errors", "background")),
    ("foundation", ("settings", "logs", "jsonsafe", "textruns", "filelock", "store", "badges")),
    (
        "canonical form, target guard, database, payments, the dev chain",
        ("canonical", "guard", "db", "payment", "devchain"),
    ),
    ("guarded HTTP client, schema drift, opt-out list", ("net", "drift", "optout")),
    ("the probe, the history", ("probe", "history")),
    ("the check suite, statistics", ("suite", "stats")),
    ("signing, baselines, the directory, the job queue", ("attest", "baselines", "directory", "queue")),
    ("webhooks, sweeps, owner claims", ("webhooks", "sweeps", "claims")),
    ("monitors, the registry mirror", ("monitors", "registry")),
    ("the check core", ("checking",)),
    ("scheduled jobs, the HTTP layer", ("jobs", "http")),
    ("the command line", ("cli",)),
    ("entry points", ("__init__", "__main__")),
)


def _package(parts: tuple[str, ...]) -> str:
    """The package of a module path under the repository (``app/probe/runner.py`` -> ``probe``)."""
    if parts[0] == "badges":
        return "badges"
    return parts[1].removesuffix(".py")


def _module(path: Path) -> str:
    relative = path.relative_to(ROOT).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - node.level + 1]
            stem = ".".join([*base, node.module] if node.module else base)
        else:
            stem = node.module or ""
        # ``from app import jsonsafe`` imports the module app.jsonsafe
        return [stem, *(f"{stem}.{alias.name}" for alias in node.names)]
    return []


def _package_of_name(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "badges":
        return "badges"
    if parts[0] != "app" or len(parts) < 2:
        return None
    return parts[1]


def _packages() -> set[str]:
    """The packages of ``app/`` (and its modules, each a package of its own), and ``badges``."""
    app = ROOT / "app"
    names = {path.name for path in app.iterdir() if (path / "__init__.py").is_file()}
    return names | {path.stem for path in app.glob("*.py")} | {"badges"}


def import_graph() -> dict[str, dict[str, list[str]]]:
    """``{package: {imported package: [importing module, ...]}}`` of the whole tree."""
    known = _packages()
    graph: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    files = [*(ROOT / "app").rglob("*.py"), *(ROOT / "badges").rglob("*.py")]
    for path in files:
        parts = path.relative_to(ROOT).parts
        source = _package(parts) if len(parts) > 1 else parts[0]
        module = _module(path)
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            for name in _imported(node, module, path.name == "__init__.py"):
                target = _package_of_name(name)
                if target is None or target == source or target not in known:
                    continue
                graph[source][target].append(module)
    return graph


def _layer_of() -> dict[str, int]:
    return {package: index for index, (_, packages) in enumerate(LAYERS) for package in packages}


def test_every_package_has_a_layer() -> None:
    placed = set(_layer_of())
    assert _packages() - placed == set(), "a package of app/ is in no layer of LAYERS"
    assert placed - _packages() == set(), "LAYERS names a package that is not there"


def test_imports_go_down_only() -> None:
    layer = _layer_of()
    wrong = []
    for source, targets in sorted(import_graph().items()):
        for target, modules in sorted(targets.items()):
            if layer[target] >= layer[source]:
                wrong.append(
                    f"{source} (layer {layer[source]}) imports {target} (layer {layer[target]}) in {modules[0]}"
                )
    assert wrong == []


def test_no_cycle_between_packages() -> None:
    graph = {source: set(targets) for source, targets in import_graph().items()}
    visiting: list[str] = []
    done: set[str] = set()

    def visit(package: str) -> None:
        assert package not in visiting, f"import cycle: {' -> '.join([*visiting[visiting.index(package) :], package])}"
        if package in done:
            return
        visiting.append(package)
        for target in sorted(graph.get(package, ())):
            visit(target)
        visiting.pop()
        done.add(package)

    for package in sorted(graph):
        visit(package)


def _lines(package: str) -> int:
    base = ROOT / "badges" if package == "badges" else ROOT / "app"
    tree = base if package == "badges" else base / package
    paths = list(tree.rglob("*.py")) if tree.is_dir() else [base / f"{package}.py"]
    return sum(len(path.read_text("utf-8").splitlines()) for path in paths)


def test_the_layers_printed() -> None:
    """Prints the layers, top down, with each package's lines and what it imports."""
    graph = import_graph()
    for index, (what, packages) in reversed(list(enumerate(LAYERS))):
        print(f"layer {index}: {what}")
        for package in packages:
            uses = ", ".join(sorted(graph.get(package, {}))) or "-"
            print(f"    {package:<10} {_lines(package):>6} lines   imports: {uses}")
    assert sum(_lines(package) for _, packages in LAYERS for package in packages) > 0
