"""Retrieval scored from a ranking a search model returned (BM25, a fusion of two rankings),
not from vectors: MTEB's ``{query_id: {doc_id: score}}`` search output, read as pytrec_eval
reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ._validation import as_embeddings, check_zero_rows, same_precision
from .retrieval import (
    DEFAULT_K_VALUES,
    _as_ids,
    _as_k_values,
    _id_rank,
    _judged,
    _means,
    _top_k,
    _with_zeros,
    rank_corpus,
    trec_metrics,
)

__all__ = [
    "RRF_DEPTH",
    "RRF_K",
    "dense_ranking",
    "order_results",
    "ranking_from_scores",
    "reciprocal_rank_fusion",
    "score_ranked_retrieval",
]

#: A run: ``{query_id: {doc_id: score}}`` (MTEB's search output), or ``{query_id: [doc_id,
#: ...]}`` already in rank order, best first (a dense ranking, whose order is trec_eval's).
Run = Mapping[str, Mapping[str, float] | Sequence[str]]


def order_results(scores: Mapping[str, float], depth: int) -> list[str]:
    """A query's documents as trec_eval ranks them: score descending, ties by document id
    descending (compared as strings), the first ``depth``."""
    ranked = sorted(scores.items(), key=lambda kv: kv[0], reverse=True)  # ids descending...
    ranked.sort(key=lambda kv: kv[1], reverse=True)  # ...kept within each score (stable)
    return [doc for doc, _ in ranked[:depth]]


# Cormack, Clarke and Buettcher (2009), "Reciprocal rank fusion outperforms Condorcet and
# individual rank learning methods": k = 60, each list's top 1,000.
RRF_K = 60
RRF_DEPTH = 1000


def reciprocal_rank_fusion(
    runs: Sequence[Run], *, k: int = RRF_K, depth: int = RRF_DEPTH
) -> dict[str, dict[str, float]]:
    """Several rankings of the same queries fused: each document scores the sum over the runs
    of ``1 / (k + rank)``, its rank (from 1) in each run's first ``depth`` documents — a
    search output's as trec_eval orders them (score descending, ties by id descending), a
    ranked list's as given; a run that did not rank it adds nothing. The fused output is a
    search output like any: ties in the fused score (a document first in one run and second
    in the other ties one the other way round) are broken by id descending, as
    ``score_ranked_retrieval`` reads every output."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k: a non-negative integer, got {k!r}.")
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise ValueError(f"depth: a positive integer, got {depth!r}.")
    fused: dict[str, dict[str, float]] = {}
    for run in runs:
        for qid, scores in run.items():
            into = fused.setdefault(str(qid), {})
            ranked = _ranked(str(qid), scores, depth)
            for rank, doc in enumerate(ranked, start=1):
                into[doc] = into.get(doc, 0.0) + 1.0 / (k + rank)
    return fused


def _ranked(qid: str, entry: Mapping[str, float] | Sequence[str], depth: int) -> list[str]:
    if isinstance(entry, Mapping):
        return order_results({str(d): _as_score(qid, d, s) for d, s in entry.items()}, depth)
    if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence):
        raise ValueError(f"runs: the entry of query {qid!r} must be {{doc_id: score}} or a list.")
    docs = [str(d) for d in entry[:depth]]
    if len(set(docs)) != len(docs):
        raise ValueError(f"runs: query {qid!r} ranks a document twice.")
    return docs


def dense_ranking(
    query_embeddings: Any,
    corpus_embeddings: Any,
    query_ids: Any,
    corpus_ids: Any,
    *,
    top_k: int = RRF_DEPTH,
    zero_rows: str = "error",
) -> dict[str, list[str]]:
    """Each query's ``top_k`` most cosine-similar documents, best first, as ``score_retrieval``
    ranks them (``rank_corpus``: ties by id descending, at the cut too): the dense side of a
    hybrid, as a ranked list (recomputing each score one dot product at a time would round
    apart from the matrix product and could swap near-ties)."""
    q_emb = as_embeddings("query_embeddings", query_embeddings)
    c_emb = as_embeddings("corpus_embeddings", corpus_embeddings, dim=q_emb.shape[1])
    check_zero_rows(zero_rows, query_embeddings=q_emb, corpus_embeddings=c_emb)
    qids = _as_ids("query_ids", query_ids, len(q_emb), "query_embeddings")
    dids = _as_ids("corpus_ids", corpus_ids, len(c_emb), "corpus_embeddings")
    q_emb, c_emb = same_precision(q_emb, c_emb)
    rows = rank_corpus(q_emb, c_emb, dids, top_k)
    return {q: [dids[int(r)] for r in rows[i]] for i, q in enumerate(qids)}


def ranking_from_scores(
    scores: Iterable[Any],
    query_ids: Sequence[Any],
    corpus_ids: Sequence[Any],
    *,
    top_k: int = RRF_DEPTH,
    chunk: int = 16,
) -> dict[str, list[str]]:
    """Each query's ``top_k`` documents, best first, from its score of every document (one
    array per query, in corpus order): ties broken by id descending, at the cut too, so the
    list does not depend on the corpus's row order (a search model's own top-k, bm25s's,
    picks among documents tied at the cut by position: a query matching 400 of 2,500
    documents had its other 600 picked from 2,100 zeros by row). ``chunk`` queries' scores
    are held at once."""
    qids = [str(q) for q in query_ids]
    dids = [str(d) for d in corpus_ids]
    id_rank = _id_rank(dids, len(dids))
    out: dict[str, list[str]] = {}
    rows: list[Any] = []

    def flush() -> None:
        block = np.vstack(rows)
        if not np.isfinite(block).all():
            raise ValueError("scores: a document's score is not a finite number.")
        for row in _top_k(block, id_rank, top_k):
            out[qids[len(out)]] = [dids[int(r)] for r in row]
        rows.clear()

    for row in scores:
        row = np.asarray(row, dtype=np.float64)
        if row.shape != (len(dids),):
            raise ValueError(f"scores: one score per document ({len(dids)}), got {row.shape}.")
        rows.append(row)
        if len(rows) == chunk:
            flush()
    if rows:
        flush()
    if len(out) != len(qids):
        raise ValueError(f"scores: {len(out)} queries' scores for {len(qids)} query ids.")
    return out


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
