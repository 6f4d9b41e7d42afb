"""Semantic textual similarity: correlation of gold scores with embedding similarities, with an
explicit policy for pairs that have no similarity (out-of-vocabulary text of word models).

Word-vector models return no vector for a text none of whose words they know; its similarity is
NaN. A correlation computed after silently dropping those pairs (pandas' default) scores such a
model on the easy, covered pairs only and inflates it against sub-word models that answer every
pair. ``oov_policy`` makes the choice explicit and the coverage always visible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import NDArray
from scipy.stats import pearsonr, spearmanr

from . import _items
from ._validation import (
    as_embeddings,
    as_values,
    check_same_length,
    global_rescale,
    rescale_rows,
)

__all__ = ["score_sts"]

OovPolicy = Literal["error", "drop", "zero"]


def _unit_scaled(values: np.ndarray) -> np.ndarray:
    """``values`` times the power of two that brings the largest finite one into [0.5, 1):
    Pearson and Spearman ignore a positive factor, and squares of values near 1e300 overflow."""
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    return values if top == 0 else np.ldexp(values, -int(np.frexp(top)[1]))


def _pair_similarities(e1: np.ndarray, e2: np.ndarray) -> dict[str, np.ndarray]:
    # NaN rows (no vector) and zero rows (no direction) give NaN: the pair has no similarity.
    with np.errstate(invalid="ignore", divide="ignore"):
        # Cosine ignores each row's scale, the correlations of distances one common scale:
        # rescaled, values near 1e-200 or 1e200 neither underflow nor overflow when squared.
        r1 = rescale_rows(np.nan_to_num(e1, nan=0.0))
        r2 = rescale_rows(np.nan_to_num(e2, nan=0.0))
        n1 = np.linalg.norm(r1, axis=1)
        n2 = np.linalg.norm(r2, axis=1)
        cosine = np.einsum("ij,ij->i", r1, r2) / (n1 * n2)
        cosine[(n1 == 0) | (n2 == 0) | np.isnan(e1).any(axis=1) | np.isnan(e2).any(axis=1)] = np.nan
        _, (g1, g2) = global_rescale(np.nan_to_num(e1, nan=0.0), np.nan_to_num(e2, nan=0.0))
        diff = np.where(np.isnan(e1) | np.isnan(e2), np.nan, g1 - g2)
        return {
            "cosine": cosine,
            "manhattan": -np.abs(diff).sum(axis=1),
            "euclidean": -np.sqrt((diff**2).sum(axis=1)),
        }


def _similarities(
    gold: np.ndarray, embeddings1: Any, embeddings2: Any, predictions: Any
) -> dict[str, np.ndarray]:
    """The similarities to correlate: ``{"": predictions}`` or the embeddings' cosine and
    (negated) distances."""
    if predictions is not None:
        if embeddings1 is not None or embeddings2 is not None:
            raise ValueError(
                "predictions: give either predictions or embeddings1/embeddings2, not both."
            )
        sims = {"": as_values("predictions", predictions, missing_ok=True)}
        check_same_length(references=gold, predictions=sims[""])
        return sims
    e1 = as_embeddings("embeddings1", embeddings1, missing_ok=True)
    e2 = as_embeddings("embeddings2", embeddings2, dim=e1.shape[1], missing_ok=True)
    check_same_length(references=gold, embeddings1=e1, embeddings2=e2)
    return _pair_similarities(e1.astype(np.float64), e2.astype(np.float64))


def _correlations(
    gold: np.ndarray, sims: dict[str, np.ndarray], keep: np.ndarray
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, values in sims.items():
        v = _unit_scaled(np.where(np.isfinite(values), values, 0.0)[keep])
        prefix = f"{name}_" if name else ""
        if np.ptp(v) <= 1e-12 * max(1.0, float(np.abs(v).max())):
            if name in ("", "cosine"):
                raise ValueError(
                    f"{'predictions' if not name else 'embeddings1'}: every similarity is the "
                    "same; a correlation is undefined."
                )
            # A distance that is the same for every pair says nothing; the cosine still does.
            out[f"{prefix}pearson"] = out[f"{prefix}spearman"] = None
            continue
        out[f"{prefix}pearson"] = float(pearsonr(gold[keep], v).statistic)
        out[f"{prefix}spearman"] = float(spearmanr(gold[keep], v).statistic)
    return out


def score_sts(
    references: Any,
    embeddings1: Any = None,
    embeddings2: Any = None,
    predictions: Any = None,
    *,
    oov_policy: OovPolicy = "error",
    return_items: bool = False,
) -> dict[str, Any]:
    """Pearson and Spearman between gold scores and similarities.

    Args:
        references: gold similarity scores, one per pair.
        embeddings1: (n, dim) embeddings of the first texts (NaN rows: no vector).
        embeddings2: (n, dim) embeddings of the second texts.
        predictions: predicted similarities instead of embeddings (NaN: none).
        oov_policy: what a pair without a similarity means: ``error`` (raise, naming how many),
            ``drop`` (correlate the covered pairs only; coverage reported), ``zero`` (its
            similarity is 0).
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.

    Returns:
        ``pearson``, ``spearman`` (of the cosine similarity, or of ``predictions``),
        ``n_pairs``, ``n_missing``, ``coverage`` and ``main_score`` (= spearman, as MTEB
        reports); with embeddings also MTEB's ``cosine_*``, ``manhattan_*`` and ``euclidean_*``
        Pearson and Spearman.
    """
    if oov_policy not in ("error", "drop", "zero"):
        raise ValueError(f"oov_policy: {oov_policy!r}; use 'error', 'drop' or 'zero'.")
    gold = as_values("references", references, missing_ok=False)
    sims = _similarities(gold, embeddings1, embeddings2, predictions)
    primary = sims.get("cosine", sims.get(""))
    assert primary is not None
    missing = ~np.isfinite(primary)
    n_missing = int(missing.sum())
    if n_missing and oov_policy == "error":
        raise ValueError(
            f"embeddings1/embeddings2: {n_missing} of {gold.size} pairs have no similarity (a text "
            "without a vector, e.g. all its words out of vocabulary). Choose oov_policy='drop' "
            "(correlate covered pairs; coverage is reported) or 'zero' (count them as 0)."
        )
    keep = ~missing if oov_policy == "drop" else np.ones_like(missing)
    if keep.sum() < 2:
        raise ValueError(
            f"references: {int(keep.sum())} pair(s) left to correlate; need at least 2."
        )
    if np.ptp(gold[keep]) == 0:
        raise ValueError("references: the gold scores are all equal; a correlation is undefined.")
    out = _correlations(_unit_scaled(gold), sims, keep)
    if "cosine_pearson" in out:
        out["pearson"] = out["cosine_pearson"]
        out["spearman"] = out["cosine_spearman"]
    out.update(
        {
            "n_pairs": int(gold.size),
            "n_missing": n_missing,
            "coverage": float(1 - n_missing / gold.size),
            "oov_policy": oov_policy,
            "main_score": out["spearman"],
        }
    )
    if return_items:  # each pair's gold score and similarity (the pairs correlated)
        primary_used = np.where(np.isfinite(primary), primary, 0.0)[keep]
        out["items"] = {"gold": gold[keep], "similarity": primary_used}
    return out


@dataclass(frozen=True)
class StsItems(_items.Items):
    """STS's per-item evidence: each correlated pair's gold score and similarity."""

    task_type: ClassVar[str] = "STS"
    gold: NDArray[Any]
    similarity: NDArray[Any]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str = "") -> StsItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        gold, similarity = _items.numbers(items, "gold"), _items.numbers(items, "similarity")
        return cls(_items.same_length(gold, similarity), gold, similarity)

    def statistic(self, key: str) -> _items.Statistic:
        gold, sim = self.gold, self.similarity
        correlate = pearsonr if key.endswith("pearson") else spearmanr

        def sts(idx: NDArray[np.int64]) -> float:
            if np.ptp(gold[idx]) == 0 or np.ptp(sim[idx]) == 0:
                return float("nan")
            return float(correlate(gold[idx], sim[idx]).statistic)

        return sts


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the sts metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    a = _emb(rng, 40)
    return {
        "embeddings1": a,
        "embeddings2": a + _emb(rng, 40),
        "references": rng.uniform(0, 5, 40),
    }, {"oov_policy": "error"}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
