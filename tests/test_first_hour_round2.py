"""The first hour, round 2: a mistake is said before the wait, in one go, with the near names.

Cost: ~6 s (two subprocesses that import only the CLI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from chemteb_eval.cli import main
from chemteb_eval.tasks import benchmark_spelling, get_benchmark, get_task

from .conftest import REPO_ROOT


def test_benchmark_names_match_in_any_letter_case_and_typos_get_near_names() -> None:
    # the command line's -b reads any letter case; the API's get_benchmark stays exact
    assert benchmark_spelling("chemteb") == "ChemTEB"
    assert benchmark_spelling("PIPCHEM") == "PipChem"
    assert benchmark_spelling("chemteb(paper)") == "ChemTEB(paper)"
    assert benchmark_spelling("custom") == "Custom"
    assert benchmark_spelling("nothing") == "nothing"
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
    assert "?SynonymPairs" not in err and len(err.strip().splitlines()) == 1  # one clean line
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


def test_a_run_with_some_hub_tasks_out_of_reach_runs_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where some tasks can run, nothing stops before the model loads: each Hub task out of
    reach fails at its load in its own line (``test_first_hour_output``), the others run."""
    from chemteb_eval.data.hub_reader import out_of_reach
    from chemteb_eval.runner.stages import Plan, _hub_out_of_reach

    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(tmp_path / "hub"))
    hub = get_task("ChemNQRetrieval", "release")
    plan = Plan((get_task("PipChemWikiFieldClustering"), hub))
    assert [t.name for t in out_of_reach(plan.tasks)] == ["ChemNQRetrieval"]
    _hub_out_of_reach(plan)  # no error: the PipChem task runs


def test_a_run_that_stops_before_its_first_task_leaves_no_empty_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.runner import run

    from .helpers.hashing_encoder import HashingEncoder

    def damaged(*args: object, **kwargs: object) -> None:
        raise ChemtebError("the embedding cache is damaged (in this test)")

    monkeypatch.setattr("chemteb_eval.runner.encode.EmbeddingCache", damaged)
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


def test_the_install_pages_extras_table_is_pyprojects(tmp_path: Path) -> None:
    """Each extra's "installs" cell names exactly the distributions pyproject.toml gives it
    (the core's row its dependencies): a figure checked, not typed."""
    import re

    import tomllib

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(requirements: list[str]) -> set[str]:
        found = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requirements}
        return {n for n in found if n != "chemteb-eval"}

    extras = {k: names(v) for k, v in project["optional-dependencies"].items()}
    extras["(core)"] = names(project["dependencies"])
    text = (REPO_ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1:4] for line in text.splitlines() if line.startswith("| ")]
    checked = 0
    for extra, installs, _ in rows:
        key = extra.strip().strip("`")
        if key in extras and key not in ("all", "dev"):
            listed = {n.strip().split(" ")[0].lower() for n in installs.split(",")}
            assert listed == extras[key], (key, listed ^ extras[key])
            checked += 1
    assert checked == 6  # the core and the five extras a user picks from


def test_the_open_column_knows_a_model_whose_weights_the_run_loaded(tmp_path: Path) -> None:
    from chemteb_eval.models.base import ModelMeta
    from chemteb_eval.results.board import ModelResults
    from chemteb_eval.results.leaderboard import model_facts
    from chemteb_eval.runner.stages import recorded_meta

    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "README.md").write_text("---\nlicense: apache-2.0\ntags: [x]\n---\n# m\n")
    local = ModelMeta("org/m", None, 1, 8, 16, "sentence-transformers", str(folder))
    meta = recorded_meta(local, None)
    assert meta["open_weights"] is True and meta["license"] == "apache-2.0"
    facts = model_facts(ModelResults("org/m", tmp_path, meta=meta), {})
    assert facts.open_weights is True
    api = ModelMeta("text-embedding-3-large", None, None, 8, None, "openai-compatible-http", "x")
    assert "open_weights" not in recorded_meta(api, None) and "license" not in recorded_meta(
        api, None
    )
    # a card whose licence is not one line of text records none
    (folder / "README.md").write_text("---\nlicense: {a: 1}\n---\n")
    assert "license" not in recorded_meta(local, None)


def test_rank_and_the_space_count_two_folders_of_one_model_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("gradio")
    import json

    from .test_adversarial_round2 import _write_model  # puts space/ on the path too

    _write_model(tmp_path / "a", "org__best", 0.9, 1)
    _write_model(tmp_path / "a", "org__mid", 0.6, 2)
    _write_model(tmp_path / "b", "org__best", 0.9, 1)
    roots = [tmp_path / "a", tmp_path / "b"]
    assert main(["rank", *map(str, roots), "-b", "PipChem", "--json"]) == 0
    ranked = [row["model"] for row in json.loads(capsys.readouterr().out)]
    import app

    state = app.build_state(roots, default_benchmark="PipChem")
    shown = [m.model for m in state.boards["PipChem"].models]
    assert sorted(ranked) == sorted(shown) and len(shown) == 3
