"""The house's size, as issue reports state it: README lines, import circles, longest files,
functions over 80 lines. Usage: ``python -m tests.helpers.house [--json]``; ``test_structure``
holds the package to no circle with the same graph.

Import circles are found among ``chemteb_eval``'s modules with every import counted — at module
level, inside functions and under ``TYPE_CHECKING`` — because an import inside a function is
still a dependency; it only hides the circle from Python's loader. A ``"module:Class"`` string in
a table is not an import: the table names what it dispatches to without depending on it.
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "chemteb_eval"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Our modules ``path`` imports anywhere in it (``from x import y`` counts ``x.y`` when that
    is a module of ours, else ``x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import sub`` depends on the submodule only; ``from pkg import name`` on pkg.
            names = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != me and name != "chemteb_eval":
                found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in files}
    return {module_name(p): imports_of(p, modules) for p in files}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def long_functions(limit: int = 80) -> list[tuple[str, int]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    out.append((f"{path.relative_to(ROOT)}:{node.name}", length))
    return sorted(out, key=lambda item: -item[1])


def report() -> dict[str, object]:
    files = sorted(PACKAGE.rglob("*.py"))
    sizes = sorted(
        (
            (str(p.relative_to(ROOT)), len(p.read_text(encoding="utf-8").splitlines()))
            for p in files
        ),
        key=lambda item: -item[1],
    )
    return {
        "readme_lines": len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()),
        "package_lines": sum(n for _, n in sizes),
        "circles": circles(graph()),
        "longest_files": sizes[:5],
        "functions_over_80_lines": long_functions(),
    }


if __name__ == "__main__":
    result = report()
    if "--json" in sys.argv:
        print(json.dumps(result, indent=1))
    else:
        for key, value in result.items():
            print(f"{key}: {value}")
