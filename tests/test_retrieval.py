from __future__ import annotations

import math

import numpy as np
import pytest

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
