"""Names a custom task may not take: every task name MTEB 2.x knows, and the stems of the files a
run writes in a model's results folder, in any letter case; the MTEB list is package data that
the script regenerates. ~1 s; the script's comparison ~6 s (slow: it imports mteb)."""

from __future__ import annotations

import importlib.util
import re
import sys
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from chemteb_eval.cli import main
from chemteb_eval.results.model_folder import NOT_RESULTS
from chemteb_eval.results.runs import LEGACY_RUN_META, RUNS_FILE
from chemteb_eval.tasks import reserved
from chemteb_eval.tasks.catalog import TaskCatalog
from chemteb_eval.tasks.custom import read_task_file
from chemteb_eval.tasks.reserved import (
    MODEL_FOLDER_STEMS,
    MTEB_VERSION,
    mteb_task_names,
    reserved_because,
)

from .conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "update_mteb_task_names.py"
PAIRS = "sentence1,sentence2,label\naspirin,acetylsalicylic acid,1\naspirin,paracetamol,0\n"


def _task_file(folder: Path, name: str) -> Path:
    (folder / "pairs.csv").write_text(PAIRS)
    path = folder / f"{name}.yaml"
    path.write_text(f"name: {name}\ntype: PairClassification\nsource: {{path: pairs.csv}}\n")
    return path


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Banking77Classification", r"'Banking77Classification' is an MTEB task's name \(mteb 2"),
        ("banking77classification", r"the MTEB task 'Banking77Classification''s name, letter"),
        ("PersianTextTone", "is an MTEB task's name"),  # an old name mteb still maps
        ("model_meta", r"'model_meta' is the stem of a file a run writes .* \(model_meta\.\*\)"),
        ("RUNS", r"'RUNS' is the stem of a file .* \(runs\.\*\)"),
        ("Run_Meta", r"\(run_meta\.\*\)"),
    ],
)
def test_a_task_file_with_a_reserved_name_is_refused_at_registration_and_by_publish(
    tmp_path: Path, name: str, message: str
) -> None:
    # A task file's name is checked where a registered task's name is: when its task joins a
    # TaskCatalog (`chemteb run --task-file`, rank, the Space), and by publish-dataset.
    declared = read_task_file(_task_file(tmp_path, name))
    with pytest.raises(ValueError, match=f"^name: .*{message}.*; give your task another name\\.$"):
        TaskCatalog.with_tasks([declared.to_task()])
    argv = ["publish-dataset", "--task-file", str(declared.path), "--repo-id", "a/b", "--dry-run"]
    assert main(argv) == 2


def test_ordinary_names_are_not_reserved() -> None:
    for name in ("SolventRetrieval", "SynonymPairs", "Banking77", "model_meta2", "runs.v2"):
        assert reserved_because(name) is None, name


def test_the_model_folder_stems_are_the_files_a_run_writes_beside_results() -> None:
    written = {Path(n).stem for n in (*NOT_RESULTS, RUNS_FILE, LEGACY_RUN_META)}
    assert written == set(MODEL_FOLDER_STEMS)


def test_the_shipped_mteb_list_is_package_data_with_over_1000_sorted_names() -> None:
    text = resources.files("chemteb_eval.tasks").joinpath("mteb_task_names.txt").read_text()
    header, *names = text.splitlines()
    assert re.fullmatch(
        rf"# mteb {re.escape(MTEB_VERSION)}: (\d+) task names; "
        r"regenerate with scripts/update_mteb_task_names\.py",
        header,
    )
    assert header.split()[3] == str(len(names))
    assert len(names) > 1000
    assert names == sorted(set(names))
    assert set(names) == mteb_task_names()
    # every MTEB name is one a task file could declare, so each refusal is reachable
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.()\-]{0,119}", n) for n in names)


def test_the_reserved_check_needs_no_mteb(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mteb", None)  # `import mteb` now raises ImportError
    reserved._names.cache_clear()
    try:
        assert reserved_because("ChemNQRetrieval") is not None
    finally:
        reserved._names.cache_clear()


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("update_mteb_task_names", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_shipped_mteb_list_is_what_the_script_writes() -> None:
    try:
        import mteb
    except ImportError:
        pytest.skip("mteb is not installed: the list cannot be regenerated here")
    script = _script()
    shipped = resources.files("chemteb_eval.tasks").joinpath("mteb_task_names.txt").read_text()
    assert shipped == script.expected(), "run python scripts/update_mteb_task_names.py"
    assert mteb.__version__ == MTEB_VERSION
