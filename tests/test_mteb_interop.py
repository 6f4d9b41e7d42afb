"""MTEB's own loaders read the folders ``chemteb run`` writes, with our values.

A user checks "results in MTEB's layout" with ``mteb.ResultCache(path).load_results(...)``: here
that call (with and without ``require_model_meta``), ``TaskResult.from_disk`` and
``to_dataframe()`` read a fresh run, a rerun, a local model's folder, a folder written before
run records moved out of MTEB's way (once a run has migrated it), a Hub task's folder (served by
the loopback Hub) and a sharded run's (tests/test_sharding.py) — and every value they give is
the one our readers give. Cost: ~40 s (three small PipChem runs, one loopback-Hub subprocess).
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.data import load_task
from chemteb_eval.data.fingerprint import data_fingerprint
from chemteb_eval.results import NO_REVISION
from chemteb_eval.results.board import read_results
from chemteb_eval.results.runs import LEGACY_RUN_META, RUNS_FILE, run_record
from chemteb_eval.results.schema import ResultFile
from chemteb_eval.runner import run
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

from .conftest import REPO_ROOT
from .helpers.hashing_encoder import HashingEncoder

mteb = pytest.importorskip("mteb", reason="mteb is a dev dependency: pip install -e '.[dev]'")

pytestmark = pytest.mark.slow

PIPCHEM = get_benchmark("PipChem")


def mteb_load(root: Path, *, require_model_meta: bool = True) -> Any:
    """What a user runs: MTEB's cache over ``root/results``, the local folders only."""
    return mteb.ResultCache(root).load_results(
        require_model_meta=require_model_meta, include_remote=False
    )


def assert_mteb_reads_ours(root: Path, *, models: int = 1, bench: Any = PIPCHEM) -> None:
    """MTEB reads every task file under ``root/results`` and each value equals ours: the
    dataframe's main scores equal ``read_results``'s and every score key of every entry equals
    the file's (MTEB may add keys of its own; it must not change ours)."""
    ours = {m.model: m for m in read_results([root / "results"], bench)}
    files = {
        (p.parent.parent.name, p.stem): ResultFile.read(p)
        for p in (root / "results").glob("*/*/*.json")
        if p.name != "model_meta.json"
    }
    assert files and all(p.name != LEGACY_RUN_META for p in (root / "results").rglob("*.json"))
    for require in (True, False):
        loaded = mteb_load(root, require_model_meta=require)
        assert len(loaded.model_results) == models
        frame = loaded.to_dataframe()
        assert not frame.empty
        read = 0
        for model_result in loaded.model_results:
            assert model_result.model_name in ours, (model_result.model_name, list(ours))
            mine = ours[model_result.model_name]
            folder = mine.folder.name
            for task_result in model_result.task_results:
                file = files[(folder, task_result.task_name)]
                assert task_result.dataset_revision == file.dataset_revision
                assert isinstance(task_result.dataset_revision, str)
                for split, entries in file.scores.items():
                    theirs = task_result.scores[split]
                    assert len(theirs) == len(entries)
                    for mine_entry, their_entry in zip(entries, theirs, strict=True):
                        for key, value in mine_entry.items():
                            assert their_entry[key] == value, (task_result.task_name, key)
                # the dataframe's cell is the main score our ranking uses
                cell = frame.loc[frame["task_name"] == task_result.task_name, mine.model]
                assert len(cell) == 1 and math.isclose(
                    float(cell.iloc[0]), mine.scores[task_result.task_name], rel_tol=1e-12
                )
                read += 1
        assert read == len(files)


def _run(model: Any, out: Path, **options: Any) -> Any:
    return run(
        model, output_dir=out, use_cache=False, progress=False, log=lambda m: None, **options
    )


def test_a_fresh_run_and_its_reruns_load_in_mteb(small_suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "results"
    report = _run(HashingEncoder(), out)
    assert set(report.statuses.values()) == {"done"} and len(report.statuses) == 7
    assert_mteb_reads_ours(tmp_path)
    # local tasks name their data by content: the fingerprint of what was scored
    for task in benchmark_tasks(PIPCHEM):
        written = json.loads((report.results_dir / f"{task.name}.json").read_text())
        assert task.revision is None
        assert written["dataset_revision"] == data_fingerprint(load_task(task))
        assert written["dataset_revision"].startswith("sha256:")
    (model,) = read_results([out], PIPCHEM)
    assert model.revision_mismatches == 0  # a fingerprint is what a local task pins

    again = _run(HashingEncoder(), out)  # everything done: skipped, one more run record
    assert set(again.statuses.values()) == {"skipped"}
    redo = _run(HashingEncoder(), out, overwrite=True)
    assert redo.main_scores == report.main_scores
    assert len((report.results_dir / RUNS_FILE).read_text().splitlines()) == 3
    assert run_record(report.results_dir)["run_id"] == redo.run_id
    assert_mteb_reads_ours(tmp_path)


def test_a_local_model_folder_loads_in_mteb(small_suite: Path, tmp_path: Path) -> None:
    from .test_adversarial_round2 import _local_model

    report = _run(_local_model(tmp_path / "exp" / "final", 3), tmp_path / "results")
    assert report.results_dir.name == NO_REVISION
    meta = json.loads((report.results_dir / "model_meta.json").read_text())
    assert meta["revision"] == NO_REVISION and meta["weights"].startswith("files:")
    assert_mteb_reads_ours(tmp_path)
    (result,) = mteb_load(tmp_path).model_results
    assert result.model_name == "final" and result.model_revision == NO_REVISION
    # other weights of the same name: their own folder and name, two columns in MTEB's frame
    other = _run(_local_model(tmp_path / "exp2" / "final", 4), tmp_path / "results")
    assert other.results_dir.parent.name.startswith("final-")
    assert_mteb_reads_ours(tmp_path, models=2)
    frame = mteb_load(tmp_path).to_dataframe()
    assert {"final", other.results_dir.parent.name} <= set(frame.columns)


def test_a_scientific_text_folder_loads_in_mteb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """STS and NER files (nested per-type scores, text fields such as the OOV policy) of the
    SciText suite, on a tiny copy of its shared data."""
    from .test_scitext import _tiny_shared

    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(_tiny_shared(tmp_path / "shared")))
    report = _run(HashingEncoder(dim=32), tmp_path / "results", benchmark="SciText")
    assert set(report.statuses.values()) == {"done"}
    assert_mteb_reads_ours(tmp_path, bench=get_benchmark("SciText"))


def _make_legacy(folder: Path) -> dict[str, Any]:
    """Turn a fresh folder into one written before this change: ``run_meta.json`` beside the
    results (the latest run's record), no ``runs.jsonl``, null revisions."""
    record = run_record(folder)
    (folder / LEGACY_RUN_META).write_text(json.dumps(record))
    (folder / RUNS_FILE).unlink()
    meta = json.loads((folder / "model_meta.json").read_text())
    (folder / "model_meta.json").write_text(json.dumps({**meta, "revision": None}))
    for path in folder.glob("PipChem*.json"):
        payload = json.loads(path.read_text())
        path.write_text(json.dumps({**payload, "dataset_revision": None}))
    return record


def test_an_old_folder_keeps_working_and_a_rerun_makes_it_loadable(
    small_suite: Path, tmp_path: Path
) -> None:
    from .test_adversarial_round2 import _local_model

    out = tmp_path / "results"
    report = _run(_local_model(tmp_path / "m", 4), out)
    fresh = read_results([out], PIPCHEM)
    record = _make_legacy(report.results_dir)
    # ours read the old folder as before: same scores, no mismatch, the run's hardware
    (old,) = read_results([out], PIPCHEM)
    assert old.scores == fresh[0].scores and old.revision_mismatches == 0
    assert old.run_meta == record and not old.skipped
    with pytest.raises((KeyError, ValueError)):  # why it moved: MTEB takes it for a task
        mteb.TaskResult.from_disk(report.results_dir / LEGACY_RUN_META)
    # a rerun (every task found done) moves the record into runs.jsonl, oldest first
    again = _run(_local_model(tmp_path / "m", 4), out)
    assert again.results_dir == report.results_dir
    assert not (report.results_dir / LEGACY_RUN_META).exists()
    lines = [json.loads(x) for x in (report.results_dir / RUNS_FILE).read_text().splitlines()]
    assert [r["run_id"] for r in lines] == [record["run_id"], again.run_id]
    assert run_record(report.results_dir) == record  # the rerun scored nothing
    # null revisions of old task files stay; MTEB needs a string, so --overwrite rewrites them
    _run(_local_model(tmp_path / "m", 4), out, overwrite=True)
    assert_mteb_reads_ours(tmp_path)


_HUB_RUN = """
import json, sys
from dataclasses import replace
sys.path.insert(0, sys.argv[1])
from tests.helpers.hashing_encoder import HashingEncoder
from chemteb_eval.runner import run
from chemteb_eval.tasks import get_task
task = replace(get_task(sys.argv[2]), hf_path="chemteb/" + sys.argv[2], revision=sys.argv[3],
               builder=None)
report = run(HashingEncoder(), tasks=[task], output_dir=sys.argv[4], use_cache=False,
             progress=False, log=lambda m: None)
print(json.dumps(report.statuses))
"""


def test_a_hub_task_folder_loads_in_mteb(small_suite: Path, tmp_path: Path) -> None:
    """A task with a Hub commit (here: PipChem's pair task published to the loopback Hub and
    run from there) records that commit, and MTEB reads the folder."""
    from .helpers.fake_hub import FakeHub
    from .test_hub import TOKEN, chemteb, python

    hub = FakeHub()
    try:
        hub.add_token(TOKEN, "alice", orgs=("chemteb",))
        name = "PipChemNameSMILESPC"
        args = ("publish-dataset", "--namespace", "chemteb", "--scale", "small", "--task", name)
        done = chemteb(hub, tmp_path, *args)
        assert done.returncode == 0, done.stderr
        sha = hub.repos[("dataset", f"chemteb/{name}")].refs["main"]
        out = tmp_path / "results"
        ran = python(hub, tmp_path, _HUB_RUN, str(REPO_ROOT), name, sha, str(out))
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert json.loads(ran.stdout.strip().splitlines()[-1]) == {name: "done"}
    finally:
        hub.close()
    (path,) = out.glob(f"*/*/{name}.json")
    assert json.loads(path.read_text())["dataset_revision"] == sha
    ours = read_results([out], PIPCHEM)
    (loaded,) = mteb_load(tmp_path).model_results
    (task_result,) = loaded.task_results
    assert task_result.dataset_revision == sha
    assert task_result.get_score() == ours[0].scores[name]


def test_mteb_reads_the_paper_layout_we_read(tmp_path: Path, shared_dir: Path) -> None:
    """The other direction, kept true: MTEB-written folders (the paper's) give the same main
    score per file in our reader as in MTEB's (a sample of models, to stay fast)."""
    from chemteb_eval.results.scan import scan_results

    source = shared_dir / "reference" / "paper_results"
    picked = sorted(p for p in source.iterdir() if p.is_dir())[:3]
    for folder in picked:
        shutil.copytree(folder, tmp_path / "results" / folder.name)
    loaded = mteb_load(tmp_path, require_model_meta=False)
    assert len(loaded.model_results) == len(picked)
    ours = {m.folder.name: m for m in scan_results([tmp_path / "results"])}
    for model_result in loaded.model_results:
        files = {f.task_name: f for f in ours[model_result.model_name.replace("/", "__")].files}
        assert len(files) == len(model_result.task_results) >= 30
        for task_result in model_result.task_results:
            file = files[task_result.task_name]
            mine = file.score("main_score", list(file.scores))
            assert mine is not None
            assert math.isclose(task_result.get_score(), mine, rel_tol=1e-12), file.task_name
