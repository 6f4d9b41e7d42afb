"""A metric Space that needs only ``evaluate``: the module with its own copy of our pure code.

``evaluate.load("chemteb/<name>")`` downloads the Space's ``<name>.py`` and every file that
script imports relatively (``from .x import y``; only its own imports: evaluate does not follow
them further), checks that its plain ``import``\\ s are installed, and imports it. So a Space that
imports ``chemteb_eval`` makes every user install the toolkit, and scores with whatever version
they have, not the Space's. Instead ``publish-metrics`` ships, generated from this checkout at
publish time:

- ``<name>.py``: the module, each ``chemteb_eval`` import turned into a relative import of a
  bundled file, and one line per bundled file so that evaluate downloads them all;
- ``chemteb_<path>.py``: each ``chemteb_eval`` module the module (and the widget) reaches, its
  own ``chemteb_eval`` imports rewritten the same way (``chemteb_eval.scoring._validation`` is
  ``chemteb_scoring__validation.py``) — the same source text otherwise, so the numbers are the
  same by construction (``tests/test_bundle.py`` checks them in a venv without chemteb-eval);
- ``app.py``: as it is when it imports nothing of ours; otherwise what it imports from
  chemteb-eval taken from the bundle evaluate loaded; ``requirements.txt``: the third-party
  distributions the bundle imports, with chemteb-eval's own version specifiers;
- ``README.md`` and ``tests.py`` as they are.

Only the pure rooms may be bundled (``scoring``, the ChemBench parser and scorer, the evaluate
plumbing, the widget): a module that reaches torch, transformers or the runner is refused.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chemteb_eval import __version__

__all__ = ["Bundle", "bundle_space"]

PACKAGE = "chemteb_eval"
#: What a bundled module may import besides the standard library and other bundled modules.
LIGHT = {"numpy", "scipy", "sklearn", "evaluate", "datasets", "gradio"}
# Import names whose distribution name differs.
_DISTRIBUTIONS = {"sklearn": "scikit-learn"}


@dataclass(frozen=True)
class Bundle:
    """The generated files of one metric Space: path in the Space -> text."""

    name: str
    files: dict[str, str]
    modules: tuple[str, ...]  # the chemteb_eval modules bundled, in file order
    third_party: tuple[str, ...]  # the import names they use besides the standard library


def flat_name(module: str) -> str:
    """The bundled file's module name: ``chemteb_eval.scoring._validation`` ->
    ``chemteb_scoring__validation`` (the package itself: ``chemteb_init``)."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        raise ValueError(f"module: {module} is not part of {PACKAGE}")
    return "chemteb_" + ("_".join(parts[1:]) or "init")


def bundle_space(folder: Path, name: str) -> Bundle:
    """The files of the self-contained Space of ``metrics/<name>/`` (see the module docstring).

    Args:
        folder: the module's folder (``metrics/<name>``).
        name: the module's name.

    Returns:
        The ``Bundle``; ``ValueError`` naming the module when something cannot be bundled.
    """
    script = folder / f"{name}.py"
    app = folder / "app.py"
    for path in (
        script,
        app,
        folder / "README.md",
        folder / "tests.py",
        folder / "requirements.txt",
    ):
        if path.is_symlink():  # what a planted link points at (a token file) is never published
            raise ValueError(f"{name}: {path} is a link; publish the file itself")
    source = script.read_text(encoding="utf-8")
    roots = _imported(ast.parse(source, str(script)), None)
    if app.is_file():  # the app's (the widget): imported by the module, so evaluate fetches it
        roots |= _imported(ast.parse(app.read_text(encoding="utf-8"), str(app)), None)
    modules = _closure(roots)
    flat = [flat_name(m) for m in modules]
    if len(set(flat)) != len(flat) or name in flat:
        raise ValueError(f"{name}: two bundled modules would share a file name ({sorted(flat)})")
    files: dict[str, str] = {}
    third: set[str] = set()
    for module in modules:
        path = _source(module)
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, str(path))
        _refuse_dynamic_imports(tree, module)
        third |= _third_party(tree)
        files[f"{flat_name(module)}.py"] = _rewrite(text, tree, _package_of(module, path))
    tree = ast.parse(source, str(script))
    _refuse_dynamic_imports(tree, name)
    third |= _third_party(tree)
    files[f"{name}.py"] = _main_script(source, tree, modules)
    files["app.py"] = _app(name, app)
    heavy = sorted(third - LIGHT)
    if heavy:
        raise ValueError(
            f"{name}: the bundled code imports {', '.join(heavy)}; a metric Space may use only "
            f"{', '.join(sorted(LIGHT))}."
        )
    _check_as_evaluate_reads_it(name, files)
    files["requirements.txt"] = _requirements(third, folder / "requirements.txt")
    for extra in ("README.md", "tests.py"):
        if (folder / extra).is_file():
            files[extra] = (folder / extra).read_text(encoding="utf-8")
    return Bundle(name=name, files=files, modules=tuple(modules), third_party=tuple(sorted(third)))


# -- finding what to bundle ----------------------------------------------------------------


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        raise ValueError(f"module: {module} has no Python source to bundle")
    return Path(spec.origin)


def _package_of(module: str, path: Path) -> str:
    """The package a module's relative imports start from."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _targets(node: ast.ImportFrom, package: str | None) -> tuple[str | None, list[str]]:
    """For ``from X import a, b``: X resolved to an absolute name (``None`` if it is not ours),
    and which of ``a, b`` are submodules of X."""
    if node.level:
        if package is None:
            raise ValueError("a metric module's own relative import cannot be bundled")
        base = package.split(".")
        base = base[: len(base) - (node.level - 1)]
        absolute = ".".join([*base, *([node.module] if node.module else [])])
    else:
        absolute = node.module or ""
    if absolute != PACKAGE and not absolute.startswith(PACKAGE + "."):
        return None, []
    subs = [a.name for a in node.names if _is_module(f"{absolute}.{a.name}")]
    return absolute, subs


def _imported(tree: ast.AST, package: str | None) -> set[str]:
    """Our modules a module imports (anywhere: lazy imports inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                    raise ValueError(
                        f"'import {alias.name}' cannot be bundled; write 'from ... import ...'"
                    )
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            absolute, subs = _targets(node, package)
            if absolute is None:
                continue
            names = [a.name for a in node.names]
            if len(subs) < len(names):  # attributes of ``absolute`` itself
                found.add(absolute)
            found.update(f"{absolute}.{s}" for s in subs)
    return found


def _closure(roots: Iterable[str]) -> list[str]:
    """Every module ``roots`` reach, each package's ``__init__`` included where it is imported
    from, in a stable order."""
    todo, seen = sorted(roots), set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        path = _source(module)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        todo.extend(sorted(_imported(tree, _package_of(module, path)) - seen))
    return sorted(seen)


def _third_party(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n != PACKAGE and n not in sys.stdlib_module_names}


def _refuse_dynamic_imports(tree: ast.AST, where: str) -> None:
    """``importlib.import_module("chemteb_eval...")`` and ``__import__`` cannot be rewritten: in
    a Space they would fail, or silently use an installed chemteb-eval of another version."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        arg = node.args[0]
        if (
            called in ("import_module", "__import__")
            and isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and arg.value.split(".")[0] == PACKAGE
        ):
            raise ValueError(
                f"{where}: line {node.lineno} imports {arg.value} by name; write "
                "'from ... import ...' so it can be bundled"
            )


def _check_as_evaluate_reads_it(name: str, files: dict[str, str]) -> None:
    """The generated module as evaluate's own scanner reads it: it must fetch exactly the
    bundled files, follow no ``# From:`` URL and ask for no library a Space lacks."""
    import tempfile

    from evaluate.loading import get_imports

    bundled = {f.removesuffix(".py") for f in files if f.startswith("chemteb_")}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{name}.py"
        script.write_text(files[f"{name}.py"], encoding="utf-8")
        imports = get_imports(str(script))
    internal = {n for kind, n, _, _ in imports if kind == "internal"}
    external = [path for kind, _, path, _ in imports if kind == "external"]
    libraries = {n for kind, n, _, _ in imports if kind == "library"}
    extra = libraries - LIGHT - set(sys.stdlib_module_names)
    if internal != bundled or external or extra:
        raise ValueError(
            f"{name}: evaluate would read the generated module wrongly (fetch {sorted(internal)}"
            f" for {sorted(bundled)}; follow {external}; require {sorted(extra)}): put each "
            "chemteb_eval import on its own line, without a '# From:' comment"
        )


# -- rewriting -------------------------------------------------------------------------------


def _statement(node: ast.ImportFrom, package: str | None) -> str | None:
    """The relative import that replaces ``node``, or ``None`` to keep it."""
    absolute, subs = _targets(node, package)
    if absolute is None:
        return None
    plain = [a for a in node.names if a.name not in subs]
    parts = []
    if plain:
        names = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in plain)
        parts.append(f"from .{flat_name(absolute)} import {names}")
    for alias in node.names:
        if alias.name in subs:
            bound = alias.asname or alias.name
            parts.append(f"from . import {flat_name(f'{absolute}.{alias.name}')} as {bound}")
    return "; ".join(parts)


def _rewrite(text: str, tree: ast.AST, package: str | None) -> str:
    """``text`` with each import of our modules replaced, in place (one line each)."""
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            new = _statement(node, package)
            if new is not None:
                end = node.end_lineno or node.lineno
                end_col = node.end_col_offset or 0
                edits.append((node.lineno, node.col_offset, end, end_col, new))
    for start, col, end, end_col, new in sorted(edits, reverse=True):
        tail = lines[end - 1][end_col:]
        if tail.lstrip().startswith("#"):  # "# From: chemteb-eval" would send evaluate to a URL
            tail = "\n"
        lines[start - 1 : end] = [lines[start - 1][:col] + new + tail]
    return "".join(lines)


def _main_script(text: str, tree: ast.Module, modules: list[str]) -> str:
    rewritten = _rewrite(text, tree, None)
    tree = ast.parse(rewritten)  # a wrapped import is one line now: find the block end anew
    header = (
        f"# Generated by `chemteb publish-metrics` from chemteb-eval {__version__}: the module\n"
        "# with its own copy of the chemteb-eval code it runs (the chemteb_*.py files here), so\n"
        "# `evaluate.load` needs no chemteb-eval install and scores with this Space's version.\n"
    )
    manifest = [
        "",
        "# evaluate downloads only the files a module imports itself: each bundled file, by name.",
        *(f"from .{flat_name(m)} import __name__ as _{flat_name(m)}" for m in modules),
        "",
    ]
    lines = rewritten.splitlines(keepends=True)
    at = _after_imports(tree)
    body = "".join(lines[:at]) + "\n".join(manifest) + "\n" + "".join(lines[at:])
    return header + body


def _after_imports(tree: ast.Module) -> int:
    """The line after the module's first block of docstring and imports."""
    last = 0
    for node in tree.body:
        is_doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if isinstance(node, (ast.Import, ast.ImportFrom)) or (is_doc and last == 0):
            last = node.end_lineno or last
        else:
            break
    return last


def _app(name: str, original: Path) -> str:
    """The Space's app, run as a plain script: as it is when it imports nothing of ours
    (ChemBench's); otherwise each ``from chemteb_eval.X import a`` becomes ``a`` taken from the
    bundled copy that ``evaluate.load`` of the module imported (a plain script cannot import the
    bundle's relative imports itself), the module being loaded once before them."""
    if not original.is_file():
        raise ValueError(f"{name}: {original} is missing")
    text = original.read_text(encoding="utf-8")
    tree = ast.parse(text, str(original))
    if not _imported(tree, None):
        return text
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and _targets(node, None)[0] is not None:
            absolute = _targets(node, None)[0]
            assert absolute is not None
            bound = [
                f"{a.asname or a.name} = _bundled({flat_name(absolute)!r}).{a.name}"
                for a in node.names
            ]
            edits.append((node.lineno, node.end_lineno or node.lineno, "\n".join(bound) + "\n"))
    ours = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and _targets(n, None)[0]]
    if len(ours) != len(edits):
        raise ValueError(f"{name}: app.py imports chemteb_eval inside a block; import at the top")
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = [new]
    prelude = (
        f"# Generated by `chemteb publish-metrics` from chemteb-eval {__version__}: what this app\n"
        "# takes from chemteb-eval comes from the module's bundled copy (the chemteb_*.py files).\n"
        "import sys as _sys\n"
        "from pathlib import Path as _Path\n\n"
        "import evaluate as _evaluate\n\n"
        f'_module = type(_evaluate.load(str(_Path(__file__).resolve().parent / "{name}.py")))\n\n\n'
        "def _bundled(flat):\n"
        '    return _sys.modules[_module.__module__.rpartition(".")[0] + "." + flat]\n\n\n'
    )
    first = min(start for start, _, _ in edits)
    return "".join(lines[: first - 1]) + prelude + "".join(lines[first - 1 :])


def _requirements(third: set[str], original: Path) -> str:
    """The bundle's third-party distributions, each with the specifier chemteb-eval's own
    metadata (or the folder's requirements) gives it; never chemteb-eval itself."""
    from importlib.metadata import PackageNotFoundError, requires

    from packaging.requirements import InvalidRequirement, Requirement

    specs: dict[str, str] = {}
    try:
        for line in requires("chemteb-eval") or []:
            req = Requirement(line)
            if req.marker is None:
                specs[req.name.lower()] = str(req.specifier)
    except PackageNotFoundError:  # an uninstalled source tree: the folder's pins only
        pass
    if original.is_file():
        for n, line in enumerate(original.read_text(encoding="utf-8").splitlines(), start=1):
            line = line.split("#", 1)[0].strip()  # pip allows a comment after a requirement
            if not line or line == "chemteb-eval":
                continue
            try:
                req = Requirement(line)
            except InvalidRequirement as exc:
                raise ValueError(f"{original}: line {n}: not a requirement ({exc})") from None
            specs[req.name.lower()] = str(req.specifier)
    wanted = sorted({_DISTRIBUTIONS.get(n, n) for n in third} | {"evaluate", "gradio"})
    return "".join(f"{d}{specs.get(d, '')}\n" for d in wanted)
