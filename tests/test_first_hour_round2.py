"""The first hour, round 2: a mistake is said before the wait, in one go, with the near names.

Cost: ~6 s (two subprocesses that import only the CLI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chemteb_eval.cli import main
from chemteb_eval.tasks import get_benchmark, get_task

from .conftest import REPO_ROOT


def test_benchmark_names_match_in_any_letter_case_and_typos_get_near_names() -> None:
    assert get_benchmark("chemteb").name == "ChemTEB"
    assert get_benchmark("PIPCHEM").name == "PipChem"
    assert get_benchmark("chemteb(paper)").name == "ChemTEB(paper)"
    with pytest.raises(ValueError, match=r"unknown benchmark 'chemtbe'\. Did you mean 'ChemTEB'"):
        get_benchmark("chemtbe")


def test_a_typo_in_b_or_t_is_refused_before_the_runners_imports() -> None:
    code = (
        "import sys\n"
        "from chemteb_eval.cli import main\n"
        "for argv in (['run', '-b', 'chemtbe'], ['run', '-t', 'PipChemWikiTopicClasification']):\n"
        "    print(main(argv))\n"
        "print(sorted(m for m in ('numpy', 'torch', 'datasets', 'chemteb_eval.runner') "
        "if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, timeout=120
    )
    assert done.stdout.split("\n")[:3] == ["2", "2", "[]"], done.stdout + done.stderr
    assert "Did you mean 'ChemTEB'" in done.stderr
    assert "Did you mean 'PipChemWikiTopicClassification'" in done.stderr


def _pairs_task(folder: Path, name: str, header: str) -> Path:
    data = folder / name.lower()
    data.mkdir(parents=True)
    (data / "test.csv").write_text(f"{header}\nx,y,1\nz,w,0\n", encoding="utf-8")
    path = folder / f"{name.lower()}.yaml"
    path.write_text(
        f"name: {name}\ntype: PairClassification\nsource:\n  path: {data.name}\n  format: csv\n",
        encoding="utf-8",
    )
    return path


def test_every_missing_column_of_every_task_file_is_named_before_the_model_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _pairs_task(tmp_path, "SynonymPairsA", "a,b,y")
    second = _pairs_task(tmp_path, "SynonymPairsB", "sentence1,b,label")
    out = tmp_path / "results"
    # a model folder that is not there: had the model loaded first, the error would name it
    argv = ["run", "-m", str(tmp_path / "no-model"), "--output-dir", str(out)]
    assert main([*argv, "--task-file", str(first), str(second)]) != 0
    err = capsys.readouterr().err
    assert "lacks the columns 'sentence1', 'sentence2', 'label'" in err
    assert "its columns: 'a', 'b', 'y'" in err
    assert "SynonymPairsB" in err and "lacks the column 'sentence2'" in err
    assert "no-model" not in err and not out.exists()  # nothing loaded, no empty folder


def test_a_task_file_not_there_names_the_near_ones_beside_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _pairs_task(tmp_path, "Synonyms", "sentence1,sentence2,label")
    assert main(["run", "--task-file", str(tmp_path / "synonym.yaml")]) == 2
    err = capsys.readouterr().err
    assert f"Did you mean {tmp_path / 'synonyms.yaml'}?" in err


def test_an_offline_chemteb_run_says_once_before_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # nothing cached
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    out = tmp_path / "results"
    argv = ["run", "-b", "chemteb", "-m", str(tmp_path / "no-model"), "--output-dir", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("cannot be reached") == 1 and "27 task(s) need the Hub" in err
    assert "ChemNQRetrieval" in err and "chemteb run -b PipChem" in err
    assert "no-model" not in err and not out.exists()


def test_a_run_with_some_hub_tasks_out_of_reach_names_them_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.runner.stages import Plan, _hub_out_of_reach
    from chemteb_eval.tasks import get_task

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    plan = Plan((get_task("PipChemWikiFieldClustering"), get_task("ChemNQRetrieval", "release")))
    said: list[str] = []
    unreachable = _hub_out_of_reach(plan, said.append)
    assert list(unreachable) == ["ChemNQRetrieval"]
    assert unreachable["ChemNQRetrieval"].startswith("HubUnavailableError: ")
    (line,) = said
    assert line.startswith("[failed] 1 of 2 tasks:") and "ChemNQRetrieval." in line


def test_a_run_that_stops_before_its_first_task_leaves_no_empty_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.runner import run

    from .helpers.hashing_encoder import HashingEncoder

    def damaged(*args: object, **kwargs: object) -> None:
        raise ChemtebError("the embedding cache is damaged (in this test)")

    monkeypatch.setattr("chemteb_eval.runner.stages.EmbeddingCache", damaged)
    out = tmp_path / "results"
    task = [get_task("PipChemWikiFieldClustering")]
    with pytest.raises(ChemtebError, match="damaged"):
        run(HashingEncoder(), tasks=task, output_dir=out, cache_dir=tmp_path / "c", log=print)
    assert not out.exists()
    # a folder that held results before is never touched
    kept = out / "org__model" / "rev"
    kept.mkdir(parents=True)
    (kept / "Task.json").write_text("{}")
    with pytest.raises(ChemtebError, match="damaged"):
        run(HashingEncoder(), tasks=task, output_dir=out, cache_dir=tmp_path / "c", log=print)
    assert (kept / "Task.json").is_file()


def test_comparing_a_folder_with_itself_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .test_adversarial_round2 import _write_model

    _write_model(tmp_path / "results", "org__best", 0.9, 1)
    folder = str(tmp_path / "results" / "org__best")
    assert main(["compare", folder, folder, "-b", "PipChem", "--resamples", "100"]) == 0
    assert "A and B are the same folder" in capsys.readouterr().err


def test_rank_help_names_the_custom_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rank", "--help"])
    assert "Custom (the tasks of your task files" in " ".join(capsys.readouterr().out.split())
