"""The product's import graph: no cycle anywhere, one direction between the two packages, the offline
backends laid out by tool over layers, no product file over 500 lines.

Every module of ``mvx_tasks/`` and ``sama_model/`` is parsed with :mod:`ast`; nothing is imported. What
counts as an edge, decided once here:

* every ``import`` / ``from ... import`` statement wherever it stands: at module level, inside a function
  or method body (an import moved into a function to dodge a cycle still ties the two modules together, so
  the cycle counts), and under ``if TYPE_CHECKING:`` (a cycle kept only for type hints is still two modules
  a reader must understand together);
* a relative import is resolved against the importing module's package; ``from pkg import name`` is an
  edge to ``pkg.name`` when that is a module, else to ``pkg`` (its ``__init__``);
* importing ``a.b.c`` is an edge to ``a.b.c`` only, not to the packages ``a`` and ``a.b`` whose
  ``__init__`` Python runs first (counting those would make every package that lists its submodules a
  cycle with them);
* modules named in strings (the backend registry's lazily imported ``"module:Class"`` paths) are not
  edges: they are loaded on demand, never while the importer itself is being imported.
"""
from __future__ import annotations

import ast
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("mvx_tasks", "sama_model")
LITE = "sama_model.backends.lite"
#: the lite backends' sub-packages, lowest first: each may import only those before it, never an entry module
LITE_LAYERS = ("shared", "fitted", "perception", "motion", "movers", "identity")
MAX_LINES = 500


@lru_cache(maxsize=1)
def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, whether it is a package's ``__init__``) for every product module."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(f.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (f, is_pkg)
    return out


def _known(name: str) -> str | None:
    """The longest prefix of ``name`` that is a product module (``a.b.C`` imported as a name: ``a.b``)."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in modules():
            return ".".join(parts)
        parts.pop()
    return None


def imports_of(module: str) -> list[tuple[int, str]]:
    """(line, imported product module) for every import statement of ``module`` (see the module docstring)."""
    path, is_pkg = modules()[module]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_pkg else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in modules() else prefix for a in node.names]
        for name in names:
            target = _known(name)
            if target is not None and target != module and (node.lineno, target) not in out:
                out.append((node.lineno, target))
    return out


@lru_cache(maxsize=1)
def graph() -> dict[str, set[str]]:
    return {m: {t for _, t in imports_of(m)} for m in modules()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One concrete cycle (a path back to its start) per strongly connected group of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm, recursive (a few hundred modules)
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    out = []
    for group in groups:  # the shortest way from the group's first module back to itself, inside the group
        start, inside = group[0], set(group)
        paths = {start: [start]}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(edges[v] & inside):
                    if w == start:
                        found = paths[v] + [start]
                        break
                    if w not in paths:
                        paths[w] = paths[v] + [w]
                        nxt.append(w)
                if found:
                    break
            frontier = nxt
        out.append(found)
    return out


def test_the_graph_sees_imports_in_function_bodies_and_type_checking_blocks(tmp_path, monkeypatch):
    pkg = tmp_path / "mvx_tasks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n")
    (pkg / "c.py").write_text("from mvx_tasks import a, b\nimport mvx_tasks.b as bb\n")
    here = sys.modules[__name__]
    monkeypatch.setattr(here, "ROOT", tmp_path)
    monkeypatch.setattr(here, "PACKAGES", ("mvx_tasks",))
    modules.cache_clear()
    graph.cache_clear()
    try:
        edges = graph()
        assert edges == {"mvx_tasks": set(), "mvx_tasks.a": {"mvx_tasks.b"}, "mvx_tasks.b": {"mvx_tasks.a"},
                         "mvx_tasks.c": {"mvx_tasks.a", "mvx_tasks.b"}}
        assert cycles(edges) == [["mvx_tasks.a", "mvx_tasks.b", "mvx_tasks.a"]]
    finally:
        modules.cache_clear()
        graph.cache_clear()


def test_no_import_cycle_in_the_product():
    found = cycles(graph())
    assert not found, "import cycles (each a path back to its start):\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_benchmark_never_imports_the_agent():
    """MVX-Bench (``mvx_tasks``) is usable for any model without SAMA: nothing in it imports ``sama_model``
    (the agent may use the benchmark's lower layer, never the other way)."""
    bad = [f"{m}:{line} imports {t}" for m in modules() if m.split(".")[0] == "mvx_tasks"
           for line, t in imports_of(m) if t.split(".")[0] == "sama_model"]
    assert not bad, "mvx_tasks imports sama_model:\n" + "\n".join(bad)


def test_lite_mirrors_the_tools():
    """``sama_model/backends/lite/`` holds one entry module per tool of ``sama_model/tools/`` (the tool's lite
    backend class) and the layers below them; nothing else."""
    from sama_model.tools import TOOL_CLASSES

    lite = ROOT / "sama_model" / "backends" / "lite"
    entries = {f.stem for f in lite.glob("*.py")} - {"__init__"}
    assert entries == set(TOOL_CLASSES), entries ^ set(TOOL_CLASSES)
    assert {d.name for d in lite.iterdir() if d.is_dir() and d.name != "__pycache__"} == set(LITE_LAYERS)
    for name, cls in TOOL_CLASSES.items():
        assert cls.backend_classes["lite"].startswith(f"{LITE}.{name}:"), (name, cls.backend_classes)


def test_lite_layers_import_only_lower_layers():
    """A lite sub-package imports only the sub-packages listed before it in :data:`LITE_LAYERS` (and itself);
    no sub-package imports a tool's entry module (entries build on the layers, and may use one another)."""
    def layer(module: str) -> str | None:
        parts = module.split(".")
        return parts[3] if module.startswith(LITE + ".") and parts[3] in LITE_LAYERS else None

    bad = []
    for m in modules():
        if layer(m) is None:
            continue
        allowed = set(LITE_LAYERS[:LITE_LAYERS.index(layer(m)) + 1])
        for line, t in imports_of(m):
            if t.startswith(LITE + ".") and layer(t) not in allowed:
                bad.append(f"{m}:{line} imports {t}")
    assert not bad, "\n".join(bad)


def test_no_product_file_over_500_lines():
    long = {str(f.relative_to(ROOT)): n for f, _ in modules().values()
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these along a real seam (at most {MAX_LINES} lines each): {long}"
