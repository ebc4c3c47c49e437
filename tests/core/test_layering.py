"""The package's floor plan, pinned: no module imports a module of a higher floor, rooms that
share a floor do not import each other, and no import circle between modules (at import time) or
between rooms (the top-level packages and modules). The floors are those of ARCHITECTURE.md's
table, read from it, so the page and the check cannot disagree.

An import is any ``import``/``from ... import`` in a module — at its top or inside a function (a
function-level import is a dependency all the same; it only runs later) — plus the names a
package re-exports lazily (the ``_EXPORTS`` table of ``lazy_exports``) and the tool modules named
by the tool registry (``TOOLS``). Imports under ``if TYPE_CHECKING:`` never run: they are not
counted (annotations may name a higher floor's types, e.g. a tool's ``Workspace``).

Run as a script (``python tests/core/test_layering.py [PACKAGE_DIR]``) it prints the figures:
upward imports, circles, lines per room (a tree from before a move is measured with today's
floors; a module that has no floor in them is placed where it lives now).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from ..helpers import architecture_floors
else:  # run as a script
    sys.path.insert(0, str(Path(__file__).parents[2]))
    from tests.helpers import architecture_floors

REPO = Path(__file__).parents[2]
PACKAGE = REPO / "ws_jupyter"


def floor_plan(repo: Path = REPO) -> list[tuple[str, ...]]:
    """The floors of ARCHITECTURE.md, lowest first, as module prefixes (``text/`` ->
    ``ws_jupyter.text``). The face (``ws_jupyter/__init__.py``, lazy re-exports of every floor) is
    placed just under the top floor, the only one that uses it."""
    floors = [
        tuple("ws_jupyter." + room.rstrip("/").removesuffix(".py") for room in rooms)
        for rooms in architecture_floors(repo)
    ]
    return [*floors[:-1], ("ws_jupyter",), floors[-1]]


FLOORS = floor_plan()


@dataclass(frozen=True)
class Allowed:
    importers: frozenset[str]
    imported: str  # a module, or a package and everything in it
    reason: str

    def covers(self, importer: str, imported: str) -> bool:
        return importer in self.importers and (
            imported == self.imported or imported.startswith(self.imported + ".")
        )


#: The exceptions to "no import from a higher floor" (at most two), each with its reason.
ALLOWED = (
    Allowed(
        frozenset({"ws_jupyter"}),
        "ws_jupyter.jupyter.extension",
        "IPython looks for load_ipython_extension/unload_ipython_extension on the package itself "
        "(%load_ext ws_jupyter): the package face hands over to the Jupyter layer there",
    ),
    Allowed(
        frozenset({"ws_jupyter.tools"}),
        "ws_jupyter.adapters",
        "the adapters' names exported by ws_jupyter.tools (to_openai, serve_mcp...) since before the "
        "adapters had their own floor: lazy re-exports, loaded only when asked for",
    ),
)


@dataclass(frozen=True)
class Edge:
    importer: str
    imported: str
    line: int
    module_level: bool  # runs when the importer is imported (not inside a function)

    def __str__(self) -> str:
        where = "" if self.module_level else " (in a function)"
        return f"{self.importer} -> {self.imported} (line {self.line}){where}"


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    if not level:
        return name or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def _known(target: str, mods: dict[str, Path]) -> str | None:
    while target and target not in mods:
        target = target.rpartition(".")[0]
    return target or None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST) -> Iterator[tuple[ast.AST, bool]]:
    """Every node with whether it runs at import time, skipping ``if TYPE_CHECKING:`` bodies."""

    def walk(node: ast.AST, top: bool) -> Iterator[tuple[ast.AST, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for other in child.orelse:
                    yield other, top
                    yield from walk(other, top)
                continue
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield child, inner
            yield from walk(child, inner)

    yield from walk(tree, True)


def edges(root: Path = PACKAGE) -> tuple[list[Edge], list[Edge]]:
    """``(runtime edges, type-only edges)`` between the modules of the package at ``root``."""
    mods = modules(root)
    runtime: list[Edge] = []
    typing_only: list[Edge] = []
    for module, path in mods.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), str(path))
        seen_runtime: set[int] = set()

        for node, top in _nodes(tree):
            seen_runtime.add(id(node))
            targets = _targets(node, module, is_package, mods)
            runtime += _edges_to(module, targets, getattr(node, "lineno", 0), top, mods, root.name)
        for node in ast.walk(tree):
            if id(node) not in seen_runtime and isinstance(node, (ast.Import, ast.ImportFrom)):
                targets = _targets(node, module, is_package, mods)
                typing_only += _edges_to(module, targets, node.lineno, True, mods, root.name)
    return runtime, typing_only


def _edges_to(
    module: str, targets: list[str], line: int, top: bool, mods: dict[str, Path], package: str
) -> list[Edge]:
    found = []
    for target in targets:
        known = _known(target, mods) if target.startswith(package) else None
        if known is not None and known != module:
            found.append(Edge(module, known, line, top))
    return found


def _targets(node: ast.AST, module: str, is_package: bool, mods: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        base = _resolve(module, is_package, node.level, node.module)
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
    # lazy re-exports, _EXPORTS = {"Name": "ws_jupyter.x.y" or ".y"}, and the tool registry's
    # lines, TOOLS = (".files.read_file:SPEC", ...): module paths in a table
    if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
        names = node.targets if isinstance(node, ast.Assign) else [node.target]
        named = {t.id for t in names if isinstance(t, ast.Name)}
        if "_EXPORTS" in named and isinstance(node.value, ast.Dict):
            paths = node.value.values
        elif "TOOLS" in named and isinstance(node.value, ast.Tuple):
            paths = node.value.elts
        else:
            return []
        out = []
        for value in paths:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                text = value.value.partition(":")[0]
                dots = len(text) - len(text.lstrip("."))
                out.append(_resolve(module, is_package, dots, text[dots:] or None) if dots else text)
        return out
    return []


def _where_now(module: str) -> str:
    """Where a module of a tree from before a move (measured for comparison) lives now, for one
    that has no floor of its own in today's plan (``ws_jupyter.kernels``, ``model_install``)."""
    from ws_jupyter._moved import MOVED

    for old in sorted(MOVED, key=len, reverse=True):
        new = MOVED[old]
        if isinstance(new, str) and (module == old or module.startswith(old + ".")):
            return new + module[len(old) :]
        if module == old:
            return new[0]
    return module


def floor_of(module: str) -> int:
    """The index in :data:`FLOORS` of the module's floor (-1: none)."""
    found = _floor_by_name(module)
    return found if found >= 0 else _floor_by_name(_where_now(module))


def _floor_by_name(module: str) -> int:
    best, best_len = -1, -1
    for index, prefixes in enumerate(FLOORS):
        for prefix in prefixes:
            exact_only = prefix == "ws_jupyter"
            matches = module == prefix or (not exact_only and module.startswith(prefix + "."))
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def upward(found: list[Edge]) -> list[Edge]:
    return [e for e in found if floor_of(e.imported) > floor_of(e.importer)]


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return found


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "(face)"


def module_graph(found: list[Edge], *, import_time: bool = True) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for e in found:
        if e.module_level or not import_time:
            graph[e.importer].add(e.imported)
    return graph


def room_graph(found: list[Edge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for e in found:
        if room(e.importer) != room(e.imported) and not any(a.covers(e.importer, e.imported) for a in ALLOWED):
            graph[room(e.importer)].add(room(e.imported))
    return graph


@functools.cache
def _package_edges() -> list[Edge]:
    return edges()[0]


# --- the tests ------------------------------------------------------------------------------------


def test_every_module_is_on_a_floor() -> None:
    assert [m for m in modules() if floor_of(m) < 0] == []


def test_no_module_imports_a_higher_floor() -> None:
    runtime = _package_edges()
    offending = [e for e in upward(runtime) if not any(a.covers(e.importer, e.imported) for a in ALLOWED)]
    assert offending == [], "imports from a higher floor:\n" + "\n".join(map(str, offending))


def test_the_exceptions_are_few_and_each_one_is_used() -> None:
    assert len(ALLOWED) <= 2
    runtime = _package_edges()
    for allowed in ALLOWED:
        assert allowed.reason
        assert any(allowed.covers(e.importer, e.imported) for e in upward(runtime)), allowed


def test_rooms_that_share_a_floor_do_not_import_each_other() -> None:
    runtime = _package_edges()
    ground, top = 0, len(FLOORS) - 1
    sideways = sorted(
        {
            (e.importer, e.imported)
            for e in runtime
            if floor_of(e.importer) == floor_of(e.imported) not in (ground, top)
            and room(e.importer) != room(e.imported)
        }
    )
    assert sideways == []


def _allowed(e: Edge) -> bool:
    return any(a.covers(e.importer, e.imported) for a in ALLOWED)


def test_no_import_circle_between_modules() -> None:
    """None when the modules are imported, and none through a function-level import either (the
    allowed exceptions aside: the face's hand-over to the Jupyter layer comes back to the face)."""
    runtime = _package_edges()
    assert circles(module_graph(runtime)) == []
    assert circles(module_graph([e for e in runtime if not _allowed(e)], import_time=False)) == []


def test_no_import_circle_between_rooms() -> None:
    runtime = _package_edges()
    assert circles(room_graph(runtime)) == []


def test_the_floors_are_those_of_the_architecture_page() -> None:
    assert FLOORS[0][0] == "ws_jupyter.errors" and "ws_jupyter.text" in FLOORS[0]
    assert FLOORS[-2] == ("ws_jupyter",) and "ws_jupyter.jupyter" in FLOORS[-1]
    assert floor_of("ws_jupyter.tools.files.read_file") < floor_of("ws_jupyter.adapters.mcp_server")
    assert floor_of("ws_jupyter.sandbox.kernels.kernel") == floor_of("ws_jupyter.search.engine")


def test_the_check_sees_function_level_and_lazy_imports(tmp_path: Path) -> None:
    """The analysis itself: an upward import inside a function, a lazy re-export and a registry
    line are edges; an import under TYPE_CHECKING is not."""
    pkg = tmp_path / "ws_jupyter"
    (pkg / "filesystem").mkdir(parents=True)
    (pkg / "__init__.py").write_text('_EXPORTS = {"Tool": "ws_jupyter.tools.types"}\n')
    (pkg / "tools.py").write_text('TOOLS = (".workspace:SPEC",)\n')
    (pkg / "filesystem" / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from ..workspace import Workspace\n"
        "def f():\n    from .. import tools\n"
    )
    (pkg / "workspace.py").write_text("from .filesystem import f\n")
    runtime, typing_only = edges(pkg)
    shown = {(e.importer, e.imported, e.module_level) for e in runtime}
    assert ("ws_jupyter.filesystem", "ws_jupyter.tools", False) in shown
    assert ("ws_jupyter", "ws_jupyter.tools", True) in shown
    assert ("ws_jupyter.tools", "ws_jupyter.workspace", True) in shown
    assert [(e.importer, e.imported) for e in typing_only] == [("ws_jupyter.filesystem", "ws_jupyter.workspace")]
    assert sorted(str(e) for e in upward(runtime)) == [
        "ws_jupyter.filesystem -> ws_jupyter.tools (line 5) (in a function)",
        "ws_jupyter.tools -> ws_jupyter.workspace (line 1)",
    ]
    assert circles(module_graph(runtime)) == []  # the function-level import closes it later
    assert circles(module_graph(runtime, import_time=False)) == [
        ["ws_jupyter.filesystem", "ws_jupyter.tools", "ws_jupyter.workspace"]
    ]


# --- figures ----------------------------------------------------------------------------------------


def report(root: Path = PACKAGE) -> str:
    runtime, typing_only = edges(root)
    up = upward(runtime)
    pairs = sorted({(e.importer, e.imported) for e in up})
    excused = [p for p in pairs if any(a.covers(*p) for a in ALLOWED)]
    lines = [
        f"upward imports (importer -> imported pairs): {len(pairs)} ({len(excused)} allowed)",
        *(f"  {a} -> {b}" for a, b in pairs),
        f"type-only upward imports (not counted): {len({(e.importer, e.imported) for e in upward(typing_only)})}",
        f"module circles (import time): {circles(module_graph(runtime))}",
        f"module circles (with function-level imports): {circles(module_graph(runtime, import_time=False))}",
        "module circles (with function-level imports, allowed ones aside): "
        f"{circles(module_graph([e for e in runtime if not _allowed(e)], import_time=False))}",
        f"room circles (all imports, allowed ones aside): {circles(room_graph(runtime))}",
        "lines per room:",
    ]
    per_room: dict[str, int] = defaultdict(int)
    for module, path in modules(root).items():
        per_room[room(module)] += len(path.read_text().splitlines())
    lines += [f"  {name}: {count}" for name, count in sorted(per_room.items(), key=lambda kv: -kv[1])]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE))
