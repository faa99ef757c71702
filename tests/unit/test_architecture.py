"""The layout's rules, checked on the source: no module imports another package's private
names, no import cycle between shortlink's modules nor between its packages, benchmarks never
import the tests, SQL runs only in the storage layer, the web doors reach storage only through the
application layer and take only schema from the domain packages, and the storage layer needs no
`type: ignore` for the differences between its two backends."""

from __future__ import annotations

import ast
import enum
import importlib
import itertools
import re
import types
from functools import cache
from pathlib import Path

import msgspec

from tests.support import paths

ROOT = paths.REPO
PACKAGE = ROOT / "shortlink"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache  # parsed once for the tests below (a second each)
def sources(*folders: str) -> dict[str, ast.Module]:
    return {
        module_name(path): ast.parse(path.read_text(encoding="utf-8"), str(path))
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
    }


@cache
def runtime_imports(tree: ast.Module) -> list[ast.ImportFrom | ast.Import]:
    """Every import that runs when the module is imported or called: those under
    `if TYPE_CHECKING:` only name types."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    return [
        node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped
    ]


def package_of(module: str) -> str:
    """shortlink.storage.links → shortlink.storage; a top-level module is its own package."""
    parts = module.split(".")
    return ".".join(parts[:2])


def test_no_private_name_is_imported_across_packages():
    crossings = []
    for module, tree in sources("shortlink", "tests", "bench", "throwaway").items():
        for node in runtime_imports(tree):
            if not isinstance(node, ast.ImportFrom) or node.module is None or not node.module.startswith("shortlink"):
                continue
            for alias in node.names:
                if alias.name.startswith("_") and package_of(node.module) != package_of(module):
                    crossings.append(f"{module}: from {node.module} import {alias.name}")
    assert crossings == [], crossings


def test_benchmarks_never_import_the_tests():
    imports = [
        f"{module}: {ast.unparse(node)}"
        for module, tree in sources("bench").items()
        for node in runtime_imports(tree)
        if any(name.startswith("tests") for name in imported_modules(node))
    ]
    assert imports == [], imports


def imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.module is None:
        return []
    # `from shortlink.storage import links` imports the module shortlink.storage.links.
    return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]


def cycles_in(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle for each edge that closes one in a depth-first walk (none: the graph has none)."""
    cycles = []
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target, [*path, target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return cycles


def test_shortlink_modules_import_each_other_without_a_cycle():
    trees = sources("shortlink")
    graph = {
        module: {
            name
            for node in runtime_imports(tree)
            for name in imported_modules(node)
            if name in trees and name != module and not module.startswith(f"{name}.")
        }
        for module, tree in trees.items()
    }
    cycles = [" → ".join(cycle) for cycle in cycles_in(graph)]
    assert cycles == [], cycles


def test_shortlink_packages_import_each_other_without_a_cycle():
    """A package (shortlink.X for a folder, the top-level module itself otherwise) that imports
    one which imports it back cannot be understood, tested or moved without the other."""
    trees = sources("shortlink")
    reasons: dict[str, dict[str, str]] = {package_of(module): {} for module in trees}
    for module, tree in trees.items():
        for node in runtime_imports(tree):
            for name in imported_modules(node):
                if name in trees and package_of(name) != package_of(module):
                    reasons[package_of(module)].setdefault(package_of(name), f"{module} imports {name}")
    cycles = [
        " → ".join(cycle) + " (" + "; ".join(reasons[a][b] for a, b in itertools.pairwise(cycle)) + ")"
        for cycle in cycles_in({package: set(targets) for package, targets in reasons.items()})
    ]
    for cycle in cycles:
        print(cycle)
    assert cycles == [], cycles


TRANSPORT = ("shortlink/web", "shortlink/dashboard", "shortlink/mcp")
DOMAIN_PACKAGES = {
    f"shortlink.{name}"
    for name in [
        "links",
        "accounts",
        "bio",
        "analytics",
        "visits",
        "link_rules",
        "applinks",
        "webhooks",
        "imports",
        "fetcher",
        "domains",
    ]
}


def is_schema(module: str, name: str) -> bool:
    """A schema module's name, or a value rather than behaviour: a Struct, an enum, an
    exception or a constant. A function or a whole module is a rule to call through the
    application layer."""
    if module.rsplit(".", 1)[-1] == "schema":
        return True
    if f"{module}.{name}" in sources("shortlink"):  # `from shortlink.visits import respond`
        return name == "schema"
    value = getattr(importlib.import_module(module), name)
    if isinstance(value, type):
        return issubclass(value, msgspec.Struct | enum.Enum | BaseException)
    return not callable(value) and not isinstance(value, types.ModuleType)


def test_transport_takes_only_schema_from_the_domain_packages():
    """Transport calls the application layer; from the domain packages it takes only what
    describes a request or an answer."""
    taken = []
    for module, tree in sources(*TRANSPORT).items():
        for node in runtime_imports(tree):
            if isinstance(node, ast.Import):
                names = [(alias.name, None) for alias in node.names]
            else:
                names = [(node.module or "", alias.name) for alias in node.names]
            for source, name in names:
                if package_of(source) not in DOMAIN_PACKAGES:
                    continue
                if name is None or not is_schema(source, name):
                    taken.append(f"{module}: {source} {name or ''}".strip())
    assert taken == [], taken


def test_storage_needs_no_type_ignore():
    ignores = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((PACKAGE / "storage").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore" in line
    ]
    assert ignores == []


def test_sql_runs_only_in_storage():
    """No `execute(...)` with a statement outside shortlink/storage/ (Redis's `pipe.execute()`
    takes none)."""
    calls = [
        f"{module}:{node.lineno}"
        for module, tree in sources("shortlink").items()
        if not module.startswith("shortlink.storage")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("execute", "executemany", "executescript")
        and node.args
    ]
    assert calls == [], calls


def test_the_doors_reach_storage_through_the_application_layer():
    reaching = [
        f"{module}: {ast.unparse(node)}"
        for module, tree in sources("shortlink/web", "shortlink/dashboard", "shortlink/mcp").items()
        for node in runtime_imports(tree)
        if any(name.startswith("shortlink.storage") for name in imported_modules(node))
    ]
    assert reaching == [], reaching


WAIT_HELPERS = {"tests/support/helpers.py", "tests/support/browser.py"}
# A sleep of a fixed time, a page's fixed wait, or a loop of one's own against a clock.
FIXED_WAIT = re.compile(r"time\.sleep\(|asyncio\.sleep\((?!0\))|\.wait_for_timeout\(|[<>] *deadline\b")
PAUSE = "not a wait"


def test_tests_wait_for_conditions_through_one_helper():
    """Every test waits for a condition through `wait_for` (or its async and page forms): a fixed
    sleep is either too short under load or time lost. A pause that no condition can replace (a
    slow receiver, giving what must not happen its time) says so on its line."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in WAIT_HELPERS:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if FIXED_WAIT.search(line) and PAUSE not in line:
                found.append(f"{name}:{number}: {line.strip()}")
    assert found == [], found
