from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chemteb_eval.scoring import score_retrieval
from chemteb_eval.scoring.retrieval import rank_corpus


def _unit(angles_deg: list[float]) -> np.ndarray:
    a = np.radians(angles_deg)
    return np.stack([np.cos(a), np.sin(a)], axis=1).astype(np.float32)


def test_hand_checked_graded_query() -> None:
    # Ranking b, a, c, d; a has grade 2, c grade 1.
    corpus = _unit([20, 10, 30, 40])
    r = score_retrieval(
        _unit([0]),
        corpus,
        ["q1"],
        ["a", "b", "c", "d"],
        {"q1": {"a": 2, "c": 1, "d": 0}},
        k_values=(1, 3, 10),
        decimals=None,
    )
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert r["ndcg_at_3"] == pytest.approx(dcg / idcg)
    assert r["map_at_3"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert r["recall_at_1"] == 0.0 and r["precision_at_1"] == 0.0 and r["mrr_at_1"] == 0.0
    assert r["mrr_at_3"] == 0.5
    assert r["recall_at_3"] == 1.0
    # P@10 divides by 10 although only 4 documents exist (trec_eval's convention).
    assert r["precision_at_10"] == pytest.approx(0.2)
    assert r["main_score"] == r["ndcg_at_10"]


def test_ties_broken_by_id_descending_as_strings() -> None:
    corpus = np.ones((3, 2), dtype=np.float32)
    ranked = rank_corpus(_unit([0]), corpus, ["9", "10", "2"], 3)
    # "9" > "2" > "10" as strings.
    assert ranked.tolist() == [[0, 2, 1]]
    # The same holds at the top-k boundary.
    assert rank_corpus(_unit([0]), corpus, ["9", "10", "2"], 1).tolist() == [[0]]
    # Three tied best documents, two places: the two largest ids win.
    corpus2 = np.vstack([_unit([50]), np.ones((3, 2), dtype=np.float32)])
    assert rank_corpus(_unit([45]), corpus2, ["x", "9", "10", "2"], 2).tolist() == [[1, 3]]


def test_missing_relevant_document_warns_and_counts() -> None:
    corpus = _unit([0, 10])
    with pytest.warns(UserWarning, match=r"1 relevant document id\(s\) are not in corpus_ids"):
        r = score_retrieval(
            _unit([0]), corpus, ["q"], ["a", "b"], {"q": {"a": 1, "zz": 1}}, decimals=None
        )
    assert r["recall_at_1"] == 0.5 and r["map_at_10"] == 0.5


def test_queries_without_relevant_documents_are_dropped() -> None:
    corpus = _unit([0, 10])
    both = score_retrieval(
        _unit([0, 10]),
        corpus,
        ["q1", "q2"],
        ["a", "b"],
        {"q1": {"a": 1}, "q2": {"a": 0}},
        decimals=None,
    )
    only = score_retrieval(_unit([0]), corpus, ["q1"], ["a", "b"], {"q1": {"a": 1}}, decimals=None)
    assert both == only


def test_rounding_follows_mteb(rng: np.random.Generator) -> None:
    q = rng.standard_normal((7, 8)).astype(np.float32)
    c = rng.standard_normal((30, 8)).astype(np.float32)
    qrels = {f"q{i}": {f"d{(3 * i) % 30}": 1, f"d{(5 * i + 1) % 30}": 2} for i in range(7)}
    args = (q, c, [f"q{i}" for i in range(7)], [f"d{i}" for i in range(30)], qrels)
    full = score_retrieval(*args, decimals=None)
    rounded = score_retrieval(*args)
    assert rounded["ndcg_at_10"] == round(full["ndcg_at_10"], 5)
    assert rounded["mrr_at_10"] == full["mrr_at_10"]


def test_corpus_order_does_not_matter(rng: np.random.Generator) -> None:
    q = rng.integers(-2, 3, (12, 4)).astype(np.float32) + 0.5
    c = rng.integers(-2, 3, (60, 4)).astype(np.float32) + 0.5  # many exact ties
    ids = [f"d{i}" for i in range(60)]
    qrels = {
        f"q{i}": {f"d{j}": int(rng.integers(1, 3)) for j in rng.choice(60, 4, replace=False)}
        for i in range(12)
    }
    qids = [f"q{i}" for i in range(12)]
    base = score_retrieval(q, c, qids, ids, qrels, k_values=(1, 5, 10, 20))
    perm = rng.permutation(60)
    shuffled = score_retrieval(
        q, c[perm], qids, [ids[i] for i in perm], qrels, k_values=(1, 5, 10, 20)
    )
    assert base == shuffled
    assert all(0.0 <= v <= 1.0 for v in base.values())


def test_chunking_and_depth_do_not_change_top(rng: np.random.Generator) -> None:
    q = rng.integers(-2, 3, (20, 4)).astype(np.float32) + 0.5
    c = rng.integers(-2, 3, (80, 4)).astype(np.float32) + 0.5
    ids = [str(i) for i in range(80)]
    full = rank_corpus(q, c, ids, 80, chunk_size=3)
    top = rank_corpus(q, c, ids, 10, chunk_size=64)
    assert (full[:, :10] == top).all()


def _exact_unit_vectors() -> np.ndarray:
    """4-d unit vectors with entries 0, +-1/2, +-1: their norms are exactly 1 and their dot
    products multiples of 1/4, so no similarity is rounded and ties are real ties, however the
    matrix product is blocked (BLAS rounds one matrix's edge tiles differently otherwise)."""
    import itertools

    halves = [np.array(v) / 2 for v in itertools.product((-1.0, 1.0), repeat=4)]
    ones = [s * np.eye(4)[i] for i in range(4) for s in (-1.0, 1.0)]
    return np.array(halves + ones, dtype=np.float32)


@settings(max_examples=60, deadline=None)
@given(
    n_docs=st.integers(1, 60),
    n_queries=st.integers(1, 9),
    top_k=st.integers(1, 70),
    chunk=st.integers(1, 25),
    levels=st.integers(1, 24),
    seed=st.integers(0, 2**16),
)
def test_streamed_ranks_equal_one_pass_over_the_corpus(
    n_docs: int, n_queries: int, top_k: int, chunk: int, levels: int, seed: int
) -> None:
    # Few distinct vectors (levels) make many exact ties, inside chunks and across them; ids
    # such as "10" and "9" test the string order of the tie rule.
    rng = np.random.default_rng(seed)
    basis = _exact_unit_vectors()[rng.permutation(24)[:levels]]
    corpus = basis[rng.integers(0, levels, n_docs)]
    queries = _exact_unit_vectors()[rng.integers(0, 24, n_queries)]
    ids = [str(i) for i in rng.permutation(n_docs * 3)[:n_docs]]
    one_pass = rank_corpus(queries, corpus, ids, top_k)
    streamed = rank_corpus(queries, corpus, ids, top_k, corpus_chunk_size=chunk, chunk_size=4)
    assert streamed.tolist() == one_pass.tolist()
    # the tie rule itself: score descending, then id descending as strings
    sims = queries @ corpus.T
    for q, row in enumerate(one_pass):
        keys = [(-sims[q, d], (*(-ord(ch) for ch in ids[d]), 1)) for d in row]
        assert keys == sorted(keys)


def test_streamed_ranks_on_continuous_vectors() -> None:
    rng = np.random.default_rng(7)
    corpus = rng.normal(size=(3000, 16))
    queries = rng.normal(size=(40, 16))
    ids = [f"doc{i}" for i in range(3000)]
    expected = rank_corpus(queries, corpus, ids, 100)
    for chunk in (1, 97, 1000, 2999):
        got = rank_corpus(queries, corpus, ids, 100, corpus_chunk_size=chunk, chunk_size=16)
        assert got.tolist() == expected.tolist()


def test_a_memory_mapped_corpus_is_ranked_chunk_by_chunk(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    corpus = rng.normal(size=(1000, 8)).astype(np.float32)
    stored = np.lib.format.open_memmap(tmp_path / "c.npy", "w+", np.float32, corpus.shape)
    stored[:] = corpus
    stored.flush()
    mapped = np.load(tmp_path / "c.npy", mmap_mode="r")
    queries = rng.normal(size=(5, 8)).astype(np.float32)
    ids = [f"d{i}" for i in range(1000)]
    expected = rank_corpus(queries, corpus, ids, 10)
    assert rank_corpus(queries, mapped, ids, 10, corpus_chunk_size=128).tolist() == (
        expected.tolist()
    )


def _ids_of(ranked: np.ndarray, ids: list[str]) -> list[list[str]]:
    return [[ids[j] for j in row] for row in ranked]


@settings(max_examples=80, deadline=None)
@given(
    n_distinct=st.integers(1, 30),
    n_copies=st.integers(1, 30),
    dim=st.integers(2, 48),
    n_queries=st.integers(1, 12),
    top_k=st.integers(1, 70),
    corpus_chunk=st.integers(1, 40),
    query_chunk=st.integers(1, 12),
    single=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_duplicate_documents_rank_by_id_whatever_the_row_order_and_chunk_sizes(
    n_distinct: int,
    n_copies: int,
    dim: int,
    n_queries: int,
    top_k: int,
    corpus_chunk: int,
    query_chunk: int,
    single: bool,
    seed: int,
) -> None:
    # Continuous vectors, whose dot products round: BLAS rounded one vector's copies differently
    # at different rows of a product (1.5e-8 apart in float32), so the copies ranked by position.
    # Distinct Gaussian vectors in float64 do not tie within a rounding error (spacing ~1e-16).
    rng = np.random.default_rng(seed)
    dtype = np.float32 if single else np.float64
    distinct = rng.standard_normal((n_distinct, dim)).astype(dtype)
    corpus = np.vstack([distinct, distinct[rng.integers(0, n_distinct, n_copies)]])
    if single:  # float32: only copies of one vector, so no distinct near-tie can swap
        corpus = np.vstack([distinct[:1]] * (n_copies + 1))
    n = len(corpus)
    ids = [str(i) for i in rng.permutation(n * 3)[:n]]
    queries = rng.standard_normal((n_queries, dim)).astype(dtype)
    one_pass = _ids_of(rank_corpus(queries, corpus, ids, top_k), ids)
    perm = rng.permutation(n)
    shuffled_ids = [ids[i] for i in perm]
    streamed = rank_corpus(
        queries,
        corpus[perm],
        shuffled_ids,
        top_k,
        chunk_size=query_chunk,
        corpus_chunk_size=corpus_chunk,
    )
    assert _ids_of(streamed, shuffled_ids) == one_pass
    # the scores too: one relevant copy and one judged-irrelevant copy per query
    qids = [f"q{i}" for i in range(n_queries)]
    qrels = {q: {ids[int(rng.integers(0, n))]: 1} for q in qids}
    base = score_retrieval(queries, corpus, qids, ids, qrels, k_values=(1, 3, 10), decimals=None)
    again = score_retrieval(
        queries,
        corpus[perm],
        qids,
        shuffled_ids,
        qrels,
        k_values=(1, 3, 10),
        decimals=None,
        chunk_size=query_chunk,
    )
    assert again == base


def test_two_copies_of_a_document_score_by_id_not_by_row() -> None:
    # The case: queries near a relevant document "a" and its copy "b", which rank first
    # and second. "b" > "a" as strings, so "b" ranks first and nDCG@10 is 1/log2(3) = 0.63093
    # in either row order; before, one order gave 0.69244 (some queries 1.0, copies by row).
    rng = np.random.default_rng(0)
    corpus = rng.standard_normal((23, 61)).astype(np.float32)
    queries = (corpus[20] + 0.5 * rng.standard_normal((6, 61))).astype(np.float32)
    corpus[2] = corpus[20]
    ids = [f"x{i}" for i in range(23)]
    ids[2], ids[20] = "a", "b"
    qrels = {f"q{i}": {"a": 1} for i in range(6)}
    for perm in (np.arange(23), np.arange(23)[::-1]):
        r = score_retrieval(queries, corpus[perm], list(qrels), [ids[i] for i in perm], qrels)
        assert r["ndcg_at_10"] == round(1 / math.log2(3), 5)


def test_duplicate_detection_survives_a_hash_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    from chemteb_eval.scoring import retrieval

    # Every row hashes alike: only the byte-for-byte check may group rows.
    monkeypatch.setattr(retrieval, "hash", lambda _: 0, raising=False)
    corpus = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.6, 0.8]])
    id_rank = np.array([3, 0, 1, 2])
    group_of, rep_rows = retrieval._duplicate_groups(corpus, id_rank, 2)
    assert group_of.tolist() == [0, -1, 0, -1]
    assert corpus[rep_rows].tolist() == [[1.0, 0.0]]


def test_ids_differing_by_a_trailing_nul_keep_the_string_order() -> None:
    # numpy's str arrays drop trailing NULs ("a" == "a\x00" there), which fell back to row order.
    corpus = np.ones((2, 2), dtype=np.float32)
    for ids in (["a", "a\x00"], ["a\x00", "a"]):
        ranked = rank_corpus(_unit([0]), corpus, ids, 2)
        assert [ids[j] for j in ranked[0]] == ["a\x00", "a"]


def test_attack50_a_mapped_corpus_through_score_retrieval_is_read_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """score_retrieval hands rank_corpus a plain view of a memory-mapped corpus (its checks
    call np.asarray): normalising an "in-memory" corpus whole then read all of it into memory
    (an outside attack: 638 MB peak for a 586 MB corpus). rank_corpus now reads each corpus
    chunk once, whatever the array: its peak stays far below the corpus."""
    import tracemalloc

    from chemteb_eval.scoring import retrieval

    rng = np.random.default_rng(5)
    n, dim = 100_000, 128
    stored = np.lib.format.open_memmap(tmp_path / "c.npy", "w+", np.float32, (n, dim))
    stored[:] = rng.normal(size=(n, dim))
    stored.flush()
    del stored
    mapped = np.load(tmp_path / "c.npy", mmap_mode="r")
    queries = rng.normal(size=(8, dim)).astype(np.float32)
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(8)}
    ids = [f"d{i}" for i in range(n)]
    defaults = retrieval.rank_corpus.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "corpus_chunk_size", 10_000)
    peaks: list[int] = []
    rank = retrieval.rank_corpus

    def measured(*args: Any, **kwargs: Any) -> Any:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        out = rank(*args, **kwargs)
        peaks.append(tracemalloc.get_traced_memory()[1] - start)
        return out

    monkeypatch.setattr(retrieval, "rank_corpus", measured)
    tracemalloc.start()
    try:
        found = score_retrieval(queries, mapped, [f"q{i}" for i in range(8)], ids, qrels)
    finally:
        tracemalloc.stop()
    assert 0 <= found["main_score"] <= 1
    assert peaks and peaks[0] < n * dim * 4 // 2, peaks  # 51 MB corpus; whole it took > 100


def test_attack50_a_fortran_ordered_corpus_ranks_as_its_c_ordered_copy(tmp_path: Path) -> None:
    """Another memory layout ran other products (other roundings), so near-ties ranked
    differently for a Fortran-ordered corpus than for the same values in C order."""
    rng = np.random.default_rng(11)
    base = rng.normal(size=(1, 16)).astype(np.float32)
    corpus = np.repeat(base, 600, axis=0) + rng.normal(size=(600, 16)).astype(np.float32) * 1e-6
    queries = rng.normal(size=(7, 16)).astype(np.float32)
    ids = [f"d{i}" for i in range(600)]
    want = rank_corpus(queries, np.ascontiguousarray(corpus), ids, 20, corpus_chunk_size=97)
    fortran = np.asfortranarray(corpus)
    assert rank_corpus(queries, fortran, ids, 20, corpus_chunk_size=97).tolist() == want.tolist()
    np.save(tmp_path / "f.npy", fortran)
    mapped = np.load(tmp_path / "f.npy", mmap_mode="r")
    assert rank_corpus(queries, mapped, ids, 20, corpus_chunk_size=97).tolist() == want.tolist()
    assert rank_corpus(np.asfortranarray(queries), corpus, ids, 20).tolist() == (
        rank_corpus(queries, corpus, ids, 20).tolist()
    )
