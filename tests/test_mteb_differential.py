"""Differential tests: our functions against MTEB's own evaluator code on random inputs.

MTEB (``pip install -e .[dev]``) is the reference implementation behind the published ChemTEB
numbers. These tests call its scoring code directly (no models, no datasets downloads) on the
same embeddings and compare every reported key. Cost: ~5 s, most of it importing mteb.
"""

from __future__ import annotations

import numpy as np
import pytest

from chemteb_eval.scoring import (
    score_bitext_mining,
    score_classification,
    score_clustering,
    score_pair_classification,
    score_retrieval,
)

from .helpers.reference_loops import sweep

pytest.importorskip("mteb", reason="mteb (the reference implementation) is not installed")

from .helpers import mteb_reference as ref


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("quantised", [False, True])
def test_pair_classification_matches_mteb(seed: int, quantised: bool) -> None:
    rng = np.random.default_rng(seed)
    n, d = 300, 16
    e1 = rng.standard_normal((n, d)).astype(np.float32)
    e2 = (0.6 * e1 + rng.standard_normal((n, d))).astype(np.float32)
    if quantised:  # coarse values make tied scores, where the sweeps differ
        e1, e2 = np.round(e1).astype(np.float32) + 0.5, np.round(e2).astype(np.float32) + 0.5
    labels = rng.integers(0, 2, n)
    distances = ref.pair_distances(e1, e2)
    want = ref.pair_classification(distances, labels)

    got = score_pair_classification(e1, e2, labels, skip_tied_thresholds=True)
    for fn in ("cosine", "dot", "euclidean", "manhattan"):
        for m in ("accuracy", "f1", "precision", "recall", "ap"):
            assert got[f"{fn}_{m}"] == want[f"{fn}_{m}"], f"{fn}_{m}"
    for m in ("accuracy", "f1", "precision", "recall", "ap"):
        assert got[f"max_{m}"] == want[f"max_{m}"]

    # The published default (mteb 1.14.15's sweep, no tie skipping), thresholds included.
    published = score_pair_classification(e1, e2, labels)
    for fn, key, higher in (
        ("cosine", "cosine_scores", True),
        ("dot", "dot_scores", True),
        ("euclidean", "euclidean_distances", False),
        ("manhattan", "manhattan_distances", False),
    ):
        expected = sweep(distances[key], labels.tolist(), higher, skip_ties=False)
        for m, value in expected.items():
            assert published[f"{fn}_{m}"] == value, f"{fn}_{m}"


@pytest.mark.parametrize(("n_labels", "string_labels"), [(2, False), (3, True), (5, False)])
def test_classification_matches_mteb(n_labels: int, string_labels: bool) -> None:
    rng = np.random.default_rng(n_labels)
    d = 12
    centres = rng.standard_normal((n_labels, d)) * 1.5
    y_tr = rng.integers(0, n_labels, 400)
    y_te = rng.integers(0, n_labels, 150)
    x_tr = (centres[y_tr] + rng.standard_normal((400, d))).astype(np.float32)
    x_te = (centres[y_te] + rng.standard_normal((150, d))).astype(np.float32)
    if string_labels:
        names = np.array(["alkane", "alkene", "alkyne", "arene", "amine"])
        y_tr, y_te = names[y_tr], names[y_te]

    want = ref.classification(x_tr, y_tr, x_te, y_te)

    got = score_classification(x_tr, y_tr, x_te, y_te)
    keys = [
        "accuracy",
        "f1",
        "f1_weighted",
        "precision",
        "precision_weighted",
        "recall",
        "recall_weighted",
    ]
    if n_labels == 2:
        keys += ["ap", "ap_weighted"]
    for key in keys:
        assert got[key] == want[key], key


def test_clustering_matches_mteb_configuration() -> None:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((700, 24)).astype(np.float32)
    labels = rng.integers(0, 9, 700)
    assert score_clustering(x, labels)["v_measure"] == ref.clustering_v_measure(x, labels)


def test_bitext_mining_matches_mteb() -> None:
    rng = np.random.default_rng(3)
    n, d = 700, 32
    src = rng.standard_normal((n, d)).astype(np.float32)
    tgt = (src + 1.2 * rng.standard_normal((n, d))).astype(np.float32)
    want = ref.bitext_mining(src, tgt)
    got = score_bitext_mining(src, tgt)
    assert 0 < got["accuracy"] < 1
    for key in ("accuracy", "precision", "recall", "f1"):
        assert got[key] == pytest.approx(want[key], abs=1e-12), key


@pytest.mark.parametrize("seed", range(2))
def test_retrieval_matches_mteb_and_pytrec_eval(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_docs, n_q, d = 400, 40, 16
    corpus = rng.standard_normal((n_docs, d)).astype(np.float32)
    corpus[50:60] = corpus[40]  # duplicated documents: exact ties, decided by id
    queries = rng.standard_normal((n_q, d)).astype(np.float32)
    doc_ids = [f"doc{i}" for i in rng.permutation(n_docs)]
    q_ids = [f"q{i}" for i in range(n_q)]
    qrels = {
        q: {doc_ids[j]: int(rng.integers(0, 3)) for j in rng.choice(n_docs, 6, replace=False)}
        for q in q_ids
    }
    for q in q_ids[:5]:
        qrels[q].update({doc_ids[j]: 1 for j in range(40, 60)})
    qrels = {q: docs for q, docs in qrels.items() if any(g > 0 for g in docs.values())}

    k_values = [1, 3, 5, 10, 20, 100, 1000]
    want = ref.retrieval(queries, corpus, q_ids, doc_ids, qrels, k_values)
    got = score_retrieval(queries, corpus, q_ids, doc_ids, qrels, k_values=k_values)
    for k in k_values:
        assert got[f"ndcg_at_{k}"] == want.ndcg[f"NDCG@{k}"]
        assert got[f"map_at_{k}"] == want.map[f"MAP@{k}"]
        assert got[f"recall_at_{k}"] == want.recall[f"Recall@{k}"]
        assert got[f"precision_at_{k}"] == want.precision[f"P@{k}"]
        assert got[f"mrr_at_{k}"] == want.mrr[f"MRR@{k}"]
