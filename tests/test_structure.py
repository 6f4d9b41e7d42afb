"""Checks that guard the map of the house (``../shared/DESIGN.md``'s room table, copied here so
the test does not need ``../shared``): every import, at module level or inside a function, goes
down the table, never up; the rooms' "must never use" lists hold; one table per concept."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from chemteb_eval.data.types import DATA_CLASSES
from chemteb_eval.metric_docs import METRICS
from chemteb_eval.models.spec import parse_model_spec
from chemteb_eval.runner.kinds import KIND_RUNS
from chemteb_eval.tasks import KINDS

from .conftest import REPO_ROOT

# The rooms from the bottom of the house up: a room may import the rooms before it, never those
# after it. ``_files`` (atomic writes) and ``metric_docs``/``evaluate_support``/``widget`` (what
# the evaluate modules share) are leaves placed where their imports allow.
ROOMS = (
    "_env",
    "errors",
    "_files",
    "metric_docs",
    "scoring",
    "tasks",
    "data",
    "models",
    "engine",
    "results",
    "runner",
    "chembench",
    "hub",
    "evaluate_support",
    "widget",
    "cli",
    "__main__",
)
# Libraries a room must never import (DESIGN.md's last column, for third-party packages).
NEVER: dict[str, tuple[str, ...]] = {
    "_env": ("torch", "transformers", "sentence_transformers", "evaluate"),
    "scoring": ("torch", "datasets", "evaluate", "transformers", "huggingface_hub", "requests"),
    "tasks": ("torch", "datasets", "evaluate", "numpy", "transformers"),
    "results": ("torch", "transformers", "sentence_transformers", "evaluate"),
    "chembench": ("torch",),  # generation backends load it through transformers, lazily
}
PACKAGE = REPO_ROOT / "chemteb_eval"


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "chemteb_eval":
        return None
    return parts[1] if len(parts) > 1 else "chemteb_eval"


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, resolved to absolute names, with its line."""
    relative = path.relative_to(REPO_ROOT).with_suffix("")
    package = list(relative.parts[:-1])
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
    return found


def _violations() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        room = rel.parts[0].removesuffix(".py")
        if room == "__init__":
            continue  # the package's own front door re-exports the version only
        assert room in ROOMS, f"{rel}: a room the map does not know; add it to ROOMS and DESIGN"
        for line, name in _imports(path):
            target = _room(name)
            library = name.split(".")[0]
            if target is None:
                if library in NEVER.get(room, ()):
                    bad.append(f"{rel}:{line} imports {name} (never in {room})")
                continue
            if target in ("chemteb_eval", room):
                continue
            if target not in ROOMS or ROOMS.index(target) > ROOMS.index(room):
                bad.append(f"{rel}:{line} imports {name}: {room} may not use {target}")
    return bad


def test_imports_follow_the_room_table() -> None:
    assert _violations() == []


def test_the_import_check_catches_an_upward_import(tmp_path: Path) -> None:
    # The check itself can fail: an import of the runner from scoring is caught, even inside a
    # function.
    probe = PACKAGE / "scoring" / "_probe_for_test.py"
    probe.write_text("def f():\n    from chemteb_eval.runner import run\n    return run\n")
    try:
        assert any("scoring may not use runner" in v for v in _violations())
    finally:
        probe.unlink()


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
    import re
    import sys

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
