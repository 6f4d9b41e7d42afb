"""Retrieval scored from a ranking a search model returned (BM25, a fusion of two rankings),
not from vectors: MTEB's ``{query_id: {doc_id: score}}`` search output, read as pytrec_eval
reads it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .retrieval import (
    DEFAULT_K_VALUES,
    _as_k_values,
    _judged,
    _means,
    _with_zeros,
    trec_metrics,
)

__all__ = ["RRF_K", "order_results", "reciprocal_rank_fusion", "score_ranked_retrieval"]


def order_results(scores: Mapping[str, float], depth: int) -> list[str]:
    """A query's documents as trec_eval ranks them: score descending, ties by document id
    descending (compared as strings), the first ``depth``."""
    ranked = sorted(scores.items(), key=lambda kv: kv[0], reverse=True)  # ids descending...
    ranked.sort(key=lambda kv: kv[1], reverse=True)  # ...kept within each score (stable)
    return [doc for doc, _ in ranked[:depth]]


# Cormack, Clarke and Buettcher (2009), "Reciprocal rank fusion outperforms Condorcet and
# individual rank learning methods": k = 60, each list's top 1,000.
RRF_K = 60


def reciprocal_rank_fusion(
    runs: Sequence[Mapping[str, Mapping[str, float]]], *, k: int = RRF_K, depth: int = 1000
) -> dict[str, dict[str, float]]:
    """Several rankings of the same queries fused: each document scores the sum over the runs
    of ``1 / (k + rank)``, its rank (from 1) in each run's first ``depth`` documents as
    trec_eval orders them (score descending, ties by id descending); a run that did not rank
    it adds nothing. The fused output is a search output like any (ties in the fused score
    are then broken by id descending, as ``score_ranked_retrieval`` reads every output)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k: a non-negative integer, got {k!r}.")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth: a positive integer, got {depth!r}.")
    fused: dict[str, dict[str, float]] = {}
    for run in runs:
        for qid, scores in run.items():
            into = fused.setdefault(str(qid), {})
            ranked = order_results(
                {str(d): _as_score(str(qid), d, s) for d, s in scores.items()}, depth
            )
            for rank, doc in enumerate(ranked, start=1):
                into[doc] = into.get(doc, 0.0) + 1.0 / (k + rank)
    return fused


def score_ranked_retrieval(
    results: Mapping[Any, Mapping[Any, float]],
    query_ids: Sequence[Any],
    qrels: Mapping[Any, Mapping[Any, Any]],
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    decimals: int | None = 5,
    return_items: bool = False,
    no_relevant: str = "skip",
) -> dict[str, Any]:
    """MTEB's retrieval scores of a search model's output, as ``score_retrieval`` scores
    vectors (the same conventions: trec_eval's order and definitions, MTEB's rounding and its
    ``no_relevant`` rule), the first ``max(k_values)`` documents of each query ranked.

    Args:
        results: ``{query_id: {doc_id: score}}`` (MTEB's ``RetrievalOutputType``); a query
            missing from it retrieved nothing.
        query_ids: every query, in order (ids compared as strings).
        qrels: ``{query_id: {doc_id: grade}}``.
        k_values, decimals, return_items, no_relevant: as ``score_retrieval``.
    """
    if no_relevant not in ("skip", "zero"):
        raise ValueError(f"no_relevant: 'skip' or 'zero', got {no_relevant!r}.")
    if not isinstance(results, Mapping):
        raise ValueError(
            f"results: a mapping {{query_id: {{doc_id: score}}}}, got {type(results).__name__}."
        )
    k_values = _as_k_values(k_values)
    qids = [str(q) for q in query_ids]
    if len(set(qids)) != len(qids):
        raise ValueError("query_ids: an id appears twice; each query needs its own id.")
    judged = _judged(qrels, {q: i for i, q in enumerate(qids)})
    scored = [q for q in qids if any(g > 0 for g in judged.get(q, {}).values())]
    if not scored:
        raise ValueError("qrels: no query has a relevant document (grade > 0); nothing to score.")
    depth = max(k_values)
    by_query = {str(q): docs for q, docs in results.items()}
    grades = np.zeros((len(scored), depth), dtype=np.int64)
    for i, q in enumerate(scored):
        docs = by_query.get(q, {})
        if not isinstance(docs, Mapping):
            raise ValueError(f"results: the entry of query {q!r} must be {{doc_id: score}}.")
        scores = {str(d): _as_score(q, d, s) for d, s in docs.items()}
        for rank, doc in enumerate(order_results(scores, depth)):
            grades[i, rank] = max(judged[q].get(doc, 0), 0)
    judged_relevant = [[g for g in judged[q].values() if g > 0] for q in scored]
    per_query = trec_metrics(grades, judged_relevant, k_values)
    if no_relevant == "zero":
        scored, per_query = _with_zeros(qids, judged, scored, per_query)
    result: dict[str, Any] = _means(per_query, k_values, len(scored), decimals)
    if return_items:
        result["items"] = {"query_ids": np.asarray(scored), **per_query}
    return result


def _as_score(qid: str, doc: Any, score: Any) -> float:
    try:
        value = float(score)
    except (TypeError, ValueError):
        value = float("nan")
    if not np.isfinite(value):
        raise ValueError(f"results: query {qid!r}, document {doc!r}: score {score!r} is no number.")
    return value
