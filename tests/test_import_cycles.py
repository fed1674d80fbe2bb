"""No import cycle in the engine or the explorer (issue 26): every module imports only modules below it.

The graph is read with ``ast`` (tests/import_graph.py: function-level imports count, a
package's ``__init__`` is a module of its own, so a submodule reading its package facade
closes a cycle). A cycle is cut by moving the shared piece into the lower module or a new
small one, not by a lazy import that keeps it.
"""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import find_cycles, format_cycle, import_edges, import_graph

ROOT = Path(__file__).resolve().parents[1]

def cycles_of(packages: list[str]) -> str:
    """The cycles of ``packages``, one a line, with where each import is; "" when there is none."""
    edges = import_edges(ROOT, packages)
    return "\n".join(format_cycle(c, edges) for c in find_cycles(import_graph(ROOT, packages)))


def test_engine_has_no_import_cycle():
    found = cycles_of(["engine"])
    assert not found, f"import cycles in engine/:\n{found}"


def test_explorer_has_no_import_cycle():
    """The window layer too: a feature module imports the modules it needs, never the
    `explorer` facade (which imports the window); entry points (explorer.app, the export and
    bench commands, selftest) may, since nothing imports them back."""
    found = cycles_of(["explorer"])
    assert not found, f"import cycles in explorer/:\n{found}"


def test_the_import_graph_sees_what_python_runs(tmp_path):
    """The rules the cycle test relies on, on a made-up package."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    files = {
        "pkg/__init__.py": "from .a import A\n",
        "pkg/a.py": "def f():\n    from pkg import b\n",  # function level, the facade, a submodule
        "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n",
        "pkg/c.py": "from .sub.d import D\nimport os\n",  # sub's __init__ runs too
        "pkg/sub/__init__.py": "",
        "pkg/sub/d.py": "from .. import c\nfrom . import e\n",
        "pkg/sub/e.py": "import pkg.sub.d\n",  # absolute; pkg and pkg.sub are being imported already
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path, ["pkg"])
    assert graph == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg", "pkg.b"},
        "pkg.b": set(),  # TYPE_CHECKING imports never run
        "pkg.c": {"pkg.sub", "pkg.sub.d"},
        "pkg.sub": set(),
        "pkg.sub.d": {"pkg", "pkg.c", "pkg.sub", "pkg.sub.e"},
        "pkg.sub.e": {"pkg.sub.d"},
    }
    assert find_cycles(graph) == [
        ["pkg", "pkg.a", "pkg"],
        ["pkg.c", "pkg.sub.d", "pkg.c"],
        ["pkg.sub.d", "pkg.sub.e", "pkg.sub.d"],
    ]
    edges = import_edges(tmp_path, ["pkg"])
    assert format_cycle(["pkg", "pkg.a", "pkg"], edges) == "pkg → pkg.a (pkg/__init__.py:1) → pkg (pkg/a.py:2)"
