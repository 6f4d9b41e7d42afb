"""What a newcomer sees in their first hour: `chemteb run` (the default PipChem suite), a plain
rerun, `chemteb rank results/`, `chemteb compare`, a failing task, and the bars on the way.

The runs use the HashingEncoder on the small PipChem build (``small_suite``), through the real
command line: `chemteb run` is given the HashingEncoder in place of the bundled MiniLM.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import chemteb_eval.runner as runner_module
from chemteb_eval.cli import main
from chemteb_eval.runner import RunReport
from chemteb_eval.tasks import Task, benchmark_tasks, get_benchmark

from .helpers.hashing_encoder import HashingEncoder

# Subprocesses and whole runs (seconds each): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow

PIPCHEM = get_benchmark("PipChem")
NAME = "test/hashing-trigrams"
_REAL_RUN = runner_module.run


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _hashing_model(
    reports: list[RunReport], encoder: Callable[[], HashingEncoder] = HashingEncoder, **extra: Any
) -> Iterator[None]:
    """`chemteb run` with the HashingEncoder instead of the model it names (and ``extra``
    arguments for the runner); each run's report lands in ``reports``."""

    def run(model: str, **options: Any) -> RunReport:
        report = _REAL_RUN(encoder(), **{**options, **extra})
        reports.append(report)
        return report

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner_module, "run", run)
        yield


@pytest.fixture(scope="module")
def first_run(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`chemteb run --output-dir results` (the default benchmark, PipChem), once per module."""
    results = tmp_path_factory.mktemp("first-hour") / "results"
    reports: list[RunReport] = []
    with _hashing_model(reports):
        code, out, err = _cli(["run", "--output-dir", str(results), "--quiet"])
    assert code == 0, err
    return {"results": results, "report": reports[0], "out": out, "err": err}


def _type_means(scores: dict[str, float]) -> dict[str, float]:
    tasks = benchmark_tasks(PIPCHEM)
    types = dict.fromkeys(t.type for t in tasks)
    return {
        kind: float(np.mean([scores[t.name] for t in tasks if t.type == kind])) for kind in types
    }


# -- chemteb rank results/ ----------------------------------------------------------------------


def test_rank_after_the_default_run_prints_these_lines(first_run: dict[str, Any]) -> None:
    code, out, err = _cli(["rank", str(first_run["results"])])
    assert code == 0 and err == ""
    scores = first_run["report"].main_scores
    by_type = _type_means(scores)
    mean = float(np.mean(list(scores.values())))
    cells = [
        f"{by_type[kind]:.4f} ( 1)".rjust(width)
        for kind, width in (
            ("Classification", 14),
            ("Clustering", 13),
            ("PairClassification", 19),
            ("BitextMining", 13),
            ("Retrieval", 13),
        )
    ]
    header = (
        "rank model                    Mean    RRF  Borda Classification    Clustering "
        "Pair classification Bitext mining     Retrieval"
    )
    assert out.splitlines() == [
        # which benchmark, and why: the results hold PipChem, not the paper's 35 tasks
        "Ranked on PipChem, the benchmark these results cover best (1 of 1 model(s) complete "
        "on its 7 tasks; no other benchmark has any of their tasks). Another: -b NAME "
        "(`chemteb list` names them).",
        "PipChem: 1 model, ranked by the mean over its 7 tasks. Per type: mean main score (rank).",
        header,
        "-" * len(header),
        f"   1 {NAME}  {mean:.4f}  0.455      0 " + " ".join(cells),
    ]


def test_rank_with_an_explicit_benchmark_is_as_before_and_hints_at_the_one_they_hold(
    first_run: dict[str, Any],
) -> None:
    code, out, err = _cli(["rank", str(first_run["results"]), "-b", "ChemTEB(paper)"])
    assert code == 0
    assert out.splitlines() == [
        "ChemTEB(paper): 1 model, ranked by Reciprocal Rank Fusion over task types (k = 10). "
        "Per type: mean main score (rank).",
        "rank model                    RRF  Borda",
        "-" * 40,
        # no RRF and no Borda for a row without every task (test_trust5_results)
        f"   - {NAME}      -      -  incomplete 0/35",
    ]
    assert err.splitlines() == [
        "[hint] no model here has a score on ChemTEB(paper)'s tasks; these results cover "
        "PipChem best (1 of 1 model(s) complete on its 7 tasks): -b 'PipChem'"
    ]
    code, out, err = _cli(["rank", str(first_run["results"]), "-b", "PipChem"])
    assert code == 0 and err == "" and out.startswith("PipChem: 1 model, ranked by the mean")


def test_json_outputs_still_round_trip(first_run: dict[str, Any]) -> None:
    results = str(first_run["results"])
    code, out, err = _cli(["rank", results, "--json"])
    rows = json.loads(out)  # stdout holds the JSON alone; the chosen benchmark is on stderr
    assert code == 0 and err.startswith("Ranked on PipChem, the benchmark these results cover")
    assert [r["model"] for r in rows] == [NAME] and rows[0]["rank"] == 1
    scores = first_run["report"].main_scores
    assert rows[0]["mean"] == pytest.approx(float(np.mean(list(scores.values()))))
    code, out, err = _cli(["rank", results, "-b", "PipChem", "--json"])
    assert code == 0 and err == "" and json.loads(out) == rows
    code, out, _ = _cli(["rank", results, "-b", "ChemTEB(paper)", "--json"])
    assert code == 0 and "mean" not in json.loads(out)[0]  # RRF orders it: as before
    code, out, _ = _cli(["list", "-b", "PipChem", "--json"])
    assert code == 0 and len(json.loads(out)) == 7


def _write_pipchem(root: Path, folder: str, name: str, scores: dict[str, float]) -> None:
    target = root / folder / "rev"
    target.mkdir(parents=True, exist_ok=True)
    (target / "model_meta.json").write_text(json.dumps({"name": name, "revision": None}))
    for task in benchmark_tasks(PIPCHEM):
        entry = {task.main_score: scores[task.name], "hf_subset": "default"}
        entry["main_score"] = scores[task.name]
        payload = {"task_name": task.name, "dataset_revision": None, "scores": {"test": [entry]}}
        (target / f"{task.name}.json").write_text(json.dumps(payload))


def test_on_pipchem_the_mean_that_orders_the_table_is_a_column(tmp_path: Path) -> None:
    """PipChem ranks by the mean over tasks: #1 here has the lower RRF and Borda (it wins one
    type, by far), and the Mean column shows why it is first."""
    names = [t.name for t in benchmark_tasks(PIPCHEM)]
    one = {**dict.fromkeys(names, 0.5), "PipChemWikiRetrieval": 0.99}
    other = {**dict.fromkeys(names, 0.55), "PipChemWikiRetrieval": 0.1}
    _write_pipchem(tmp_path, "org__one", "org/one", one)
    _write_pipchem(tmp_path, "org__other", "org/other", other)
    code, out, _ = _cli(["rank", str(tmp_path), "-b", "PipChem"])
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == (
        "PipChem: 2 models, ranked by the mean over its 7 tasks. Per type: mean main score (rank)."
    )
    assert lines[1].startswith("rank model        Mean    RRF  Borda Classification")
    first, second = lines[3:]
    assert first.startswith(f"   1 org/one    {np.mean(list(one.values())):.4f}  0.424      1 ")
    assert second.startswith(f"   2 org/other  {np.mean(list(other.values())):.4f}  0.447      6 ")


def test_two_folders_of_one_model_are_never_cut_into_one_name(
    first_run: dict[str, Any], tmp_path: Path
) -> None:
    copy = tmp_path / "elsewhere" / "results"
    shutil.copytree(first_run["results"], copy)
    code, out, err = _cli(["rank", str(first_run["results"]), str(copy)])
    assert code == 0 and err.count("[note]") == 1 and "names the same model" in err
    rows = out.splitlines()[4:]
    folders = [first_run["results"] / "test__hashing-trigrams", copy / "test__hashing-trigrams"]
    names = [f"{NAME} [{folder}]" for folder in folders]
    assert len(rows) == 2 and len(names[1]) > 42  # longer than the column used to be
    for row, name in zip(rows, names, strict=True):
        assert row.startswith(f"   1 {name} ")  # whole, and the columns stay aligned
    assert len({len(r) for r in out.splitlines()[2:]}) == 1


# -- chemteb run: the summary, a rerun, a failure -----------------------------------------------


def _summary(out: str) -> dict[str, tuple[str, ...]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("task "))
    rows = {}
    for line in lines[start + 1 :]:
        if not line.strip():
            break
        name, *rest = line.split()
        rows[name] = tuple(rest)
    return rows


def test_a_plain_rerun_shows_the_stored_scores(first_run: dict[str, Any]) -> None:
    first = _summary(first_run["out"])
    assert len(first) == 7 and {status for status, _ in first.values()} == {"done"}
    reports: list[RunReport] = []
    with _hashing_model(reports):
        code, out, _ = _cli(["run", "--output-dir", str(first_run["results"]), "--quiet"])
    assert code == 0
    again = _summary(out)
    assert again == {name: ("skipped", score) for name, (_, score) in first.items()}
    assert reports[0].main_scores == first_run["report"].main_scores


def test_a_failing_task_is_one_line(
    small_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets.config
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    bad = Task(
        name="Missing",
        type="BitextMining",
        hf_path="nobody/nothing",
        revision="2" * 40,
        eval_splits=("test",),
        main_score="f1",
        collection="test",
    )
    good = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "BitextMining")
    reports: list[RunReport] = []
    with _hashing_model(reports, tasks=[bad, good], benchmark=None, log=print):
        code, out, err = _cli(["run", "--output-dir", str(tmp_path), "--no-cache"])
    assert code == 1
    lines = (out + err).splitlines()
    failed = [line for line in lines if "[failed]" in line]
    assert len(failed) == 1 and failed[0].startswith("[failed] Missing: could not load data: ")
    assert "nobody/nothing" in failed[0] and "ChemtebError" not in failed[0]  # one prefix
    assert sum("nobody/nothing" in line for line in lines) == 1  # said once, nowhere else
    summary = _summary(out)
    assert summary["Missing"] == ("failed",) and summary[good.name][0] == "done"
    assert err.splitlines()[-1] == (  # after the bars (the failure line broke none of them)
        "1 task(s) failed, each said above as it failed; a rerun retries them."
    )


# -- the bars and lines on the way --------------------------------------------------------------


def test_a_cold_run_says_it_builds_pipchem_and_shows_no_datasets_bars(
    small_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    import datasets
    from datasets.utils import logging as datasets_logging

    monkeypatch.setenv("CHEMTEB_CACHE", str(tmp_path / "fresh-cache"))  # a cold machine
    bars, verbosity = datasets.is_progress_bar_enabled(), datasets_logging.get_verbosity()
    logged: list[str] = []
    report = _REAL_RUN(HashingEncoder(), output_dir=tmp_path / "out", log=logged.append)
    assert set(report.statuses.values()) == {"done"}
    err = capsys.readouterr().err
    assert [m for m in logged if "PipChem" in m] == [
        "Building the PipChem suite from its pip-installed sources (once, 10-20 s); later runs "
        "reuse it."
    ]
    assert "Generating" not in err and "examples/s" not in err  # datasets' own bars
    frames = [f for f in re.split(r"[\r\n]+", err) if f.strip()]
    assert {f.split(":")[0] for f in frames} == {"loading data", "encoding", "tasks"}
    # datasets is left as it was found
    assert datasets.is_progress_bar_enabled() == bars
    assert datasets_logging.get_verbosity() == verbosity
    logged.clear()
    _REAL_RUN(HashingEncoder(), output_dir=tmp_path / "again", progress=False, log=logged.append)
    assert not [m for m in logged if "Building" in m]  # built once


def test_the_encoding_bar_shows_one_rate(capsys: Any) -> None:
    from chemteb_eval.engine import EmbeddingEngine

    engine = EmbeddingEngine(HashingEncoder(), None, batch_size=16, progress=True)
    engine.prefetch(("", f"text number {i}") for i in range(200))
    err = capsys.readouterr().err
    final = [f for f in re.split(r"[\r\n]+", err) if f.startswith("encoding: 100%")][-1]
    rate = engine.stats.to_dict()["texts_per_second"]
    assert final.endswith(f"{rate:.0f} texts/s]")  # the summary's rate, and only it
    assert "text/s" not in err and "texts_per_s" not in err and "it/s" not in err


def test_compare_says_what_it_is_doing(first_run: dict[str, Any], tmp_path: Path) -> None:
    reports: list[RunReport] = []
    other = tmp_path / "results"
    with _hashing_model(reports, encoder=lambda: HashingEncoder(dim=32, name="test/other")):
        assert _cli(["run", "--output-dir", str(other), "--quiet"])[0] == 0
    a = str(first_run["results"] / "test__hashing-trigrams")
    code, out, err = _cli(["compare", a, str(other / "test__other"), "--resamples", "100"])
    assert code == 0 and "Verdict:" in out
    assert err.splitlines()[0] == (
        "comparing on PipChem: per-task paired bootstraps (100 resamples each, from the runs' "
        "items files) and a sign-flip test over tasks..."
    )


def test_the_pipchem_scale_is_a_documented_flag(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--pipchem-scale small` chooses the build (the setting the builder reads); another value
    is refused by name."""
    import os

    from chemteb_eval import runner
    from chemteb_eval.cli import main

    seen: list[str | None] = []

    class Stop(Exception):
        pass

    def fake_run(*args: object, **kwargs: object) -> None:
        seen.append(os.environ.get("CHEMTEB_PIPCHEM_SCALE"))
        raise Stop

    monkeypatch.delenv("CHEMTEB_PIPCHEM_SCALE", raising=False)
    monkeypatch.setattr(runner, "run", fake_run)
    with pytest.raises(Stop):
        main(["run", "--pipchem-scale", "small"])
    assert seen == ["small"]
    monkeypatch.delenv("CHEMTEB_PIPCHEM_SCALE", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["run", "--pipchem-scale", "tiny"])
    assert exited.value.code == 2 and "--pipchem-scale" in capsys.readouterr().err


@pytest.mark.parametrize("name, reader", [("stsb", "read_stsb"), ("bc5cdr", "read_bc5cdr")])
def test_a_missing_scientific_set_says_what_to_put_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, reader: str
) -> None:
    """A user has no ../shared: the message names the folder, the files it needs and where the
    task's source is listed — never a README the user does not have."""
    from chemteb_eval.data import shared_sets
    from chemteb_eval.errors import MissingDataError

    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path))
    with pytest.raises(MissingDataError) as caught:
        getattr(shared_sets, reader)("test")
    message = str(caught.value)
    assert message.startswith(f"{name}: no copy at {tmp_path / name}.")
    assert "README" not in message and "../shared" not in message
    assert ".tsv" in message or ".csv" in message
    assert "chemteb list -b SciEmbed" in message


def test_no_task_record_points_a_user_at_the_shared_folder() -> None:
    from chemteb_eval.tasks import BENCHMARKS, benchmark_tasks

    for bench in BENCHMARKS.values():
        assert "../shared" not in bench.description, bench.name
        for task in benchmark_tasks(bench):
            for text in (task.source or "", task.license or "", task.obtain or ""):
                assert "../shared" not in text, (task.name, text)


def test_missing_scientific_copies_stop_the_run_before_the_model_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import chemteb_eval.models
    from chemteb_eval.errors import MissingDataError
    from chemteb_eval.runner import run

    monkeypatch.setenv("CHEMTEB_SHARED_DATA", str(tmp_path / "copies"))

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the model was loaded before the data was checked")

    monkeypatch.setattr(chemteb_eval.models, "load_encoder", never)
    with pytest.raises(MissingDataError) as caught:
        run(benchmark="SciEmbed", output_dir=tmp_path / "out", log=lambda m: None)
    message = str(caught.value)
    assert message.startswith("13 task(s) need copies not here. umnsrs: no copy at")
    assert message.endswith("Also missing: semeval_sts/, stsb/, scierc/, bc5cdr/, reuters12/.")
    assert not (tmp_path / "out").exists()  # nothing written for a run that did nothing


def test_a_model_that_does_not_load_leaves_no_empty_results_folder(tmp_path: Path) -> None:
    from chemteb_eval.runner import run

    with pytest.raises(ValueError, match="does not exist"):
        run("./no-such-model", output_dir=tmp_path / "out", log=lambda m: None)
    assert not (tmp_path / "out").exists()
    (tmp_path / "kept").mkdir()  # a folder the user made stays, empty or not
    with pytest.raises(ValueError, match="does not exist"):
        run("./no-such-model", output_dir=tmp_path / "kept", log=lambda m: None)
    assert (tmp_path / "kept").is_dir()
