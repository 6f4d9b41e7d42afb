"""Clustering: mini-batch k-means on embeddings, scored by V-measure (MTEB's protocol)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics.cluster import homogeneity_completeness_v_measure

from . import _items
from ._validation import as_embeddings, as_labels, check_positive_int, check_same_length

__all__ = ["score_clustering"]


def score_clustering(
    embeddings: Any,
    labels: Any,
    *,
    batch_size: int = 500,
    seed: int = 42,
    n_clusters: int | None = None,
    return_items: bool = False,
) -> dict[str, Any]:
    """Cluster the embeddings with mini-batch k-means and compare with the true labels.

    ``MiniBatchKMeans(n_clusters, batch_size, n_init="auto", random_state=seed)`` (one k-means++
    initialisation) is fitted once; the assignments are compared with ``labels``.

    Args:
        embeddings: (n, d) embeddings.
        labels: n true labels (ints or strings).
        batch_size: k-means mini-batch size (500 in MTEB; not the encoding batch size).
        seed: k-means random state.
        n_clusters: number of clusters; default the number of distinct labels.
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.

    Returns:
        v_measure, homogeneity, completeness and main_score (v_measure).
    """
    x = as_embeddings("embeddings", embeddings)
    y = as_labels("labels", labels)
    n = check_same_length(embeddings=x, labels=y)
    n_labels = len(np.unique(y))
    if n_labels < 2:
        raise ValueError(
            f"labels: clustering needs at least two distinct labels, got only {np.unique(y).tolist()!r}."
        )
    k = n_labels if n_clusters is None else check_positive_int("n_clusters", n_clusters)
    if k > n:
        raise ValueError(f"n_clusters: {k} clusters cannot be formed from {n} samples.")
    batch_size = check_positive_int("batch_size", batch_size)
    model = MiniBatchKMeans(
        n_clusters=k, batch_size=batch_size, n_init="auto", compute_labels=True, random_state=seed
    )
    model.fit(x)
    homogeneity, completeness, v_measure = homogeneity_completeness_v_measure(y, model.labels_)
    out: dict[str, Any] = {
        "v_measure": float(v_measure),
        "homogeneity": float(homogeneity),
        "completeness": float(completeness),
        "main_score": float(v_measure),
    }
    if return_items:  # each text's true label and cluster
        out["items"] = {"labels": y, "clusters": model.labels_}
    return out


@dataclass(frozen=True)
class ClusteringItems(_items.Items):
    """Clustering's per-item evidence: each text's true label and its k-means cluster."""

    task_type: ClassVar[str] = "Clustering"
    labels: NDArray[Any]
    clusters: NDArray[Any]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str = "") -> ClusteringItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        labels, clusters = _items.labels(items, "labels"), _items.labels(items, "clusters")
        return cls(_items.same_length(labels, clusters), labels, clusters)

    def statistic(self, key: str) -> _items.Statistic:
        from sklearn.metrics import v_measure_score

        labels, clusters = self.labels, self.clusters
        return lambda idx: float(v_measure_score(labels[idx], clusters[idx]))


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the clustering metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    return {"embeddings": _emb(rng, 60), "references": rng.integers(0, 3, 60)}, {}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
