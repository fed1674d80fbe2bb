"""The import graph of some packages, read with ``ast`` (nothing is imported), and its cycles.

    graph = import_graph(ROOT, ["engine"])   # module → the modules it imports
    cycles = find_cycles(graph)              # [["engine.a", "engine.b", "engine.a"], ...]

What counts as an import (what runs, or must have finished, when the importer runs):

- every ``import`` / ``from … import`` anywhere in the file: at module level, inside a
  function or method, inside ``try`` — except under ``if TYPE_CHECKING:`` (never runs);
- a package's ``__init__.py`` is a module of its own, named like the package
  (``engine/__init__.py`` is ``engine``), so a submodule reading its package facade
  (``from engine import X`` or ``from . import X`` in engine/foo.py) imports ``engine``,
  which imports engine.foo back: a cycle;
- relative imports are resolved against the importing module's package;
- ``from pkg import name`` imports ``pkg``, and also ``pkg.name`` when that is a module;
- importing ``a.b.c`` also imports the packages ``a.b`` and ``a`` (their ``__init__`` runs
  first), except those the importer lies inside (already being imported when it runs);
  the module named in the statement itself always counts, even if it is such a package
  (reading a name off it needs its ``__init__`` to have got that far).

Only modules of the given packages appear in the graph (imports of anything else, e.g. torch,
are left out). Strings of code (a subprocess script) are not parsed.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable
from pathlib import Path

__all__ = ["find_cycles", "format_cycle", "import_edges", "import_graph", "module_files"]


def module_files(root: str | Path, packages: Iterable[str]) -> dict[str, Path]:
    """Module name → its file, for every .py file of ``packages`` (directories under
    ``root``; a dotted name like "engine.models" is the folder root/engine/models).
    A package's __init__.py is named after the package."""
    root = Path(root)
    out: dict[str, Path] = {}
    for pkg in packages:
        base = root.joinpath(*pkg.split("."))
        if not (base / "__init__.py").is_file():
            raise FileNotFoundError(f"{base} is not a package (no __init__.py)")
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            # a folder without __init__.py under a package is not part of it
            if any(not root.joinpath(*parts[:i], "__init__.py").is_file() for i in range(1, len(parts))):
                continue
            out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import statement of the tree, at any depth, except under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the else branch does run
            continue
        stack.extend(ast.iter_child_nodes(node))


def _ancestors(name: str) -> list[str]:
    """"a.b.c" → ["a", "a.b"]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _targets(files: dict[str, Path], mod: str, target: str) -> list[str]:
    """The modules of ours that ``mod`` imports by naming ``target`` in a statement: the
    target itself and its ancestor packages, less those ``mod`` lies inside (being imported
    already when it runs; the target itself counts even then)."""
    inside = {*_ancestors(mod), mod}
    out = []
    for t in [*_ancestors(target), target]:
        if t not in files or t == mod:
            continue
        if t in inside and t != target:
            continue
        out.append(t)
    return out


def _statement_targets(node: ast.Import | ast.ImportFrom, package: str, files: dict[str, Path]) -> list[str]:
    """The modules one statement names: ``import a.b`` → a.b; ``from pkg import x`` → pkg, and
    pkg.x when that is a module of ours. ``package`` is the importer's package (what a level-1
    relative import starts from)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        base = package.split(".") if package else []
        up = node.level - 1
        if up > len(base):
            return []  # beyond the top package: not ours
        base = base[: len(base) - up]
        source = ".".join([*base, *([node.module] if node.module else [])])
    else:
        source = node.module or ""
    if not source:
        return []
    subs = [f"{source}.{a.name}" for a in node.names if a.name != "*" and f"{source}.{a.name}" in files]
    return [source, *subs]


def import_edges(root: str | Path, packages: Iterable[str]) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) → the places ("engine/foo.py:12") of the statements that make the
    edge; both ends are modules of ``packages`` (see the module docstring for the rules)."""
    root = Path(root)
    files = module_files(root, packages)
    edges: dict[tuple[str, str], list[str]] = {}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        where = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _import_nodes(tree):
            for target in _statement_targets(node, package, files):
                for t in _targets(files, mod, target):
                    edges.setdefault((mod, t), []).append(f"{where}:{node.lineno}")
    return edges


def import_graph(root: str | Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module → the set of modules it imports, for every module of ``packages`` under
    ``root`` (modules importing nothing of ours map to an empty set)."""
    packages = list(packages)
    graph: dict[str, set[str]] = {m: set() for m in module_files(root, packages)}
    for src, dst in import_edges(root, packages):
        graph[src].add(dst)
    return graph


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
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
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                out.append(sorted(comp))
    return out


def _shortest_path(graph: dict[str, set[str]], src: str, dst: str, allowed: set[str]) -> list[str] | None:
    """Breadth-first shortest path src → dst through ``allowed`` nodes (src and dst included)."""
    prev: dict[str, str | None] = {src: None}
    frontier = [src]
    while frontier:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph.get(node, ())):
                if nxt not in allowed or nxt in prev:
                    continue
                prev[nxt] = node
                if nxt == dst:
                    path = [dst]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return path[::-1]
                nxt_frontier.append(nxt)
        frontier = nxt_frontier
    return None


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles of ``graph``, each a list of modules that starts and ends with the same
    one (["a", "b", "a"]): for every edge u → v inside a strongly connected component, the
    shortest cycle through it (so every edge that keeps a cycle alive shows in at least one),
    without repeats (a cycle is kept once, rotated to start at its smallest module).
    Empty when the graph is acyclic. Sorted, shortest first."""
    seen: set[tuple[str, ...]] = set()
    cycles: list[list[str]] = []
    for comp in _components(graph):
        members = set(comp)
        if len(comp) == 1 and comp[0] not in graph.get(comp[0], ()):
            continue
        for u in comp:
            for v in sorted(graph.get(u, ())):
                if v not in members:
                    continue
                # v … u, then the edge u → v closes it ([u] for a module importing itself)
                ring = [u] if u == v else _shortest_path(graph, v, u, members)
                if ring is None:  # cannot happen inside a component
                    continue
                i = ring.index(min(ring))
                key = tuple(ring[i:] + ring[:i])
                if key not in seen:
                    seen.add(key)
                    cycles.append([*key, key[0]])
    return sorted(cycles, key=lambda c: (len(c), c))


def format_cycle(cycle: list[str], edges: dict[tuple[str, str], list[str]] | None = None) -> str:
    """"a → b → a", with where each step is imported when ``edges`` (import_edges) is given:
    "a → b (a.py:3) → a (b.py:7)"."""
    parts = [cycle[0]]
    for src, dst in itertools.pairwise(cycle):
        at = (edges or {}).get((src, dst))
        parts.append(f"{dst} ({', '.join(at)})" if at else dst)
    return " → ".join(parts)
