"""The Hub's ``.eval_results/*.yaml`` files, read back by the real clients: huggingface_hub's
``parse_eval_result_entries`` and MTEB's own ``HFEvalResult`` model (which forbids unknown keys).

Each entry names its source (chemteb-eval, with a link) and the time its run finished; a
benchmark with every task present gets its overall entry. Cost: ~2 s, no network.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from chemteb_eval import __version__
from chemteb_eval.hub.model_card import (
    benchmark_means,
    eval_result_files,
    find_task_results,
    project_url,
)
from chemteb_eval.results.board import read_results
from chemteb_eval.results.ranking import rank_models
from chemteb_eval.tasks import get_benchmark

from .conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "space"))
from synthetic import write_synthetic_results

PAPER = get_benchmark("ChemTEB(paper)")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = write_synthetic_results(tmp_path / "results", n_models=1, seed=3)
    (model,) = root.iterdir()
    return model / ("0" * 40)


def _files(folder: Path, **options: Any) -> tuple[dict[str, str], list[str]]:
    said: list[str] = []
    _, found = find_task_results(folder, log=said.append)
    return eval_result_files(found, log=said.append, **options), said


def _entries(text: str) -> list[Any]:
    data = yaml.safe_load(text)
    if all("revision" in e["dataset"] for e in data):  # MTEB's model requires the key
        mteb = pytest.importorskip("mteb._hf_integration.eval_result_model")
        mteb.HFEvalResults.model_validate(data)  # MTEB's model of these files accepts ours
    return parse_eval_result_entries(data)


def test_every_entry_names_its_source_and_round_trips(folder: Path) -> None:
    files, _ = _files(folder)
    assert len(files) == len(list(folder.glob("*.json"))) - 1 >= len(PAPER.tasks)  # model_meta
    for name, text in files.items():
        entries = _entries(text)
        assert entries and name == f".eval_results/{entries[-1].task_id}.yaml"
        for entry in entries:
            assert entry.source_url == project_url() == "https://huggingface.co/chemteb"
            assert entry.source_name == f"chemteb-eval v{__version__}"
            assert entry.date is None  # synthetic files name no run and no date: none invented
        written = json.loads((folder / f"{entries[-1].task_id}.json").read_text())
        main = [e["main_score"] for s in written["scores"].values() for e in s]
        assert entries[-1].value == round(sum(main) / len(main) * 100, 5)


def test_the_date_is_when_the_run_finished(folder: Path) -> None:
    path = folder / "ChemNQRetrieval.json"
    payload = json.loads(path.read_text())
    path.write_text(json.dumps({**payload, "chemteb_run_id": "r1"}))
    (folder / "runs.jsonl").write_text(
        json.dumps({"run_id": "r1", "finished": "2026-11-30T08:15:02+00:00"}) + "\n{torn"
    )
    mteb_file = folder / "SDSGlovesClassification.json"
    mteb_file.write_text(json.dumps({**json.loads(mteb_file.read_text()), "date": 1764547200.5}))
    files, _ = _files(folder)
    assert {e.date for e in _entries(files[".eval_results/ChemNQRetrieval.yaml"])} == {
        "2026-11-30T08:15:02Z"
    }
    assert {e.date for e in _entries(files[".eval_results/SDSGlovesClassification.yaml"])} == {
        "2025-12-01T00:00:00Z"  # MTEB 2's POSIX time, in UTC
    }


@pytest.mark.parametrize(
    "hostile", ["yesterday", "", True, 1e300, -1e20, float("nan"), ["2026-01-01"], "9" * 100]
)
def test_a_date_that_is_not_a_time_is_dropped(folder: Path, hostile: Any) -> None:
    path = folder / "ChemNQRetrieval.json"
    payload = json.loads(path.read_text())
    path.write_text(json.dumps({**payload, "date": hostile}))
    files, _ = _files(folder)
    assert {e.date for e in _entries(files[".eval_results/ChemNQRetrieval.yaml"])} == {None}


def test_a_complete_benchmark_gets_its_overall_entry(folder: Path) -> None:
    files, said = _files(folder)
    assert ".eval_results/ChemTEB(paper).yaml" not in files  # no Hub dataset to file it under
    assert any(
        "ChemTEB(paper): all 35 tasks" in line and "--benchmark-repo" in line for line in said
    )
    files, _ = _files(folder, benchmark_repos={"ChemTEB(paper)": "someone/chemteb"})
    (entry,) = _entries(files[".eval_results/ChemTEB(paper).yaml"])
    (model,) = read_results([folder.parent.parent], PAPER)
    (row,) = rank_models([model], PAPER)
    assert entry.dataset_id == "someone/chemteb" and entry.task_id == "ChemTEB(paper)"
    assert entry.value == round(row["mean"] * 100, 5)  # the leaderboard's mean over tasks
    assert entry.dataset_revision is None  # the benchmark repo's commit is not known: none written
    assert entry.source_url == project_url()
    # one task missing: no overall entry
    (folder / "ChemNQRetrieval.json").unlink()
    _, found = find_task_results(folder, log=lambda m: None)
    assert all(bench.name != "ChemTEB(paper)" for bench, _, _ in benchmark_means(found))


def test_benchmark_repo_flag_errors(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from chemteb_eval.cli import main

    for bad, named in (("ChemTEB(paper)", "BENCHMARK=ORG/NAME"), ("Nope=a/b", "not a benchmark")):
        code = main(["push-results", str(folder), "--repo-id", "a/b", "--dry-run",
                     "--benchmark-repo", bad])  # fmt: skip
        assert code == 2
        err = capsys.readouterr().err
        assert named in err and "Traceback" not in err
    code = main(["push-results", str(folder), "--repo-id", "a/b", "--dry-run",
                 "--benchmark-repo", "ChemTEB(paper)=not a repo"])  # fmt: skip
    assert code == 2 and "--benchmark-repo" in capsys.readouterr().err


@pytest.mark.parametrize("bad", [float("nan"), True, 42, float("inf"), -3])
def test_a_score_rank_would_refuse_is_never_published(folder: Path, bad: Any) -> None:
    path = folder / "ChemNQRetrieval.json"
    payload = json.loads(path.read_text())
    payload["scores"]["test"][0]["main_score"] = bad
    path.write_text(json.dumps(payload))
    with pytest.raises(ValueError, match=r"ChemNQRetrieval\.json: main_score is .* fix or remove"):
        _files(folder)


@pytest.mark.parametrize(
    "finished, expected",
    [
        ("0999-06-01T10:00:00+00:00", "0999-06-01T10:00:00Z"),  # four digits: sorts as a time
        ("0001-01-01T00:00:00+14:00", None),  # before year 1 in UTC: dropped, not a crash
        ("9999-12-31T23:59:59-12:00", None),  # after year 9999 in UTC
        ("2026-11-30T08:15:02.123456-05:00", "2026-11-30T13:15:02Z"),
    ],
)
def test_dates_at_the_edges(folder: Path, finished: str, expected: str | None) -> None:
    path = folder / "ChemNQRetrieval.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "chemteb_run_id": "r1"}))
    lines = [{"run_id": ["unhashable"]}, {"run_id": "r1", "finished": finished}]
    (folder / "runs.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    files, _ = _files(folder)
    assert {e.date for e in _entries(files[".eval_results/ChemNQRetrieval.yaml"])} == {expected}


def test_a_benchmark_task_at_another_revision_gives_no_mean(folder: Path) -> None:
    path = folder / "ChemNQRetrieval.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "dataset_revision": "f" * 40}))
    files, said = _files(folder, benchmark_repos={"ChemTEB(paper)": "someone/chemteb"})
    assert ".eval_results/ChemTEB(paper).yaml" not in files
    assert any(
        line.startswith("ChemTEB(paper): --benchmark-repo given, but not every task")
        for line in said
    )
