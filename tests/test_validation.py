"""Bad input gets a ValueError that names the argument, from every scoring function."""

from __future__ import annotations

import numpy as np
import pytest

from chemteb_eval.scoring import (
    score_bitext_mining,
    score_classification,
    score_clustering,
    score_pair_classification,
    score_retrieval,
)


def _emb(n: int, d: int = 4, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, d)).astype(np.float32)


def test_nan_row_is_named() -> None:
    e = _emb(6)
    e[3, 1] = np.nan
    with pytest.raises(
        ValueError, match=r"embeddings1: 1 row\(s\) contain NaN or inf, first at row 3"
    ):
        score_pair_classification(e, _emb(6, seed=1), [0, 1, 0, 1, 0, 1])


def test_inf_row_is_named_in_clustering() -> None:
    e = _emb(6)
    e[5, 0] = np.inf
    with pytest.raises(ValueError, match=r"embeddings: .*row 5"):
        score_clustering(e, [0, 0, 0, 1, 1, 1])


def test_length_mismatch() -> None:
    with pytest.raises(ValueError, match=r"length mismatch: embeddings1 has 6, embeddings2 has 5"):
        score_pair_classification(_emb(6), _emb(5), [0, 1, 0, 1, 0, 1])


def test_not_2d() -> None:
    with pytest.raises(ValueError, match=r"embeddings: must be 2-D"):
        score_clustering(np.zeros(5), [0, 1, 0, 1, 0])


def test_dimension_mismatch() -> None:
    with pytest.raises(ValueError, match=r"test_embeddings: has dimension 3, expected 4"):
        score_classification(_emb(4), [0, 1, 0, 1], _emb(2, d=3), [0, 1])


def test_zero_vector_under_cosine() -> None:
    e = _emb(4)
    e[2] = 0
    with pytest.raises(
        ValueError, match=r"target_embeddings: 1 row\(s\) are all zeros \(first at row 2\)"
    ):
        score_bitext_mining(_emb(4, seed=1), e)


def test_one_class() -> None:
    with pytest.raises(ValueError, match=r"labels: both classes"):
        score_pair_classification(_emb(3), _emb(3, seed=1), [1, 1, 1])
    with pytest.raises(ValueError, match=r"train_labels: the probe needs at least two classes"):
        score_classification(_emb(3), ["a", "a", "a"], _emb(2), ["a", "a"])
    with pytest.raises(ValueError, match=r"labels: clustering needs at least two distinct labels"):
        score_clustering(_emb(3), [7, 7, 7])


def test_pair_labels_must_be_binary() -> None:
    with pytest.raises(ValueError, match=r"labels: must be 0 or 1"):
        score_pair_classification(_emb(3), _emb(3, seed=1), [0, 1, 2])


def test_more_clusters_than_samples() -> None:
    with pytest.raises(ValueError, match=r"n_clusters: 5 clusters cannot be formed from 4 samples"):
        score_clustering(_emb(4), [0, 1, 0, 1], n_clusters=5)


def test_gold_out_of_range() -> None:
    with pytest.raises(
        ValueError, match=r"references: gold index 9 at row 1 is out of range for 3 targets"
    ):
        score_bitext_mining(_emb(3), _emb(3, seed=1), [0, 9, 2])


def test_unaligned_bitext_without_gold() -> None:
    with pytest.raises(ValueError, match=r"references: without gold indices"):
        score_bitext_mining(_emb(3), _emb(4, seed=1))


def test_unknown_query_in_qrels() -> None:
    with pytest.raises(
        ValueError, match=r"qrels: 1 query id\(s\) are not in query_ids, e.g. \['q9'\]"
    ):
        score_retrieval(
            _emb(1), _emb(3, seed=1), ["q1"], ["a", "b", "c"], {"q1": {"a": 1}, "q9": {"b": 1}}
        )


def test_bad_grade_and_duplicate_ids() -> None:
    with pytest.raises(ValueError, match=r"qrels: grade of query 'q1', document 'a' is 0.5"):
        score_retrieval(_emb(1), _emb(3, seed=1), ["q1"], ["a", "b", "c"], {"q1": {"a": 0.5}})
    with pytest.raises(ValueError, match=r"corpus_ids: ids must be unique; 'a'"):
        score_retrieval(_emb(1), _emb(3, seed=1), ["q1"], ["a", "b", "a"], {"q1": {"a": 1}})


def test_no_relevant_documents_at_all() -> None:
    with pytest.raises(ValueError, match=r"qrels: no query has a relevant document"):
        score_retrieval(_emb(1), _emb(3, seed=1), ["q1"], ["a", "b", "c"], {"q1": {"a": 0}})


def test_empty_and_ragged_inputs() -> None:
    with pytest.raises(ValueError, match=r"embeddings: is empty"):
        score_clustering(np.zeros((0, 4)), [])
    with pytest.raises(ValueError, match=r"source_embeddings: (must be numeric|cannot be read)"):
        score_bitext_mining([[1.0, 2.0], [3.0]], _emb(2, d=2))
    with pytest.raises(ValueError, match=r"labels: labels must be all ints or all strings"):
        score_clustering(_emb(3), np.array([1, "a", 2.5], dtype=object))
    with pytest.raises(
        ValueError, match=r"labels: labels must be all ints or all strings, got a mix"
    ):
        score_clustering(_emb(3), [1, "a", 2])


def test_label_kinds_must_agree() -> None:
    with pytest.raises(ValueError, match=r"test_labels: must be the same kind as train_labels"):
        score_classification(_emb(4), [0, 1, 0, 1], _emb(2), ["0", "1"])


def test_mixed_precision_is_scored_in_float64() -> None:
    a64 = np.random.default_rng(5).standard_normal((30, 6))
    b64 = np.random.default_rng(6).standard_normal((30, 6))
    labels = [0, 1, 1] * 10
    mixed = score_pair_classification(a64.astype(np.float32), b64, labels)
    both = score_pair_classification(a64.astype(np.float32).astype(np.float64), b64, labels)
    assert mixed == both
    assert score_bitext_mining(a64.astype(np.float32), b64) == score_bitext_mining(
        a64.astype(np.float32).astype(np.float64), b64
    )
