"""Retrieval: exact cosine top-k search and trec_eval-convention ranking metrics."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from chemteb_eval.errors import short_repr

from . import _items
from ._validation import (
    FloatArray,
    as_embeddings,
    check_positive_int,
    check_zero_rows,
    l2_normalize,
    same_precision,
)

__all__ = [
    "DEFAULT_CORPUS_CHUNK",
    "DEFAULT_K_VALUES",
    "RowSource",
    "rank_corpus",
    "score_retrieval",
    "trec_metrics",
]

DEFAULT_K_VALUES: tuple[int, ...] = (1, 3, 5, 10, 20, 100, 1000)
# Grades are gains in nDCG: up to 2**53 every sum of them stays exact in float64 (trec_eval
# reads them as C longs; nobody grades beyond a handful of levels).
MAX_GRADE = 2**53


def _as_ids(name: str, ids: Any, n_rows: int, rows_name: str) -> list[str]:
    if ids is None:
        raise ValueError(f"{name}: missing; pass one id per row of {rows_name}.")
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    out = [str(i) for i in ids]
    if len(out) != n_rows:
        raise ValueError(
            f"length mismatch: {name} has {len(out)} ids, {rows_name} has {n_rows} rows."
        )
    if len(set(out)) != len(out):
        seen: set[str] = set()
        dup = next(i for i in out if i in seen or seen.add(i))  # type: ignore[func-returns-value]
        raise ValueError(f"{name}: ids must be unique; {dup!r} occurs more than once.")
    return out


def _as_grade(qid: str, did: str, grade: Any) -> int:
    shown = short_repr(grade)
    try:
        value = float(grade)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            f"qrels: grade of query {qid!r}, document {did!r} is {shown}; grades must be integers "
            f"from 0 to {MAX_GRADE}."
        ) from None
    if not math.isfinite(value) or value != int(value) or not 0 <= value <= MAX_GRADE:
        raise ValueError(
            f"qrels: grade of query {qid!r}, document {did!r} is {shown}; grades must be integers "
            f"from 0 (judged not relevant) to {MAX_GRADE}."
        )
    return int(value)


class RowSource:
    """A matrix whose rows are made when read (a compressed corpus: ``runner.costs``), which
    ``score_retrieval`` and ``rank_corpus`` read a chunk at a time and never hold whole. A
    subclass sets ``shape`` and ``dtype`` (float32 or float64) and gives ``rows``: the rows of
    a slice or of an array of row indices (the same bits however asked for)."""

    shape: tuple[int, int]
    dtype: np.dtype[Any]

    def rows(self, index: slice | NDArray[np.int64]) -> NDArray[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: Any) -> NDArray[Any]:
        if not isinstance(index, slice):
            return self.rows(np.asarray(index, dtype=np.int64))
        start, stop, step = index.indices(len(self))
        if step != 1:
            raise IndexError("a RowSource reads slices of step 1")
        return self.rows(slice(start, max(start, stop)))

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        whole = self.rows(slice(0, len(self)))  # every row at once: not for a large corpus
        return whole if dtype is None else whole.astype(dtype)


# Documents scored at a time per query chunk: 256 queries x 65,536 documents is 64 MiB of
# float32 similarities, so memory stays bounded however large the corpus (a 5M-document corpus is
# ranked in 77 passes; see benchmarks/bench_retrieval_scale.py).
DEFAULT_CORPUS_CHUNK = 65_536


def rank_corpus(
    queries: FloatArray,
    corpus: FloatArray,
    corpus_ids: Sequence[str],
    top_k: int,
    *,
    chunk_size: int = 256,
    corpus_chunk_size: int = DEFAULT_CORPUS_CHUNK,
) -> NDArray[np.int64]:
    """Row indices of the ``top_k`` most cosine-similar documents per query, best first.

    Ties in score are broken by document id, descending, compared as strings (trec_eval's order),
    including ties at the top-k boundary; never by row position. Similarities are computed
    ``chunk_size`` queries by ``corpus_chunk_size`` documents at a time in the embeddings' own
    precision, keeping a running top-k per query: (score, id) is a total order, so the top-k of
    the whole corpus is the top-k of the chunks' top-ks.

    Identical document vectors (duplicate texts) get one score, computed once for the group, so
    they tie exactly and the id decides, whatever the rows' order and the chunk sizes. BLAS
    rounds the same dot product differently at different positions of a matrix product (its
    edge tiles; a one-row product is a matrix-vector product): the same vector at rows 2 and 20
    of one 23-row chunk scored 1.5e-8 apart in float32, which ranked the duplicates by row
    position. Distinct vectors whose similarities differ by no more than such a rounding error
    may still swap between chunk sizes, as they do between BLAS builds.

    MTEB 2.26 (``mteb/models/search_wrappers.py``): per-chunk ``torch.topk`` (which picks among
    tied scores at its boundary by position) merged in a heap of (score, id), then pytrec_eval
    orders the retrieved set by score, then id descending. On inputs without ties we rank as it
    does; on ties we keep trec_eval's rule at every step, where MTEB's pick of tied documents at
    a chunk's boundary and its duplicates' scores depend on row positions.

    ``corpus`` may be a memory-mapped array or a ``RowSource``: only one chunk of it is read
    into memory at a time, once (and once more to find identical rows).
    """
    chunk_size = check_positive_int("chunk_size", chunk_size)
    corpus_chunk_size = check_positive_int("corpus_chunk_size", corpus_chunk_size)
    top_k = check_positive_int("top_k", top_k)
    n_docs = len(corpus)
    if n_docs == 0 or len(queries) == 0:
        raise ValueError(f"corpus: {n_docs} documents and {len(queries)} queries; both needed.")
    k = min(top_k, n_docs)
    id_rank = _id_rank(corpus_ids, n_docs)
    group_of, rep_rows = _duplicate_groups(corpus, id_rank, corpus_chunk_size)
    reps = l2_normalize(np.asarray(corpus[rep_rows])) if len(rep_rows) else None
    q = l2_normalize(np.ascontiguousarray(queries))
    starts = range(0, len(q), chunk_size)
    best: list[tuple[NDArray[np.int64], NDArray[Any]] | None] = [None] * len(starts)
    # The corpus outside, the queries inside: each corpus chunk is read and normalised once (it
    # was once per query chunk: 1.9 of 8.7 s at 69,457 documents x 5,000 queries), memory stays
    # one corpus chunk plus the queries' running top-k (the output's size), and every query
    # chunk still meets the corpus chunks in order, so each merge is the one it was. C order
    # whatever the input's: another memory layout is another product, other roundings.
    for c_start in range(0, n_docs, corpus_chunk_size):
        chunk = np.ascontiguousarray(corpus[c_start : c_start + corpus_chunk_size])
        c = l2_normalize(chunk)
        groups = group_of[c_start : c_start + len(c)]
        copies = np.flatnonzero(groups >= 0)
        for i, start in enumerate(starts):
            q_chunk = q[start : start + chunk_size]
            sims = q_chunk @ c.T
            if reps is not None and copies.size:
                # One score per group of identical documents, whichever chunk each copy is in:
                # the query chunk against all the groups, the same product in every chunk.
                sims[:, copies] = (q_chunk @ reps.T)[:, groups[copies]]
            if not np.isfinite(sims).all():  # a NaN or zero row, in whichever chunk it is
                raise ValueError(
                    "rank_corpus: a similarity is not a finite number (a NaN or all-zero "
                    "embedding); score_retrieval checks the embeddings first."
                )
            local = _top_k(sims, id_rank[c_start : c_start + len(c)], k)
            found = (local + c_start, np.take_along_axis(sims, local, axis=1))
            held = best[i]
            best[i] = found if held is None else _merge_top_k(held, found, id_rank, k)
    out = np.empty((len(q), k), dtype=np.int64)
    for start, kept in zip(starts, best, strict=True):
        assert kept is not None
        out[start : start + len(kept[0])] = kept[0]
    return out


def _id_rank(corpus_ids: Sequence[str], n_docs: int) -> NDArray[np.int64]:
    """Each document's rank in ascending string order of the ids (negated, it sorts ties by id
    descending). Python's sort, not numpy's: numpy's str arrays drop trailing NUL characters, so
    ids "a" and "a\\x00" would compare equal and fall back to row order."""
    ids = [str(i) for i in corpus_ids]
    if len(ids) != n_docs:
        raise ValueError(f"corpus_ids: {len(ids)} ids for {n_docs} documents; pass one per row.")
    if len(set(ids)) != n_docs:
        raise ValueError("corpus_ids: ids must be unique; the tie rule orders documents by id.")
    id_rank = np.empty(n_docs, dtype=np.int64)
    id_rank[sorted(range(n_docs), key=ids.__getitem__)] = np.arange(n_docs)
    return id_rank


def _duplicate_groups(
    corpus: FloatArray, id_rank: NDArray[np.int64], chunk: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Groups of bit-identical corpus rows: each row's group (-1 for a row no other row equals)
    and each group's representative row, the groups ordered by their smallest id so that the
    groups' matrix is the same for any row order.

    Rows are hashed chunk by chunk (a memory-mapped corpus is read once more: 2 s per million
    384-d float32 rows, against 42 s to rank them for 1,000 queries) and only rows sharing a hash
    are compared, byte for byte."""
    n_docs = len(corpus)
    hashes = np.empty(n_docs, dtype=np.int64)
    for start in range(0, n_docs, chunk):
        rows = _row_bytes(np.asarray(corpus[start : start + chunk]))
        hashes[start : start + len(rows)] = np.fromiter(
            (hash(bytes(r)) for r in rows), dtype=np.int64, count=len(rows)
        )
    _, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    group_of = np.full(n_docs, -1, dtype=np.int64)
    candidates = np.flatnonzero(counts[inverse] > 1)
    if not len(candidates):  # the usual case: no two rows share a hash
        return group_of, np.empty(0, dtype=np.int64)
    # The exact check: equal hashes of unequal rows (a collision) split into groups of their own.
    _, exact, sizes = np.unique(
        _row_bytes(np.asarray(corpus[candidates])), return_inverse=True, return_counts=True
    )
    exact = exact.ravel()
    copies = sizes[exact] > 1
    rows, groups = candidates[copies], exact[copies]
    # Order the groups by their smallest id; within a group every row holds the same vector.
    first_id = np.full(len(sizes), n_docs, dtype=np.int64)
    np.minimum.at(first_id, groups, id_rank[rows])
    used = np.flatnonzero(first_id < n_docs)
    order = used[np.argsort(first_id[used])]
    new_index = np.empty(len(sizes), dtype=np.int64)
    new_index[order] = np.arange(len(order))
    group_of[rows] = new_index[groups]
    rep_rows = np.empty(len(order), dtype=np.int64)
    rep_rows[group_of[rows]] = rows
    return group_of, rep_rows


def _row_bytes(rows: NDArray[Any]) -> NDArray[Any]:
    """Each row as one opaque value of its bytes (numpy void), for hashing and exact equality."""
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()


def _top_k(sims: NDArray[Any], id_rank: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """Per row of ``sims``, the column indices of its ``k`` best (score, then id descending)."""
    n_docs = sims.shape[1]
    k = min(k, n_docs)
    # Filled by one of the branches below for every row; -1 would show a row that was not.
    out = np.full((len(sims), k), -1, dtype=np.int64)
    if k < n_docs:
        r = np.arange(len(sims))[:, None]
        cand = np.argpartition(sims, n_docs - k, axis=1)[:, n_docs - k :]
        kth = sims[r, cand].min(axis=1)
        n_at_least = (sims >= kth[:, None]).sum(axis=1)
        for i in np.flatnonzero(n_at_least > k):
            # Documents tied with the k-th score: take the whole tie and let the id decide.
            wide = np.flatnonzero(sims[i] >= kth[i])
            order = np.lexsort((-id_rank[wide], -sims[i, wide]))
            out[i] = wide[order[:k]]
        exact = np.flatnonzero(n_at_least == k)
        cand = cand[exact]
        order = np.lexsort((-id_rank[cand], -sims[exact[:, None], cand]), axis=1)
        out[exact] = np.take_along_axis(cand, order, axis=1)
    else:
        out[:] = np.lexsort((np.broadcast_to(-id_rank, sims.shape), -sims), axis=1)
    if (out < 0).any():  # only NaN similarities could leave a row unfilled; inputs are checked
        raise RuntimeError("rank_corpus: a query's similarities were not finite numbers.")
    return out


def _merge_top_k(
    best: tuple[NDArray[np.int64], NDArray[Any]],
    found: tuple[NDArray[np.int64], NDArray[Any]],
    id_rank: NDArray[np.int64],
    k: int,
) -> tuple[NDArray[np.int64], NDArray[Any]]:
    """The ``k`` best of two per-row candidate lists (document rows and their scores)."""
    rows = np.concatenate([best[0], found[0]], axis=1)
    scores = np.concatenate([best[1], found[1]], axis=1)
    order = np.lexsort((-id_rank[rows], -scores), axis=1)[:, :k]
    return np.take_along_axis(rows, order, axis=1), np.take_along_axis(scores, order, axis=1)


def trec_metrics(
    ranked_grades: NDArray[np.int64],
    judged_grades: Sequence[Sequence[int]],
    k_values: Sequence[int],
) -> dict[str, NDArray[np.float64]]:
    """Per-query ranking metrics by trec_eval's definitions (and MTEB's MRR).

    Args:
        ranked_grades: (n_queries, K) grade of the document at each rank (0 if not relevant).
        judged_grades: per query, the grades of all its relevant (grade > 0) judged documents,
            whether or not they are in the corpus (they count in recall's denominator and in the
            ideal DCG).
        k_values: cut-offs.

    Returns:
        ``{ndcg,map,recall,precision,mrr}_at_{k}`` -> one value per query.
    """
    n_q, depth = ranked_grades.shape
    relevant = ranked_grades > 0
    hits = np.cumsum(relevant, axis=1)
    ranks = np.arange(1, depth + 1)
    discounts = np.log2(ranks + 1.0)
    dcg = np.cumsum(ranked_grades / discounts, axis=1)
    ap_terms = np.cumsum(np.where(relevant, hits / ranks, 0.0), axis=1)
    n_rel = np.array([len(g) for g in judged_grades], dtype=np.float64)
    # The ideal ranking holds no more than the most relevant documents of any query: past that
    # width its DCG stops growing, so a k of 10**12 needs no 10**12 columns.
    width = max(1, min(max(k_values), max((len(g) for g in judged_grades), default=1)))
    ideal = np.zeros((n_q, width))
    for i, grades in enumerate(judged_grades):
        top = np.sort(np.asarray(grades, dtype=np.float64))[::-1][:width]
        ideal[i, : len(top)] = top
    idcg = np.cumsum(ideal / np.log2(np.arange(1, width + 1) + 1.0), axis=1)
    first_hit = np.where(relevant.any(axis=1), np.argmax(relevant, axis=1), depth)

    out: dict[str, NDArray[np.float64]] = {}
    for k in k_values:
        if depth == 0:
            zeros = np.zeros(n_q)
            dcg_k = ap_k = hits_k = zeros
        else:
            cut = min(k, depth) - 1
            dcg_k, ap_k, hits_k = dcg[:, cut], ap_terms[:, cut], hits[:, cut].astype(np.float64)
        out[f"ndcg_at_{k}"] = dcg_k / idcg[:, min(k, width) - 1]
        out[f"map_at_{k}"] = ap_k / n_rel
        out[f"recall_at_{k}"] = hits_k / n_rel
        out[f"precision_at_{k}"] = hits_k / k
        out[f"mrr_at_{k}"] = np.where(first_hit < k, 1.0 / (first_hit + 1), 0.0)
    return out


def score_retrieval(
    query_embeddings: Any,
    corpus_embeddings: Any,
    query_ids: Any,
    corpus_ids: Any,
    qrels: Mapping[Any, Mapping[Any, Any]],
    *,
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    decimals: int | None = 5,
    chunk_size: int = 256,
    return_items: bool = False,
    no_relevant: str = "skip",
    zero_rows: str = "error",
) -> dict[str, Any]:
    """Exact cosine retrieval scored as MTEB scores it (pytrec_eval for nDCG/MAP/recall/P).

    Conventions (trec_eval's): graded gain = relevance, log2 discount; ties in score broken by
    document id descending as strings; MAP@k and recall@k divide by all relevant documents;
    P@k divides by k. A query with no relevant document is not scored. A relevant document
    missing from ``corpus_ids`` counts as relevant but is never retrieved (a warning gives the
    count). Metrics are means over the scored queries.

    Args:
        query_embeddings: (n_queries, d) query embeddings.
        corpus_embeddings: (n_docs, d) document embeddings, or a ``RowSource`` (read a
            chunk at a time: a compressed corpus is never made whole).
        query_ids: one id per query row (compared as strings).
        corpus_ids: one id per document row (compared as strings).
        qrels: ``{query_id: {doc_id: grade}}``; grades are non-negative integers, > 0 relevant.
        k_values: cut-offs; documents are retrieved to depth ``max(k_values)``.
        decimals: MTEB rounds the means of nDCG, MAP, recall and precision to 5 decimals (MRR is
            not rounded); ``None`` keeps full precision.
        chunk_size: queries scored at a time (memory: chunk_size x n_docs floats).
        return_items: also return ``items``, the per-item evidence a bootstrap resamples
            (``scoring.uncertainty``, ``chemteb compare``); not part of the protocol.
        no_relevant: a judged query none of whose judgements is relevant (all grades 0):
            ``"skip"`` leaves it out of the means (nDCG and recall divide by its relevant
            documents, of which it has none: undefined); ``"zero"`` scores it 0 on every
            metric, as MTEB 2.26 does (it averages pytrec_eval's per-query values over every
            judged query, and pytrec_eval gives such a query 0).

        zero_rows: a row of zeros (a compressed vector with no positive component: binary,
            int8) has no direction: ``"error"`` refuses it (an encoder's zero row is a bug);
            ``"zero"`` gives it cosine 0 with everything, as MTEB's similarity (sentence-
            transformers' ``cos_sim`` normalises with an epsilon) does for compressed vectors.
    Returns:
        ``{ndcg,map,recall,precision,mrr}_at_{k}`` for every k and main_score (ndcg_at_10, or
        nDCG at the first k when 10 is not among the cut-offs).
    """
    if no_relevant not in ("skip", "zero"):
        raise ValueError(f"no_relevant: 'skip' or 'zero', got {no_relevant!r}.")
    q_emb = as_embeddings("query_embeddings", query_embeddings)
    c_emb = _checked_corpus(corpus_embeddings, q_emb, zero_rows)
    qids = _as_ids("query_ids", query_ids, len(q_emb), "query_embeddings")
    dids = _as_ids("corpus_ids", corpus_ids, len(c_emb), "corpus_embeddings")
    k_values = _as_k_values(k_values)
    chunk_size = check_positive_int("chunk_size", chunk_size)
    if decimals is not None and (
        isinstance(decimals, bool) or not isinstance(decimals, int) or decimals < 0
    ):
        raise ValueError(f"decimals: a number of decimals >= 0 or None, got {decimals!r}.")
    qid_row = {q: i for i, q in enumerate(qids)}
    judged = _judged(qrels, qid_row)
    did_row = {d: i for i, d in enumerate(dids)}
    scored = [q for q in qids if any(g > 0 for g in judged.get(q, {}).values())]
    if not scored:
        raise ValueError("qrels: no query has a relevant document (grade > 0); nothing to score.")
    missing = sum(1 for q in scored for d, g in judged[q].items() if g > 0 and d not in did_row)
    if missing:
        warnings.warn(
            f"qrels: {missing} relevant document id(s) are not in corpus_ids; they count as "
            "relevant but can never be retrieved (trec_eval's convention).",
            stacklevel=2,
        )
    rows = np.array([qid_row[q] for q in scored], dtype=np.int64)
    q_emb, c_emb = same_precision(q_emb, c_emb)
    ranked = rank_corpus(q_emb[rows], c_emb, dids, max(k_values), chunk_size=chunk_size)
    ranked_grades = _ranked_grades(ranked, [judged[q] for q in scored], did_row)
    judged_relevant = [[g for g in judged[q].values() if g > 0] for q in scored]
    per_query = trec_metrics(ranked_grades, judged_relevant, k_values)
    if no_relevant == "zero":  # every judged query, in query order; the unanswerable ones 0
        scored, per_query = _with_zeros(qids, judged, scored, per_query)
    result: dict[str, Any] = _means(per_query, k_values, len(scored), decimals)
    if return_items:  # every metric of every scored query (unrounded)
        result["items"] = {"query_ids": np.asarray(scored), **per_query}
    return result


def _checked_corpus(corpus: Any, q_emb: FloatArray, zero_rows: str) -> Any:
    """The corpus checked and returned as ``as_embeddings`` and ``check_zero_rows`` do it; a
    ``RowSource`` a chunk at a time (its rows are made when ranked, never all at once)."""
    if not isinstance(corpus, RowSource):
        c_emb = as_embeddings("corpus_embeddings", corpus, dim=q_emb.shape[1])
        check_zero_rows(zero_rows, query_embeddings=q_emb, corpus_embeddings=c_emb)
        return c_emb
    check_zero_rows(zero_rows)
    if len(corpus) == 0 or corpus.shape[1] != q_emb.shape[1]:
        raise ValueError(
            f"corpus_embeddings: shape {corpus.shape}; expected rows of {q_emb.shape[1]} "
            "dimensions like the other embeddings."
        )
    bad, zero = [], []
    for start in range(0, len(corpus), DEFAULT_CORPUS_CHUNK):
        block = corpus[start : start + DEFAULT_CORPUS_CHUNK]
        bad += (np.flatnonzero(~np.isfinite(block).all(axis=1)) + start).tolist()
        zero += (np.flatnonzero(~np.any(block != 0, axis=1)) + start).tolist()
    if bad:
        raise ValueError(
            f"corpus_embeddings: {len(bad)} row(s) contain NaN or inf, first at row {bad[0]}; "
            "check the encoder's output for these inputs."
        )
    check_zero_rows(zero_rows, query_embeddings=q_emb)
    if zero and zero_rows == "error":
        raise ValueError(
            f"corpus_embeddings: {len(zero)} row(s) are all zeros (first at row {zero[0]}); "
            "cosine similarity is undefined for them. Check the encoder (empty texts?) before "
            "scoring."
        )
    # as same_precision: other precisions than the queries' are compared in float64 (whole)
    return corpus if corpus.dtype == q_emb.dtype else np.asarray(corpus, dtype=np.float64)


def _as_k_values(k_values: Any) -> list[int]:
    if isinstance(k_values, int) or not k_values:
        raise ValueError(
            f"k_values: must be a non-empty sequence of positive integers, got {k_values!r}."
        )
    return sorted({check_positive_int("k_values", k) for k in k_values})


def _judged(qrels: Any, qid_row: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """``qrels`` with string ids and checked integer grades."""
    if not isinstance(qrels, Mapping):
        raise ValueError(
            f"qrels: must be a mapping {{query_id: {{doc_id: grade}}}}, got {type(qrels).__name__}."
        )
    judged: dict[str, dict[str, int]] = {}
    for raw_qid, docs in qrels.items():
        qid = str(raw_qid)
        if qid not in qid_row:
            unknown = [str(q) for q in qrels if str(q) not in qid_row]
            raise ValueError(
                f"qrels: {len(unknown)} query id(s) are not in query_ids, e.g. {unknown[:3]!r}; "
                "pass the embeddings of every judged query."
            )
        if not isinstance(docs, Mapping):
            raise ValueError(f"qrels: entry of query {qid!r} must be a mapping {{doc_id: grade}}.")
        judged[qid] = {str(d): _as_grade(qid, str(d), g) for d, g in docs.items()}
    return judged


def _ranked_grades(
    ranked: NDArray[np.int64], judged: list[dict[str, int]], did_row: Mapping[str, int]
) -> NDArray[np.int64]:
    """The grade of the document at each rank of each query (0 if not relevant): a look-up of
    (query, doc) keys in the sorted judged pairs, vectorised."""
    n_docs = len(did_row)
    pair_keys, pair_grades = [], []
    for i, grades in enumerate(judged):
        for d, g in grades.items():
            if g > 0 and d in did_row:
                pair_keys.append(i * n_docs + did_row[d])
                pair_grades.append(g)
    keys = np.asarray(pair_keys, dtype=np.int64)
    order = np.argsort(keys)
    keys, values = keys[order], np.asarray(pair_grades, dtype=np.int64)[order]
    wanted = np.arange(len(judged), dtype=np.int64)[:, None] * n_docs + ranked
    if not len(keys):
        return np.zeros_like(wanted)
    pos = np.clip(np.searchsorted(keys, wanted), 0, len(keys) - 1)
    found: NDArray[np.int64] = np.where(keys[pos] == wanted, values[pos], 0)
    return found


def _with_zeros(
    qids: Sequence[str],
    judged: Mapping[str, Mapping[str, int]],
    scored: list[str],
    per_query: dict[str, NDArray[np.float64]],
) -> tuple[list[str], dict[str, NDArray[np.float64]]]:
    """``per_query`` over every judged query in ``qids`` order, 0 where none is relevant."""
    everyone = [q for q in qids if q in judged]
    rows = {q: i for i, q in enumerate(scored)}
    take = np.array([rows.get(q, -1) for q in everyone], dtype=np.int64)
    out = {}
    for name, values in per_query.items():
        padded = np.concatenate([values, np.zeros(1)])  # index -1: the zero
        out[name] = padded[take]
    return everyone, out


def _means(
    per_query: Mapping[str, NDArray[np.float64]],
    k_values: Sequence[int],
    n_queries: int,
    decimals: int | None,
) -> dict[str, float]:
    result: dict[str, float] = {}
    for name in ("ndcg", "map", "recall", "precision", "mrr"):
        for k in k_values:
            # Python's left-to-right sum, as the reference averages.
            mean = sum(per_query[f"{name}_at_{k}"].tolist()) / n_queries
            if decimals is not None and name != "mrr":
                mean = round(mean, decimals)
            result[f"{name}_at_{k}"] = float(mean)
    result["main_score"] = (
        result["ndcg_at_10"] if 10 in k_values else result[f"ndcg_at_{k_values[0]}"]
    )
    return result


@dataclass(frozen=True)
class RetrievalItems(_items.Items):
    """Retrieval's per-item evidence: each scored query's value of one metric (nDCG, MAP, MRR,
    recall, precision: all in [0, 1]), and the query ids when the items name them. Every
    retrieval score is a mean over queries, so a resample's score is the resample's mean."""

    task_type: ClassVar[str] = "Retrieval"
    key: str
    values: NDArray[np.float64]
    query_ids: tuple[str, ...] | None = None

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str) -> RetrievalItems:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        values = _items.numbers(items, key, 0.0, 1.0)
        ids = None
        if "query_ids" in items:
            raw = _items.array(items, "query_ids")
            _items.same_length(values, raw)
            ids = tuple(str(i) for i in raw.tolist())
        return cls(len(values), key, values.astype(np.float64), ids)

    @property
    def ids(self) -> tuple[str, ...] | None:
        return self.query_ids

    def statistic(self, key: str) -> _items.Statistic:
        if key != self.key:
            raise ValueError(f"key: these items hold {self.key!r}, not {key!r}")
        values = self.values
        return lambda idx: float(values[idx].mean())


def example_inputs(rng: np.random.Generator) -> tuple[dict[str, Any], dict[str, Any]]:
    """A small random input of the retrieval metric's Space: (the arrays of an
    ``.npz`` upload, named after ``compute``'s arguments; the other arguments, JSON-able). The
    ``METRICS`` row names it; the widget offers it as the example upload."""
    qrels = {f"q{i}": {f"d{int(j)}": 1} for i, j in enumerate(rng.integers(0, 100, 8))}
    return {
        "query_embeddings": _emb(rng, 8),
        "corpus_embeddings": _emb(rng, 100),
        "query_ids": np.array([f"q{i}" for i in range(8)]),
        "corpus_ids": np.array([f"d{i}" for i in range(100)]),
    }, {"qrels": qrels}


def _emb(rng: np.random.Generator, n: int) -> Any:
    return rng.standard_normal((n, 16)).astype(np.float32)
