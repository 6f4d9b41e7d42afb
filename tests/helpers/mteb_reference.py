"""Adapters that run MTEB's own evaluator code on arrays: the reference for tests and benchmarks.

MTEB's scoring lives in methods of task classes that expect a model and a Hub dataset; these
adapters call those methods (and MTEB's evaluator helpers) on precomputed embeddings, so our
functions can be compared with the reference on identical inputs. Import only where mteb is
installed (the ``dev`` extra).
"""

from __future__ import annotations

import warnings
from functools import partial
from types import SimpleNamespace
from typing import Any

import datasets
import numpy as np
import torch
from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
from mteb._evaluators.text.bitext_mining_evaluator import BitextMiningEvaluator
from mteb.abstasks.classification import AbsTaskClassification
from mteb.abstasks.pair_classification import AbsTaskPairClassification
from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
from sentence_transformers.util import cos_sim
from sklearn import cluster
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.cluster import v_measure_score
from sklearn.metrics.pairwise import (
    paired_cosine_distances,
    paired_euclidean_distances,
    paired_manhattan_distances,
)


def bound(cls: type, *names: str, **attrs: Any) -> SimpleNamespace:
    """An object on which the reference's methods run without building a whole task."""
    ns = SimpleNamespace(**attrs)
    for name in names:
        setattr(ns, name, partial(getattr(cls, name), ns))
    return ns


def pair_distances(e1: np.ndarray, e2: np.ndarray) -> dict[str, list[float]]:
    """The lines of MTEB's PairClassificationEvaluator.__call__ after encoding."""
    cosine = 1 - paired_cosine_distances(e1, e2)
    return {
        "cosine_scores": cosine.tolist(),
        "euclidean_distances": paired_euclidean_distances(e1, e2).tolist(),
        "manhattan_distances": paired_manhattan_distances(e1, e2).tolist(),
        "similarity_scores": cosine.tolist(),
        "dot_scores": np.asarray([np.dot(e1[i], e2[i]) for i in range(len(e1))]).tolist(),
    }


def pair_classification(distances: dict[str, list[float]], labels: np.ndarray) -> dict[str, float]:
    task = bound(
        AbsTaskPairClassification,
        "_compute_metrics_values",
        "_find_best_acc_and_threshold",
        "_find_best_f1_and_threshold",
    )
    return AbsTaskPairClassification._compute_metrics(task, distances, labels.tolist())


def classification(
    x_tr: np.ndarray, y_tr: np.ndarray, x_te: np.ndarray, y_te: np.ndarray
) -> dict[str, Any]:
    """MTEB's undersampling walk on a datasets.Dataset, its probe, its metric code, 10 experiments."""
    train = datasets.Dataset.from_dict({"label": y_tr.tolist()})
    task = bound(
        AbsTaskClassification,
        "_undersample_data",
        seed=42,
        samples_per_label=8,
        label_column_name="label",
    )
    idxs = None
    scores = []
    y_list = np.asarray(y_tr.tolist())
    for i in range(10):
        _, idxs, selected = AbsTaskClassification._undersample_data(task, train, i, idxs)
        clf = LogisticRegression(max_iter=100, random_state=42)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clf.fit(x_tr[selected], y_list[selected].tolist())
            scores.append(
                AbsTaskClassification._calculate_scores(None, y_te.tolist(), clf.predict(x_te))
            )
    named = SimpleNamespace(metadata=SimpleNamespace(name="reference"))
    return AbsTaskClassification._calculate_avg_scores(named, scores)


def clustering_v_measure(x: np.ndarray, labels: np.ndarray) -> float:
    """ClusteringEvaluator's k-means as mteb configures it (seed 42 from the Evaluator base)."""
    km = cluster.MiniBatchKMeans(
        n_clusters=len(set(labels.tolist())),
        batch_size=500,
        n_init="auto",
        compute_labels=True,
        random_state=42,
    )
    return float(v_measure_score(labels, km.fit(x).labels_))


def bitext_mining(src: np.ndarray, tgt: np.ndarray) -> dict[str, float]:
    evaluator = bound(BitextMiningEvaluator, "_similarity_search")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        neighbours = BitextMiningEvaluator._similarity_search(
            evaluator, src, tgt, SimpleNamespace(similarity=cos_sim)
        )
    return AbsTaskBitextMining._compute_metrics(None, neighbours, [(i, i) for i in range(len(src))])


def retrieval(
    q: np.ndarray,
    c: np.ndarray,
    qids: list[str],
    dids: list[str],
    qrels: dict[str, dict[str, int]],
    k_values: list[int],
) -> Any:
    """MTEB's exact search in outline (torch cos_sim + topk), then its scoring (pytrec_eval + MRR)."""
    qt, ct = torch.from_numpy(q), torch.from_numpy(c)
    k = min(max(k_values), len(dids))
    results: dict[str, dict[str, float]] = {}
    for start in range(0, len(qids), 128):
        vals, idx = torch.topk(cos_sim(qt[start : start + 128], ct), k, dim=1)
        for row, (v, i) in enumerate(zip(vals.tolist(), idx.tolist(), strict=True)):
            if qids[start + row] in qrels:
                results[qids[start + row]] = {dids[j]: s for j, s in zip(i, v, strict=True)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calculate_retrieval_scores(results, qrels, k_values)
