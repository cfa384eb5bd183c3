"""No circle in the imports between the service layer and the live layer around it (issue 23).

The modules: every module of ``games.services``, ``games.tasks``, ``games.timers``,
``games.scheduling``, ``games.broadcast`` and ``games.selectors``.  An edge is any import of one
of them by another, wherever it is written: at module level, inside a function (a lazy import
that only hides a circle is still a circle), or as ``importlib.import_module("<name>")`` (how the
service layer hands a change to the live layer on commit).  Imports under ``if TYPE_CHECKING:``
are not edges: they never run.  Importing ``games.services.<module>`` from outside the package
runs the package's ``__init__`` first, so it is an edge to the package as well.

The intended order, bottom up: selectors; broadcast (reads through selectors); timers;
scheduling (timers and the broadcast's live thread); the service layer (hands over to broadcast
and scheduling on commit); tasks (the Celery entry points, which call the service layer).
"""

from __future__ import annotations

import ast
from pathlib import Path

import games

GAMES_DIR = Path(games.__file__).parent
LIVE = ("tasks", "timers", "scheduling", "broadcast", "selectors")


def _modules() -> dict[str, Path]:
    mods = {f"games.{name}": GAMES_DIR / f"{name}.py" for name in LIVE}
    for path in sorted((GAMES_DIR / "services").glob("*.py")):
        name = "games.services" if path.stem == "__init__" else f"games.services.{path.stem}"
        mods[name] = path
    return mods


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """The ids of every node under an ``if TYPE_CHECKING:`` block."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                for child in node.body:
                    out.update(id(n) for n in ast.walk(child))
    return out


def _imported(node: ast.AST) -> list[str]:
    """The dotted names an import statement or an ``importlib.import_module`` call imports."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        # ``from games import tasks`` imports the module games.tasks; ``from games.x import y``
        # imports games.x (and games.x.y, if that is a module).
        return [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module name -> the names among ``mods`` it imports (see the module docstring)."""
    graph: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        skip = _type_checking_nodes(tree)
        inside_services = name == "games.services" or name.startswith("games.services.")
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            for target in _imported(node):
                if target in mods and target != name:
                    graph[name].add(target)
                if target.startswith("games.services.") and not inside_services:
                    graph[name].add("games.services")
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_service_and_live_layers_import_one_another_without_a_circle() -> None:
    graph = import_graph(_modules())
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_the_graph_has_the_edges_it_should() -> None:
    """The walk sees every kind of edge (else the test above could not fail): module level,
    inside a function, through importlib, and the package behind a submodule."""
    graph = import_graph(_modules())
    assert "games.services" in graph["games.tasks"]  # module level
    assert "games.selectors" in graph["games.broadcast"]  # inside functions
    assert {"games.broadcast", "games.scheduling"} <= graph["games.services.commit"]  # importlib
    assert "games.services.commit" in graph["games.services.play"]
    assert "games.timers" in graph["games.scheduling"]


def test_a_circle_is_found(tmp_path: Path) -> None:
    """Lazy, importlib and submodule edges each close a circle the check reports."""
    (tmp_path / "a.py").write_text("def f():\n    from games import b\n")
    (tmp_path / "b.py").write_text("import importlib\nimportlib.import_module('games.c')\n")
    (tmp_path / "c.py").write_text("from games.services.commit import _lock\n")
    (tmp_path / "s.py").write_text("from games.a import f\n")
    (tmp_path / "t.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from games import a\n"
    )
    mods = {
        "games.a": tmp_path / "a.py",
        "games.b": tmp_path / "b.py",
        "games.c": tmp_path / "c.py",
        "games.services": tmp_path / "s.py",
        "games.t": tmp_path / "t.py",
    }
    graph = import_graph(mods)
    assert graph["games.t"] == set()
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"games.a", "games.b", "games.c", "games.services"}
