"""Checks that guard the map of the house: the room table in ``docs/rooms.md`` (the one copy;
the README and the design notes cite it) is read here, and every import of every file under
``chemteb_eval/``, ``space/``, ``metrics/`` and ``datasets_scripts/`` (module level, inside a
function, or the metric table's ``module:attribute`` strings) must be one its room may use; the
rooms' "must never use" libraries hold; one table per concept."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from chemteb_eval.data.types import DATA_CLASSES
from chemteb_eval.metric_docs import METRICS
from chemteb_eval.models.spec import parse_model_spec
from chemteb_eval.runner.kinds import KIND_RUNS
from chemteb_eval.tasks import KINDS

from .conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "chemteb_eval"
ROOM_MAP = REPO_ROOT / "docs" / "rooms.md"
ROOT_FOLDERS = ("metrics", "datasets_scripts", "space")  # rooms at the repository root
# The package's front door (its version) may be imported by any room.
_FRONT_DOOR = "chemteb_eval"
# ``"chemteb_eval.scoring:score_x"``: an import the metric table makes on demand (importlib).
_IMPORT_STRING = re.compile(r"(chemteb_eval(?:\.\w+)*):\w+")


@dataclass(frozen=True)
class Room:
    name: str
    may_use: frozenset[str]
    never: frozenset[str]


def _names(cell: str) -> frozenset[str]:
    cell = cell.strip()
    if cell in ("", "—", "-"):
        return frozenset()
    return frozenset(n.strip().strip("`").rstrip("/") for n in cell.split(","))


def read_room_map(path: Path = ROOM_MAP) -> list[Room]:
    """The rows of the room table, bottom up."""
    rooms = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue  # prose, the header or its rule
        name = cells[0].strip("`").rstrip("/")
        rooms.append(Room(name, _names(cells[2]), _names(cells[3])))
    return rooms


ROOMS = read_room_map()
_BY_NAME = {r.name: r for r in ROOMS}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "chemteb_eval":
        return None
    return parts[1] if len(parts) > 1 else _FRONT_DOOR


def _imports(path: Path, package: list[str] | None = None) -> list[tuple[int, str]]:
    """Every module ``path`` imports, resolved to absolute names, with its line; ``package``
    is the dotted package the file sits in (default: from its place in the repository)."""
    if package is None:
        package = list(path.relative_to(REPO_ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = _IMPORT_STRING.fullmatch(node.value)
            if match:
                found.append((node.lineno, match.group(1)))
    return found


def _room_of(path: Path) -> str | None:
    rel = path.relative_to(REPO_ROOT)
    if rel.parts[0] == "chemteb_eval":
        inner = rel.parts[1].removesuffix(".py")
        return None if inner == "__init__" else inner  # the front door re-exports the version
    return rel.parts[0] if rel.parts[0] in ROOT_FOLDERS else None


def _file_violations(
    path: Path, room: str, shown: str, package: list[str] | None = None
) -> list[str]:
    rules = _BY_NAME.get(room)
    if rules is None:
        return [f"{shown}: room {room!r} is not in docs/rooms.md; add its row"]
    bad = []
    for line, name in _imports(path, package):
        target = _room(name)
        if target is None:
            if name.split(".")[0] in rules.never:
                bad.append(f"{shown}:{line} imports {name} (never in {room})")
        elif target not in (_FRONT_DOOR, room) and target not in rules.may_use:
            bad.append(f"{shown}:{line} imports {name}: {room} may not use {target}")
    return bad


def _violations() -> list[str]:
    bad = []
    files = sorted(PACKAGE.rglob("*.py"))
    for folder in ROOT_FOLDERS:
        files += sorted((REPO_ROOT / folder).rglob("*.py"))
    for path in files:
        room = _room_of(path)
        if room is not None:
            bad += _file_violations(path, room, str(path.relative_to(REPO_ROOT)))
    return bad


def test_imports_follow_the_room_map() -> None:
    assert _violations() == []


def test_the_room_map_runs_bottom_up_and_names_every_room() -> None:
    seen: set[str] = set()
    for room in ROOMS:
        above = room.may_use - seen
        assert not above, f"{room.name} may use {sorted(above)}, listed after it in docs/rooms.md"
        seen.add(room.name)
    inside = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()}
    inside = {n for n in inside if not n.startswith(".") and n not in ("__init__", "__pycache__")}
    inside -= {"py.typed", "_metrics"}
    assert {r.name for r in ROOMS} == inside | set(ROOT_FOLDERS)


def test_the_import_check_catches_what_a_room_may_not_use(tmp_path: Path) -> None:
    # The check itself can fail, without writing into the package: an upward import from
    # scoring inside a function, a lateral one (results -> models), a forbidden library, and a
    # metric-table string naming a room the file may not use.
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from chemteb_eval.runner import run\n    import torch\n"
        "    return run, torch\n"
    )
    found = _file_violations(probe, "scoring", "probe.py", ["chemteb_eval", "scoring"])
    assert any("scoring may not use runner" in v for v in found)
    assert any("imports torch (never in scoring)" in v for v in found)
    probe.write_text("from ..models import load_encoder\nX = 'chemteb_eval.engine.cache:f'\n")
    found = _file_violations(probe, "results", "probe.py", ["chemteb_eval", "results"])
    assert any("results may not use models" in v for v in found)
    assert any("results may not use engine" in v for v in found)
    assert _file_violations(probe, "no-such-room", "probe.py") != []


def test_the_docs_cite_the_room_map_and_keep_no_copy() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/rooms.md" in readme
    for text in (readme, (REPO_ROOT / "docs" / "extending.md").read_text(encoding="utf-8")):
        assert "| must never use |" not in text  # the table lives in one place


def test_metrics_table_matches_the_module_folders() -> None:
    folders = {p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / "README.md").is_file()}
    assert folders == {m.name for m in METRICS}
    for metric in METRICS:
        assert (REPO_ROOT / "metrics" / metric.name / f"{metric.name}.py").is_file()
        assert callable(metric.load_function())


def test_every_task_kind_has_a_data_class_and_a_runner_entry() -> None:
    assert set(KINDS) == set(DATA_CLASSES) == set(KIND_RUNS)
    for name, kind in KINDS.items():
        assert DATA_CLASSES[name].__name__ == kind.data_class
        assert DATA_CLASSES[name].kind == name
        assert set(kind.detail_keys) >= {kind.paper_metric} - {None}


@pytest.mark.parametrize(
    ("spec", "backend", "name", "hub_id"),
    [
        ("sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers", None, "same"),
        ("./my-model", "sentence-transformers", "./my-model", None),
        ("transformers:allenai/scibert_scivocab_uncased", "transformers", None, "name"),
        ("transformers-cls:org/m", "transformers-cls", "org/m", "org/m"),
        ("model2vec:minishlab/potion-base-8M", "model2vec", None, "name"),
        ("word2vec:vectors/w2v.bin", "word2vec", "vectors/w2v.bin", None),
        ("fasttext:org/model.bin", "fasttext", "org/model.bin", None),
        ("openai:text-embedding-3-large", "openai", "text-embedding-3-large", None),
        ("C:/models/x", "sentence-transformers", "C:/models/x", None),
    ],
)
def test_one_model_spec_parser(
    spec: str, backend: str, name: str | None, hub_id: str | None
) -> None:
    parsed = parse_model_spec(spec)
    expected_name = name or (spec if backend == "sentence-transformers" else spec.split(":", 1)[1])
    assert parsed.backend == backend and parsed.name == expected_name
    expected_hub = {"same": spec, "name": expected_name}.get(hub_id or "", hub_id)
    assert parsed.hub_id == expected_hub
    assert str(parsed) == spec


@pytest.mark.parametrize("spec", ["", "   ", "openai:", "transformers:"])
def test_model_spec_errors_name_the_argument(spec: str) -> None:
    with pytest.raises(ValueError, match="model: "):
        parse_model_spec(spec)


def test_one_repo_id_check() -> None:
    from chemteb_eval.hub._repo import check_repo_id

    assert check_repo_id("org/name") == "org/name"
    for bad in ("name", "a/b/c", "/name", "org/", "org/na me", "org/name!"):
        with pytest.raises(ValueError, match=r"repo_id: .* is not 'org/name'"):
            check_repo_id(bad)


def test_every_imported_package_is_declared() -> None:
    """Every third-party package the code imports is a declared dependency (core or an extra):
    a missing one works here, where the dev extra pulls it in, and fails on a user's install."""
    import importlib.metadata as metadata

    declared = {
        re.split(r"[\s;<>=!~\[]", r, maxsplit=1)[0].lower().replace("_", "-")
        for r in metadata.requires("chemteb-eval") or []
    }
    providers = metadata.packages_distributions()
    missing = set()
    for path in PACKAGE.rglob("*.py"):
        for _, name in _imports(path):
            top = name.split(".")[0]
            if not top or top == "chemteb_eval" or top in sys.stdlib_module_names:
                continue
            dists = {d.lower().replace("_", "-") for d in providers.get(top, [])}
            if dists and not dists & declared:
                missing.add(f"{top} ({', '.join(sorted(dists))}) in {path.relative_to(REPO_ROOT)}")
    assert not missing, sorted(missing)


@pytest.mark.slow
def test_the_wheel_carries_the_metric_folders(tmp_path: Path) -> None:
    """``pip wheel`` of the checkout (hatchling, no dependencies) holds every metric module
    folder under chemteb_eval/_metrics, and ``metrics_root`` finds them in an unpacked wheel."""
    import subprocess
    import sys
    import zipfile

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(tmp_path),
            str(REPO_ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    wheel = next(tmp_path.glob("chemteb_eval-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    for metric in METRICS:
        assert f"chemteb_eval/_metrics/{metric.name}/{metric.name}.py" in names
        assert f"chemteb_eval/_metrics/{metric.name}/README.md" in names
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from chemteb_eval.hub.publish import metrics_root; print(metrics_root())"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "site")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.strip() == str(tmp_path / "site" / "chemteb_eval" / "_metrics")


def _type_name_comparisons(path: Path) -> list[int]:
    """The line of each ``==``/``!=``/``in`` comparison (or ``case``) of ``path`` against a
    task type's name."""

    def names(node: ast.AST) -> set[str]:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return {node.value}
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return {v for e in node.elts for v in names(e)}
        return set()

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Compare):
            compared = names(node.left).union(*(names(c) for c in node.comparators))
            if compared & set(KINDS):
                found.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and names(node.value) & set(KINDS):
            found.append(node.lineno)
    return found


def test_nothing_branches_on_a_task_type_name() -> None:
    # A type's facts are TaskKind fields, its loader an entry of HUB_LOADERS, its evidence a
    # record beside its scorer: no code compares a task's type with a type name (19 did).
    found = []
    for folder in ("chemteb_eval", *ROOT_FOLDERS):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            shown = path.relative_to(REPO_ROOT)
            found += [f"{shown}:{line}" for line in _type_name_comparisons(path)]
    assert found == []


def test_the_type_name_check_can_fail(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f(t):\n    return t == 'Retrieval' or t in ('STS', 'x')\n"
        "def g(t):\n    match t:\n        case 'NER':\n            return 1\n"
    )
    assert _type_name_comparisons(probe) == [2, 2, 5]


def test_every_task_kind_has_a_loader_entry_and_its_evidence_record_beside_its_scorer() -> None:
    from chemteb_eval.data.loader import HUB_LOADERS
    from chemteb_eval.scoring.uncertainty import item_records

    assert set(HUB_LOADERS) == set(KINDS)  # an unknown type is never loaded as another
    records = item_records()
    assert set(records) <= set(KINDS)
    for name, record in records.items():
        assert record.task_type == name
        assert record.__module__.startswith("chemteb_eval.scoring.")
    for kind in KINDS.values():  # a mean of items can be resampled item by item
        assert not kind.mean_of_items or kind.name in records


# -- one home per file format ----------------------------------------------------------------

_HOME_LINE = re.compile(r"^- `([^`]+)`: (.*)$")
_HOME_MODULE = re.compile(r"`(\w+/\w+\.py)`")


def read_format_homes(path: Path = ROOM_MAP) -> dict[str, frozenset[str]]:
    """The list under "One home per file format" in ``docs/rooms.md``: each file's name (or
    ``yaml``: the modules that parse YAML) and its home modules, as paths in the package."""
    text = path.read_text(encoding="utf-8").split("## One home per file format", 1)[1]
    text = text.split("\n## ", 1)[0]
    homes: dict[str, frozenset[str]] = {}
    name = None
    for line in text.splitlines():
        match = _HOME_LINE.match(line)
        if match:
            name, rest = match.groups()
        elif name is not None and line.startswith("  "):
            rest = line  # the entry goes on
        else:
            name = None
            continue
        found = {f"chemteb_eval/{m}" for m in _HOME_MODULE.findall(rest)}
        homes[name] = homes.get(name, frozenset()) | found
    return homes


def _format_uses(path: Path, names: Iterable[str]) -> dict[str, list[int]]:
    """The lines where ``path`` names each of ``names`` in a string that is not a docstring
    (or an f-string's text), and where it imports ``yaml`` (under ``"yaml"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bare = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in bare:
            for name in names:
                if name in node.value:
                    found.setdefault(name, []).append(node.lineno)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and not node.level:
                modules.append(node.module or "")
            if any(m.split(".")[0] == "yaml" for m in modules):
                found.setdefault("yaml", []).append(node.lineno)
    return found


def _strays(homes: Mapping[str, frozenset[str]], root: Path = PACKAGE) -> list[str]:
    files = [name for name in homes if name != "yaml"]
    bad = []
    for path in sorted(root.rglob("*.py")):
        shown = str(path.relative_to(root.parent))
        for name, lines in _format_uses(path, files).items():
            if shown not in homes[name]:
                bad += [f"{shown}:{line} names {name}, whose home is elsewhere" for line in lines]
    return bad


def test_every_file_format_has_one_home() -> None:
    """``model_meta.json``, ``runs.jsonl``, the recorded ``{Task}.task.yaml``,
    ``api-models.json`` and the embedding cache's ``.block`` files are each named (so read and written) by one module, and a task's YAML
    declaration is parsed only in ``tasks``: everyone else asks the home (docs/rooms.md)."""
    homes = read_format_homes()
    names = {"model_meta.json", "runs.jsonl", ".task.yaml", "api-models.json", ".block", "yaml"}
    assert set(homes) == names
    for name, modules in homes.items():
        assert modules, name
        for module in modules:  # each home exists, and is where the name is
            assert name in _format_uses(REPO_ROOT / module, [name]), (name, module)
        assert len(modules) == 1 or name == "yaml", f"{name} has more than one home"
    assert _strays(homes) == []
    yaml_in_tasks = {m for m in homes["yaml"] if m.startswith("chemteb_eval/tasks/")}
    assert yaml_in_tasks == {"chemteb_eval/tasks/declaration.py"}
    assert not any(
        m.startswith(("chemteb_eval/runner/", "chemteb_eval/data/")) for m in homes["yaml"]
    )


def test_the_format_home_check_can_fail(tmp_path: Path) -> None:
    package = tmp_path / "chemteb_eval"
    (package / "runner").mkdir(parents=True)
    (package / "runner" / "probe.py").write_text(
        '"""Writes model_meta.json (a docstring: not counted)."""\n'
        "def f(folder):\n    import yaml\n\n"
        '    return folder / "model_meta.json", f"{folder}.task.yaml", yaml.safe_load("a")\n'
    )
    homes = {
        "model_meta.json": frozenset({"chemteb_eval/results/model_folder.py"}),
        ".task.yaml": frozenset({"chemteb_eval/tasks/recorded.py"}),
        "yaml": frozenset({"chemteb_eval/tasks/declaration.py"}),
    }
    assert sorted(_strays(homes, package)) == [
        "chemteb_eval/runner/probe.py:3 names yaml, whose home is elsewhere",
        "chemteb_eval/runner/probe.py:5 names .task.yaml, whose home is elsewhere",
        "chemteb_eval/runner/probe.py:5 names model_meta.json, whose home is elsewhere",
    ]


# -- no import circle, no run-time module state -----------------------------------------------


def test_no_import_circle_among_the_packages_modules() -> None:
    """Every import counts: module level, inside a function, under ``TYPE_CHECKING``. A table
    names what it dispatches to as ``"module:Class"`` strings, which import nothing."""
    from .helpers.house import circles, graph

    edges = graph()
    assert len(edges) > 90 and sum(map(len, edges.values())) > 200  # the graph is read
    assert circles(edges) == []
    # the finder finds one: a back edge closes a circle
    looped = {**edges, "chemteb_eval.errors": {"chemteb_eval.results.schema"}}
    assert any("chemteb_eval.errors" in c for c in circles(looped))


# Module state a process keeps on purpose: caches of facts about its environment, never of a
# caller's choices (a registry mutated at run time made one run depend on another's calls).
ALLOWED_STATE = {
    ("chemteb_eval/_env.py", "_probes"),  # the Hub's answer to one probe, kept a minute
    ("space/views.py", "_CSV_DIR"),  # this process's private download folder (mkdtemp, 0700)
    # torch's thread count is one per process: the runs sharing it (one_thread_per_call) count
    # themselves, so that the last out restores what the first in saved (issue 46)
    ("chemteb_eval/models/_threads.py", "_ENTERED"),
    ("chemteb_eval/models/_threads.py", "_SAVED"),
}
_MUTATORS = {"append", "add", "update", "setdefault", "pop", "clear", "extend", "remove"}
_MUTATORS |= {"insert", "discard", "popitem", "__setitem__"}


def _module_state(path: Path) -> set[str]:
    """The module-level names of ``path`` that a function rebinds (``global``) or mutates
    (a container method, an item assignment or deletion)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {
        t.id
        for node in tree.body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
    }
    found = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(node.names)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name) and node.func.attr in _MUTATORS:
                    found.add(owner.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = (
                    node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                )
                found.update(
                    t.value.id
                    for t in targets
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                )
    return found & top


def test_no_room_keeps_run_time_mutable_module_state() -> None:
    state = {
        (str(path.relative_to(REPO_ROOT)), name)
        for folder in ("chemteb_eval", *ROOT_FOLDERS)
        for path in sorted((REPO_ROOT / folder).rglob("*.py"))
        for name in _module_state(path)
    }
    assert state == ALLOWED_STATE


def test_the_error_tree_in_errors_docstring_is_the_classes() -> None:
    """``errors.py`` draws the exception tree (as httpx does); every ``ChemtebError`` subclass
    of the package is on it, and nothing else."""
    import importlib
    import pkgutil

    import chemteb_eval
    from chemteb_eval import errors

    for module in pkgutil.walk_packages(chemteb_eval.__path__, "chemteb_eval."):
        if not module.name.endswith("__main__"):  # every module's errors join the tree
            importlib.import_module(module.name)

    def ours(cls: type) -> set[str]:
        found: set[str] = set()
        subs: list[type] = cls.__subclasses__()
        for sub in subs:
            if sub.__module__.startswith("chemteb_eval."):  # not a test's own subclass
                found |= {sub.__name__, *ours(sub)}
        return found

    drawn = set(re.findall(r"[├└]── (\w+)", errors.__doc__ or ""))
    assert drawn == ours(errors.ChemtebError) and len(drawn) >= 5
    assert "HubUnreachableError" not in drawn  # one Hub-unreachable error


# -- the house's shape (issue 45): what a room may grow to ---------------------------------------

# The public ``run`` keeps the keyword list its callers use (the CLI, tests, notebooks: the
# package's front door) and only builds the two values the stages take; every function that does
# the work takes at most 8 parameters.
_FACADES = {"chemteb_eval/runner/stages.py:run"}


def _sizes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines())
        for p in sorted((root / "chemteb_eval").rglob("*.py"))
    }


def _functions(root: Path, folder: str) -> list[tuple[str, int, int]]:
    """(file:function, lines, parameters) of every function under ``chemteb_eval/folder``."""
    out = []
    for path in sorted((root / "chemteb_eval" / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                named = [*args.posonlyargs, *args.args, *args.kwonlyargs]
                count = len([a for a in named if a.arg not in ("self", "cls")])
                count += bool(args.vararg) + bool(args.kwarg)
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                out.append((f"{path.relative_to(root)}:{node.name}", lines, count))
    return out


def _shape_faults(root: Path) -> list[str]:
    faults = []
    for name, lines in _sizes(root).items():
        room = name.split("/")[1]
        limit = 400 if room in ("runner", "cli") else 600
        if lines > limit and name != "chemteb_eval/tasks/chemteb.py":  # the paper's task records
            faults.append(f"{name}: {lines} lines (at most {limit})")
    for name, lines, params in _functions(root, "runner"):
        if lines > 60:
            faults.append(f"{name}: {lines} lines (at most 60 in runner/)")
        if params > 8 and name not in _FACADES:
            faults.append(f"{name}: {params} parameters (at most 8 in runner/)")
    return faults


def test_the_rooms_keep_their_shape() -> None:
    """No file in runner/ or cli/ over 400 lines, no other package file over 600 (but the
    paper's task records), no function in runner/ over 60 lines or 8 parameters."""
    assert _shape_faults(REPO_ROOT) == []


def test_the_shape_check_can_fail(tmp_path: Path) -> None:
    runner = tmp_path / "chemteb_eval" / "runner"
    runner.mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    (runner / "big.py").write_text(
        f"def long(a, b, c, d, e, f, g, h, i):\n{body}\n" + "\n" * 400, encoding="utf-8"
    )
    faults = _shape_faults(tmp_path)
    assert len(faults) == 3 and "big.py: " in faults[0] and "9 parameters" in faults[2]
