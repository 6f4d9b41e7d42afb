"""The run's plan: ``-b`` with ``-t`` scores the tasks by the benchmark's protocol (the bug of
issue 13: the CLI dropped ``-b``, so ChemHotpotQA was encoded and scored on train, dev and test
instead of the paper's test split)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from chemteb_eval import cli
from chemteb_eval.errors import ChemtebError
from chemteb_eval.runner import run, select
from chemteb_eval.tasks import get_benchmark, get_task

from .helpers.hashing_encoder import HashingEncoder

HOTPOT = get_task("ChemHotpotQARetrieval", "release")


def test_select_within_a_benchmark_uses_its_splits_and_main_scores() -> None:
    assert HOTPOT.eval_splits == ("train", "dev", "test")
    plan = select("ChemTEB(paper)", [HOTPOT])
    assert plan.splits(HOTPOT) == ("test",) and plan.main_score(HOTPOT) == "ndcg_at_10"
    alone = select(None, [HOTPOT])  # no -b: the task's own defaults
    assert alone.splits(HOTPOT) == ("train", "dev", "test") and alone.benchmark is None
    classification = get_task("SDSGlovesClassification", "release")
    assert select("ChemTEB(paper)", [classification]).main_score(classification) == "f1"
    assert select(None, [classification]).main_score(classification) == "accuracy"
    assert select(None, None).benchmark == get_benchmark("PipChem")


def test_a_task_outside_the_benchmark_is_named() -> None:
    with pytest.raises(ValueError, match="PipChemSMILESNameBM not in benchmark ChemTEB"):
        select("ChemTEB(paper)", [get_task("PipChemSMILESNameBM")])
    with pytest.raises(ValueError, match="nothing to run"):
        select("PipChem", [])


def test_run_loads_only_the_benchmarks_splits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: dict[str, Any] = {}

    def load_task(task: Any, *, splits: Any = None, data_path: Any = None) -> Any:
        asked[task.name] = splits
        raise ChemtebError("offline in this test")

    monkeypatch.setattr("chemteb_eval.runner.load.load_task", load_task)
    # the Hub is out of reach here; the run is let through to the load this test watches
    monkeypatch.setattr("chemteb_eval.runner.plan.out_of_reach", lambda tasks: [])
    report = run(
        HashingEncoder(),
        benchmark="ChemTEB(paper)",
        tasks=[HOTPOT],
        output_dir=tmp_path,
        use_cache=False,
        progress=False,
        log=lambda m: None,
    )
    assert asked == {"ChemHotpotQARetrieval": ("test",)}
    assert report.statuses == {"ChemHotpotQARetrieval": "failed"}


def test_cli_passes_b_along_with_t(monkeypatch: pytest.MonkeyPatch) -> None:
    called: dict[str, Any] = {}

    def fake_run(model: str, **kwargs: Any) -> Any:
        called.update(kwargs)
        raise ChemtebError("stop here")

    monkeypatch.setattr("chemteb_eval.runner.run", fake_run)
    code = cli.main(["run", "-b", "ChemTEB(paper)", "-t", "ChemHotpotQARetrieval"])
    assert code == 1
    assert called["benchmark"] == "ChemTEB(paper)"
    assert [t.name for t in called["tasks"]] == ["ChemHotpotQARetrieval"]
    assert called["tasks"][0].collection == "release"
