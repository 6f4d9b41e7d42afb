"""The task registry: counts, benchmarks, aliases, validation, and agreement with ../shared."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.cli import main
from chemteb_eval.tasks import (
    BENCHMARKS,
    Task,
    benchmark_tasks,
    eval_splits,
    get_benchmark,
    get_task,
    list_tasks,
    main_score,
)
from chemteb_eval.tasks.kinds import CHEMTEB_TYPES

REV = "0" * 40


def test_collections_and_benchmarks_have_the_published_sizes() -> None:
    assert len(list_tasks("release")) == 36
    assert len(list_tasks("mteb")) == 28
    assert [
        len(get_benchmark(n).tasks) for n in ("ChemTEB", "ChemTEB(v1.1)", "ChemTEB(paper)")
    ] == [27, 28, 35]
    assert "CoconutRetrieval" not in get_benchmark("ChemTEB(paper)").tasks
    assert set(get_benchmark("ChemTEB(v1.1)").tasks) - set(get_benchmark("ChemTEB").tasks) == {
        "ChemRxivRetrieval"
    }
    pipchem = benchmark_tasks("PipChem")
    assert {t.type for t in pipchem} == set(CHEMTEB_TYPES)
    scitext = benchmark_tasks("SciText")
    assert {t.type for t in scitext} == {"STS", "NER"}
    assert all(t.revision is None for t in list_tasks("scitext"))  # unpinned, never invented
    assert "ChemTEB" not in "PipChem"


def test_paper_protocol() -> None:
    paper = get_benchmark("ChemTEB(paper)")
    assert paper.aggregation.kind == "rrf" and paper.aggregation.rrf_k == 10
    expected = {
        "Classification": "f1",
        "Clustering": "v_measure",
        "PairClassification": "max_f1",
        "BitextMining": "f1",
        "Retrieval": "ndcg_at_10",
    }
    for task in benchmark_tasks(paper):
        assert main_score(paper, task) == expected[task.type], task.name
    hotpot = get_task("ChemHotpotQARetrieval", "release")
    assert hotpot.eval_splits == ("train", "dev", "test")
    assert eval_splits(paper, hotpot) == ("test",)
    mteb = get_benchmark("ChemTEB")
    assert main_score(mteb, get_task("PubChemSynonymPC", "mteb")) == "max_ap"
    assert eval_splits(mteb, get_task("ChemHotpotQARetrieval", "mteb")) == ("train", "dev", "test")


def test_aliases_and_revision_status() -> None:
    task = get_task("CoconutSMILES2Formula1BM")
    assert task.name == "CoconutSMILES2FormulaBM"
    synonym = get_task("PubChemSynonymPC", "release")
    assert synonym.revision_status("5037d69d177c9628fb79cb57eea1299178b28c1b") == "pinned"
    assert synonym.revision_status("dcd82d56e7a8388db23aa962c99d59fe9a2ba7e3") == "known"
    assert synonym.revision_status("1" * 40) == "unknown"
    assert len([t for t in list_tasks("release") if t.known_revisions]) == 29


def test_consolidated_mteb_tasks_are_their_own() -> None:
    smiles = get_task("PubChemSMILESPC")
    assert smiles.collection == "mteb" and smiles.concat_subsets and smiles.subsample == 2048
    assert len(smiles.subsets) == 4
    with pytest.raises(ValueError, match="unknown task 'PubChemSMILESPC'"):
        get_task("PubChemSMILESPC", "release")
    assert len(get_task("PubChemWikiPairClassification").subsets) == 12
    assert get_task("PubChemSMILESBitextMining").columns_for("iso-desc") == {
        "description": "sentence1",
        "isomeric_smiles": "sentence2",
    }


def test_unknown_and_ambiguous_names() -> None:
    with pytest.raises(ValueError, match=r"unknown benchmark 'ChemTeb'\. Did you mean 'ChemTEB'"):
        get_benchmark("ChemTeb")
    with pytest.raises(
        ValueError, match=r"unknown task 'ChemNQRetrival'\. Did you mean 'ChemNQRetrieval'"
    ):
        get_task("ChemNQRetrival")
    with pytest.raises(
        ValueError, match=r"'ChemNQRetrieval' is in several collections \(mteb, release\)"
    ):
        get_task("ChemNQRetrieval")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"revision": "main"}, "revision: 'main'"),
        ({"type": "Regression"}, "type: 'Regression'"),
        (
            {"main_score": "ndcg_at_10"},
            "main_score: 'ndcg_at_10' is not a PairClassification score",
        ),
        ({"eval_splits": ()}, "eval_splits"),
        ({"category": "x2y"}, "category"),
        ({"hf_path": None}, "hf_path"),
    ],
)
def test_task_records_validate(changes: dict, message: str) -> None:
    fields: dict[str, Any] = dict(
        name="T",
        type="PairClassification",
        hf_path="org/t",
        revision=REV,
        eval_splits=("test",),
        main_score="max_f1",
        collection="test",
    )
    fields.update(changes)
    with pytest.raises(ValueError, match=message):
        Task(**fields)


def test_records_are_frozen() -> None:
    task = get_task("PubChemSynonymPC", "mteb")
    with pytest.raises(AttributeError):
        task.revision = REV  # type: ignore[misc]
    with pytest.raises(TypeError):
        task.columns["x"] = "y"  # type: ignore[index]


def test_cli_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "--benchmark", "ChemTEB(paper)", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 35
    assert {"name", "type", "hf_path", "revision", "eval_splits", "main_score"} <= set(rows[0])
    hotpot = next(r for r in rows if r["name"] == "ChemHotpotQARetrieval")
    assert hotpot["eval_splits"] == ["test"]
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "PipChemWikiRetrieval" in out and "ChemRxivRetrieval" in out and "PipChem" in out
    assert main(["list", "--benchmark", "Nope"]) == 2
    assert "unknown benchmark 'Nope'" in capsys.readouterr().err


def _columns(text: str) -> dict[str, str]:
    if not text:
        return {}
    if "<-" in text:
        return {src: dst for dst, src in (p.split("<-") for p in text.split(";"))}
    tokens = text.split()
    return {tokens[i + 1]: tokens[i].rstrip(":") for i in range(0, len(tokens), 2)}


def test_release_records_match_shared_csv(shared_dir: Path) -> None:
    rows = list(csv.DictReader((shared_dir / "reference" / "chemteb_tasks_paper.csv").open()))
    assert len(rows) == len(list_tasks("release"))
    for row in rows:
        task = get_task(row["task"], "release")
        assert task.type == row["type"] and task.hf_path == row["hf_path"]
        assert task.revision == row["revision"]
        assert task.eval_splits == tuple(row["eval_splits"].split(","))
        assert task.main_score == row["released_main_score"]
        assert dict(task.columns) == _columns(row["column_map"])
        assert (task.subsample == 2048) == (row["stratified_subsample_2048_seed42"] == "True")
        assert (row["in_paper_35"] == "True") == (
            task.name in get_benchmark("ChemTEB(paper)").tasks
        )
        assert get_task(row["results_task_name"], "release") is task
        recorded = {r for r in row["paper_results_revision"].split(";") if r}
        assert recorded - {task.revision} == set(task.known_revisions)
        assert task.n_samples == (int(row["n_samples_paper"]) if row["n_samples_paper"] else None)


def test_mteb_records_match_shared_csv(shared_dir: Path) -> None:
    rows = list(csv.DictReader((shared_dir / "reference" / "chemteb_tasks_mteb.csv").open()))
    assert len(rows) == len(list_tasks("mteb"))
    for row in rows:
        task = get_task(row["task"], "mteb")
        assert (task.type, task.hf_path, task.revision) == (
            row["type"],
            row["hf_path"],
            row["hf_revision"],
        )
        assert task.eval_splits == tuple(row["eval_splits"].split(";"))
        assert task.main_score == row["main_score"]
        assert dict(task.split_sizes) == json.loads(row["split_sizes"])
        assert (row["in_ChemTEB_v1"] == "True") == (task.name in BENCHMARKS["ChemTEB"].tasks)
        assert (row["in_ChemTEB_v1_1"] == "True") == (
            task.name in BENCHMARKS["ChemTEB(v1.1)"].tasks
        )
        langs = json.loads(row["eval_langs"])
        if isinstance(langs, dict):
            assert set(task.subsets) == set(langs)
