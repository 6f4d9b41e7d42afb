"""Bitext mining: find each source row's translation among the targets by cosine similarity."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from . import _items
from ._validation import (
    FloatArray,
    as_embeddings,
    as_labels,
    check_positive_int,
    check_zero_rows,
    l2_normalize,
    same_precision,
)

__all__ = ["nearest_neighbours", "score_bitext_mining"]


def nearest_neighbours(
    queries: FloatArray, targets: FloatArray, *, chunk_size: int = 1024
) -> NDArray[np.int64]:
    """Index of the most cosine-similar target for every query row.

    The similarity matrix is built ``chunk_size`` query rows at a time, so memory stays at
    ``chunk_size x n_targets`` floats. Ties go to the lowest target index.
    """
    q = l2_normalize(queries)
    t = l2_normalize(targets)
    out = np.empty(len(q), dtype=np.int64)
    for start in range(0, len(q), chunk_size):
        sims = q[start : start + chunk_size] @ t.T
        out[start : start + chunk_size] = np.argmax(sims, axis=1)
    return out


def score_bitext_mining(
    source_embeddings: Any,
    target_embeddings: Any,
    gold: Any = None,
    *,
    chunk_size: int = 1024,
    return_items: bool = False,
    zero_rows: str = "error",
) -> dict[str, Any]:
    """Score bitext mining: each source row's top-1 target by cosine similarity against the gold.

    Precision, recall and F1 are scikit-learn's ``average="weighted"`` with ``zero_division=0``
    over target indices, as MTEB computes them: each gold target has support 1, and a target
    that attracts many sources (a hub) is punished through precision. That is why published F1
    values on ChemTEB's SMILES tasks are near 0.002.

    Args:
        source_embeddings: (n_source, d) embeddings of the source texts.
        target_embeddings: (n_target, d) embeddings of the candidate translations.
        gold: for each source row the index of its true target; default row ``i`` -> target ``i``
            (then n_source must equal n_target).
        chunk_size: source rows scored at a time (memory: chunk_size x n_target floats).
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.

        zero_rows: a row of zeros (a compressed vector with no positive component: binary,
            int8) has no direction: ``"error"`` refuses it (an encoder's zero row is a bug);
            ``"zero"`` gives it cosine 0 with everything, as MTEB's similarity (sentence-
            transformers' ``cos_sim`` normalises with an epsilon) does for compressed vectors.
    Returns:
        accuracy, precision, recall, f1 and main_score (f1).
    """
    src = as_embeddings("source_embeddings", source_embeddings)
    tgt = as_embeddings("target_embeddings", target_embeddings, dim=src.shape[1])
    check_zero_rows(zero_rows, source_embeddings=src, target_embeddings=tgt)
    chunk_size = check_positive_int("chunk_size", chunk_size)
    if gold is None:
        if len(src) != len(tgt):
            raise ValueError(
                f"references: without gold indices, source_embeddings ({len(src)} rows) and "
                f"target_embeddings ({len(tgt)} rows) must align row by row; pass the gold target "
                "index of every source row."
            )
        y_true = np.arange(len(src), dtype=np.int64)
    else:
        y_true = as_labels("references", gold)
        if y_true.dtype.kind not in "iu":
            raise ValueError("references: gold target indices must be integers.")
        if len(y_true) != len(src):
            raise ValueError(
                f"length mismatch: references has {len(y_true)} rows, source_embeddings has "
                f"{len(src)}; give one gold target index per source row."
            )
        out_of_range = (y_true < 0) | (y_true >= len(tgt))
        if out_of_range.any():
            i = int(np.flatnonzero(out_of_range)[0])
            raise ValueError(
                f"references: gold index {int(y_true[i])} at row {i} is out of range for "
                f"{len(tgt)} targets."
            )
    src, tgt = same_precision(src, tgt)
    y_pred = nearest_neighbours(src, tgt, chunk_size=chunk_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        # One call gives what MTEB's separate precision/recall/f1_score calls give.
        precision, recall, f1, _ = precision_recall_fscore_support(
            y_true, y_pred, zero_division=0, average="weighted"
        )
    out: dict[str, Any] = {
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "main_score": float(f1),
    }
    if return_items:  # each source's gold and predicted target
        out["items"] = {"y_true": y_true, "y_pred": y_pred}
    return out


@dataclass(frozen=True)
class BitextItems(_items.Items):
    """Bitext mining's per-item evidence: each source sentence's gold and predicted target."""

    task_type: ClassVar[str] = "BitextMining"
    y_true: NDArray[Any]
    y_pred: NDArray[Any]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str = "") -> BitextItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        y_true, y_pred = _items.labels(items, "y_true"), _items.labels(items, "y_pred")
        return cls(_items.same_length(y_true, y_pred), y_true, y_pred)

    def statistic(self, key: str) -> _items.Statistic:
        y_true, y_pred = self.y_true, self.y_pred

        def bitext(idx: NDArray[np.int64]) -> float:
            if key == "accuracy":
                return float((y_true[idx] == y_pred[idx]).mean())
            _, _, f1, _ = precision_recall_fscore_support(
                y_true[idx], y_pred[idx], zero_division=0, average="weighted"
            )
            return float(f1)

        return bitext


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the bitext mining metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    s = _emb(rng, 40)
    return {"source_embeddings": s, "target_embeddings": s + 0.8 * _emb(rng, 40)}, {}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
