"""The loader against small Hub-layout fixtures of every task type, and its transforms."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from chemteb_eval.data.hub_layout import write_hub_dataset
from chemteb_eval.data.loader import load_task, stratified_subsample
from chemteb_eval.data.types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    PairClassificationData,
    RetrievalData,
)
from chemteb_eval.errors import ChemtebError
from chemteb_eval.tasks import Task, get_task

REV = "a" * 40


def _task(type_: Any, main: str, **kw: Any) -> Task:
    return Task(
        name=f"Fixture{type_}",
        type=type_,
        hf_path="fixture/x",
        revision=REV,
        eval_splits=kw.pop("eval_splits", ("test",)),
        main_score=main,
        collection="test",
        **kw,
    )


def _write(tmp: Path, configs: dict) -> Path:
    return write_hub_dataset(
        tmp / "repo", configs, pretty_name="fixture", license="mit", card="A fixture."
    )


def test_classification(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "default": {
                "train": {"text": ["a", "b", "c"], "label": [0, 1, 0]},
                "test": {"text": ["d", "e"], "label": [1, 0]},
            }
        },
    )
    data = load_task(_task("Classification", "accuracy", train_split="train"), data_path=path)
    split = data["default"]["test"]
    assert isinstance(split, ClassificationData)
    assert split.train_texts == ["a", "b", "c"] and split.test_labels == [1, 0]


def test_clustering_per_row_and_legacy_single_row(tmp_path: Path) -> None:
    rows = _write(
        tmp_path / "a",
        {"default": {"test": {"sentences": ["x", "y", "z"], "labels": ["p", "q", "p"]}}},
    )
    legacy = _write(
        tmp_path / "b",
        {"default": {"test": {"sentences": [["x", "y", "z"]], "labels": [["p", "q", "p"]]}}},
    )
    task = _task("Clustering", "v_measure")
    for path in (rows, legacy):
        split = load_task(task, data_path=path)["default"]["test"]
        assert isinstance(split, ClusteringData) and len(split.sets) == 1
        assert split.sets[0].texts == ["x", "y", "z"] and split.sets[0].labels == ["p", "q", "p"]


def test_pair_classification_aliases_and_single_row(tmp_path: Path) -> None:
    flat = _write(
        tmp_path / "a",
        {"default": {"test": {"sent1": ["a", "b"], "sent2": ["c", "d"], "labels": [1, 0]}}},
    )
    one_row = _write(
        tmp_path / "b",
        {
            "default": {
                "test": {"sentence1": [["a", "b"]], "sentence2": [["c", "d"]], "labels": [[1, 0]]}
            }
        },
    )
    task = _task("PairClassification", "max_f1")
    for path in (flat, one_row):
        split = load_task(task, data_path=path)["default"]["test"]
        assert split == PairClassificationData(["a", "b"], ["c", "d"], [1, 0])


def test_pair_classification_column_map_concat_and_subsample(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    configs = {}
    for subset, col in (("iso", "isomeric_smiles"), ("canon", "canonical_smiles")):
        n = 1500
        configs[subset] = {
            "test": {
                "title": [f"{subset}{i}" for i in range(n)],
                col: [f"S{i}" for i in range(n)],
                "labels": rng.choice([0, 1], n, p=[0.8, 0.2]).tolist(),
            }
        }
    path = _write(tmp_path, configs)
    task = _task(
        "PairClassification",
        "max_f1",
        subsets=("iso", "canon"),
        concat_subsets=True,
        subsample=2048,
        subset_columns={
            "iso": {"title": "sentence1", "isomeric_smiles": "sentence2"},
            "canon": {"title": "sentence1", "canonical_smiles": "sentence2"},
        },
    )
    data = load_task(task, data_path=path)
    assert list(data) == ["default"]
    split = data["default"]["test"]
    assert len(split.labels) == 2048
    # The subsample is exactly datasets' stratified split with seed 42, as MTEB takes it.
    import datasets

    both = datasets.concatenate_datasets(
        [
            datasets.load_dataset(str(path), s, split="test")
            .rename_columns({"title": "sentence1", c: "sentence2"})
            .select_columns(["sentence1", "sentence2", "labels"])
            for s, c in (("iso", "isomeric_smiles"), ("canon", "canonical_smiles"))
        ]
    )
    reference = stratified_subsample(both, 2048)
    assert split.sentences1 == reference["sentence1"]
    # Stratified: the positive rate is kept to within one row.
    all_labels = np.array(both["labels"])
    assert abs(np.mean(split.labels) * 2048 - all_labels.mean() * 2048) <= 1


def test_bitext_with_column_map(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"default": {"test": {"title": ["water", "ethanol"], "canonical_smiles": ["O", "CCO"]}}},
    )
    task = _task(
        "BitextMining", "f1", columns={"title": "sentence1", "canonical_smiles": "sentence2"}
    )
    assert load_task(task, data_path=path)["default"]["test"] == BitextData(
        ["water", "ethanol"], ["O", "CCO"]
    )


def test_retrieval_beir_layout(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "corpus": {
                "corpus": {
                    "_id": ["d1", "d2", "d3"],
                    "title": ["Water", "", "Salt"],
                    "text": ["is wet", "plain", "is salty"],
                }
            },
            "queries": {
                "queries": {"_id": ["q1", "q2", "q3"], "text": ["wet?", "salty?", "nothing?"]}
            },
            "default": {
                "test": {
                    "query-id": ["q1", "q2", "q3"],
                    "corpus-id": ["d1", "d3", "d2"],
                    "score": [1, 2, 0],
                }
            },
        },
    )
    split = load_task(_task("Retrieval", "ndcg_at_10"), data_path=path)["default"]["test"]
    assert isinstance(split, RetrievalData)
    assert split.corpus_texts == ["Water is wet", "plain", "Salt is salty"]
    assert split.query_ids == ["q1", "q2"]  # q3 has no relevant document
    assert split.qrels == {"q1": {"d1": 1}, "q2": {"d3": 2}}


def test_missing_column_and_split_errors(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"default": {"test": {"sentence1": ["a"], "words": ["b"], "labels": [1]}}}
    )
    with pytest.raises(
        ValueError,
        match=r"missing column 'sentence2' \(looked for \['sentence2', 'sent2'\]\); the dataset has \['labels', 'sentence1', 'words'\]",
    ):
        load_task(_task("PairClassification", "max_f1"), data_path=path)
    with pytest.raises(ValueError, match=r"no split 'dev'; the dataset has \['test'\]"):
        load_task(_task("PairClassification", "max_f1"), data_path=path, splits=("dev",))
    with pytest.raises(ValueError, match=r"data_path: .* is not a folder"):
        load_task(_task("BitextMining", "f1"), data_path=tmp_path / "nope")


def test_offline_hub_dataset_gives_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets.config
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    task = get_task("PubChemSynonymPC", "mteb")
    start = time.perf_counter()
    with pytest.raises(ChemtebError) as info:
        load_task(task)
    assert time.perf_counter() - start < 10
    message = str(info.value)
    assert "BASF-AI/PubChemSynonymPC" in message and str(task.revision) in message
    assert "PipChem" in message and "hf download" in message


def test_one_row_split_is_spread_out_before_subsampling(tmp_path: Path) -> None:
    n = 2100
    labels = [i % 3 == 0 for i in range(n)]
    path = _write(
        tmp_path,
        {
            "default": {
                "test": {
                    "sentence1": [[f"a{i}" for i in range(n)]],
                    "sentence2": [[f"b{i}" for i in range(n)]],
                    "labels": [[int(v) for v in labels]],
                }
            }
        },
    )
    task = _task("PairClassification", "max_f1", subsample=2048)
    split = load_task(task, data_path=path)["default"]["test"]
    assert len(split.labels) == 2048
    assert all(s1[1:] == s2[1:] for s1, s2 in zip(split.sentences1, split.sentences2, strict=True))
