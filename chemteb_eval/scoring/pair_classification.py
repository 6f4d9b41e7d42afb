"""Pair classification: best-threshold accuracy and F1 over four similarity functions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.metrics import average_precision_score
from sklearn.metrics.pairwise import (
    paired_cosine_distances,
    paired_euclidean_distances,
    paired_manhattan_distances,
)

from . import _items
from ._validation import (
    FloatArray,
    as_embeddings,
    as_labels,
    check_same_length,
    check_zero_rows,
    global_rescale,
    rescale_rows,
    same_precision,
)

__all__ = ["best_threshold_metrics", "pair_scores", "score_pair_classification"]

# (name, higher score means more similar)
SIMILARITY_FUNCTIONS: tuple[tuple[str, bool], ...] = (
    ("cosine", True),
    ("dot", True),
    ("euclidean", False),
    ("manhattan", False),
)


def pair_scores(name: str, e1: FloatArray, e2: FloatArray) -> NDArray[np.float64]:
    """One pair score per row, computed as MTEB computes it so that the sort order is the same.

    Cosine, euclidean and manhattan use scikit-learn's paired functions like the reference; the
    dot product is a batched matmul, which matches the reference's per-row ``np.dot`` bit for bit
    without its Python loop. Scores come back as float64 (the reference's Python floats).
    """
    if name == "cosine":
        scores = 1 - paired_cosine_distances(e1, e2)
    elif name == "dot":
        scores = np.matmul(e1[:, None, :], e2[:, :, None])[:, 0, 0]
    elif name == "euclidean":
        scores = paired_euclidean_distances(e1, e2)
    elif name == "manhattan":
        scores = paired_manhattan_distances(e1, e2)
    else:
        raise ValueError(
            f"name: unknown similarity function {name!r}; use cosine, dot, euclidean or manhattan."
        )
    return np.asarray(scores, dtype=np.float64)


def best_threshold_metrics(
    scores: NDArray[np.float64],
    labels: NDArray[np.int64],
    higher_is_similar: bool,
    *,
    skip_tied_thresholds: bool = False,
) -> dict[str, float]:
    """Best-threshold accuracy and F1 of one score, by the reference's sweep, vectorised.

    Pairs are sorted from most to least similar (a stable sort, like Python's ``sorted``); a cut
    after row ``i`` predicts "same" for rows ``0..i``. The first cut with the strictly best value
    wins; its threshold is the midpoint of rows ``i`` and ``i + 1``.

    Args:
        scores: one score per pair.
        labels: 0/1 per pair, both present.
        higher_is_similar: True for similarities, False for distances.
        skip_tied_thresholds: skip cuts between equal scores (MTEB >= 2.21.8); the published
            ChemTEB results did not.

    Returns:
        accuracy, accuracy_threshold, f1, f1_threshold, precision, recall, ap.
    """
    n = len(scores)
    order = np.argsort(-scores if higher_is_similar else scores, kind="stable")
    s = scores[order]
    y = labels[order]
    taken = np.arange(1, n, dtype=np.int64)  # rows above the cut, for cuts after rows 0..n-2
    pos_above = np.cumsum(y)[:-1]
    n_pos = int(labels.sum())
    n_neg = n - n_pos
    neg_below = n_neg - (taken - pos_above)
    allowed = s[:-1] != s[1:] if skip_tied_thresholds else np.ones(n - 1, dtype=bool)
    midpoints = (s[:-1] + s[1:]) / 2

    accuracy, accuracy_threshold = 0.0, -1.0
    acc = (pos_above + neg_below) / n
    acc = np.where(allowed, acc, -np.inf)
    if n > 1 and acc.max() > 0:
        i = int(np.argmax(acc))
        accuracy, accuracy_threshold = float(acc[i]), float(midpoints[i])

    f1 = precision = recall = 0.0
    f1_threshold = 0.0
    valid = allowed & (pos_above > 0)
    if valid.any():
        prec = pos_above / taken
        rec = pos_above / n_pos
        with np.errstate(divide="ignore", invalid="ignore"):
            f1s = 2 * prec * rec / (prec + rec)
        f1s = np.where(valid, f1s, -np.inf)
        i = int(np.argmax(f1s))
        if f1s[i] > 0:
            f1, precision, recall = float(f1s[i]), float(prec[i]), float(rec[i])
            f1_threshold = float(midpoints[i])

    ap = average_precision_score(labels, scores * (1 if higher_is_similar else -1))
    return {
        "accuracy": accuracy,
        "accuracy_threshold": accuracy_threshold,
        "f1": f1,
        "f1_threshold": f1_threshold,
        "precision": precision,
        "recall": recall,
        "ap": float(ap),
    }


def score_pair_classification(
    embeddings1: Any,
    embeddings2: Any,
    labels: Any,
    *,
    skip_tied_thresholds: bool = False,
    return_items: bool = False,
    zero_rows: str = "error",
) -> dict[str, Any]:
    """Score pairs of embeddings against 0/1 labels ("same"/"different").

    Args:
        embeddings1: (n, d) embeddings of the first text of each pair.
        embeddings2: (n, d) embeddings of the second text.
        labels: n labels, 1 for a positive pair and 0 for a negative one; both must occur.
        skip_tied_thresholds: MTEB 2.x's sweep, which never cuts between equal scores. Default
            False: the published ChemTEB results (mteb 1.14.15) did.
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.

        zero_rows: a row of zeros (a compressed vector with no positive component: binary,
            int8) has no direction: ``"error"`` refuses it (an encoder's zero row is a bug);
            ``"zero"`` gives it cosine 0 with everything, as MTEB's similarity (sentence-
            transformers' ``cos_sim`` normalises with an epsilon) does for compressed vectors.
    Returns:
        ``{cosine,dot,euclidean,manhattan}_{accuracy,accuracy_threshold,f1,f1_threshold,
        precision,recall,ap}``, ``max_{accuracy,f1,precision,recall,ap}`` over the four functions
        and main_score (max_f1).
    """
    e1 = as_embeddings("embeddings1", embeddings1)
    e2 = as_embeddings("embeddings2", embeddings2, dim=e1.shape[1])
    y = as_labels("labels", labels)
    check_same_length(embeddings1=e1, embeddings2=e2, labels=y)
    if y.dtype.kind == "U" or not np.isin(y, (0, 1)).all():
        raise ValueError(f"labels: must be 0 or 1, got values {np.unique(y)[:5].tolist()!r}.")
    y = y.astype(np.int64)
    if len(np.unique(y)) < 2:
        raise ValueError(
            f"labels: both classes (0 and 1) are needed for average precision and F1; all are {int(y[0])}."
        )
    check_zero_rows(zero_rows, embeddings1=e1, embeddings2=e2)
    e1, e2 = same_precision(e1, e2)
    exponent, (s1, s2) = global_rescale(e1, e2)
    if exponent and e1.dtype == np.float32:
        # float64 holds every product of float32 values: the scores keep their true scale.
        e1, e2 = e1.astype(np.float64), e2.astype(np.float64)
        exponent, (s1, s2) = global_rescale(e1, e2)

    result: dict[str, Any] = {}
    items: dict[str, Any] = {"labels": y}
    for name, higher in SIMILARITY_FUNCTIONS:
        if name == "cosine":
            # Each row's scale is its own: rows near the limits, or below the norm scikit-learn
            # still normalises (10 x epsilon), are rescaled alone by a power of two (1/1024 and
            # up keep their bits: a unit vector of 384 dimensions has a value >= 0.05).
            scores = pair_scores(
                name, rescale_rows(e1, floor=2.0**-10), rescale_rows(e2, floor=2.0**-10)
            )
        else:
            scores = pair_scores(name, s1, s2)
        items[name] = scores  # the sweep can be redone on a resample of the pairs
        metrics = best_threshold_metrics(
            scores, y, higher, skip_tied_thresholds=skip_tied_thresholds
        )
        if exponent and name != "cosine":
            # Scores of the rescaled arrays: dot products are 2**(2e) too small, distances 2**e.
            power = 2 * exponent if name == "dot" else exponent
            for key in ("accuracy_threshold", "f1_threshold"):
                with np.errstate(over="ignore"):
                    metrics[key] = float(np.ldexp(metrics[key], power))
                if not np.isfinite(metrics[key]):
                    raise ValueError(
                        f"embeddings1/embeddings2: values up to {np.abs(e1).max():.3g} and "
                        f"{np.abs(e2).max():.3g} make {name} scores overflow float64; divide both "
                        "by one constant (every score but the thresholds stays the same)."
                    )
        for key, value in metrics.items():
            result[f"{name}_{key}"] = value
    for key in ("accuracy", "f1", "precision", "recall", "ap"):
        result[f"max_{key}"] = max(result[f"{name}_{key}"] for name, _ in SIMILARITY_FUNCTIONS)
    result["main_score"] = result["max_f1"]
    if return_items:
        result["items"] = items
    return result


@dataclass(frozen=True)
class PairItems(_items.Items):
    """Pair classification's per-item evidence: each pair's 0/1 label and its score under every
    similarity function; a resample's score redoes the threshold sweep on the resampled pairs."""

    task_type: ClassVar[str] = "PairClassification"
    labels: NDArray[Any]
    scores: Mapping[str, NDArray[Any]]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str = "") -> PairItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        labels = _items.numbers(items, "labels", 0, 1)
        if not np.isin(labels, (0, 1)).all():
            raise ValueError("'labels' are not 0/1")
        if len(np.unique(labels)) < 2:
            raise ValueError("'labels' hold one class only: no threshold to sweep")
        scores = {name: _items.numbers(items, name) for name, _ in SIMILARITY_FUNCTIONS}
        return cls(_items.same_length(labels, *scores.values()), labels, scores)

    def statistic(self, key: str) -> _items.Statistic:
        labels, scores = self.labels, self.scores
        metric = key.split("_", 1)[1]
        names = (
            [n for n, _ in SIMILARITY_FUNCTIONS] if key.startswith("max_") else [key.split("_")[0]]
        )

        def pairs(idx: NDArray[np.int64]) -> float:
            y = labels[idx]
            if y.min() == y.max():
                return float("nan")
            return max(
                best_threshold_metrics(scores[n][idx], y, higher)[metric]
                for n, higher in SIMILARITY_FUNCTIONS
                if n in names
            )

        return pairs


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the pair classification metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    a = _emb(rng, 50)
    return {
        "embeddings1": a,
        "embeddings2": a + _emb(rng, 50),
        "references": rng.integers(0, 2, 50),
    }, {}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
