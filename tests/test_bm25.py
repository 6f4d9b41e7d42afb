"""BM25 as MTEB 2.26's ``mteb/baseline-bm25s`` computes it, and retrieval scored from a search
model's ranking as MTEB scores it (issue 47): differential tests against MTEB's own code."""

from __future__ import annotations

import random
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from chemteb_eval.scoring.ranked import order_results, score_ranked_retrieval

K_VALUES = [1, 3, 5, 10, 20, 100, 1000]


def _mteb_scores(results: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> Any:
    pytest.importorskip("mteb")
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calculate_retrieval_scores(results, qrels, K_VALUES)


def _equal(got: dict[str, Any], want: Any) -> None:
    for k in K_VALUES:
        assert got[f"ndcg_at_{k}"] == want.ndcg[f"NDCG@{k}"], k
        assert got[f"map_at_{k}"] == want.map[f"MAP@{k}"], k
        assert got[f"recall_at_{k}"] == want.recall[f"Recall@{k}"], k
        assert got[f"precision_at_{k}"] == want.precision[f"P@{k}"], k
        assert got[f"mrr_at_{k}"] == want.mrr[f"MRR@{k}"], k


@pytest.mark.parametrize("seed", range(3))
def test_a_ranking_is_scored_as_mteb_scores_a_search_models_output(seed: int) -> None:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(300)]
    qids = [f"q{i}" for i in range(30)]
    results = {  # scores from a small set: many ties, decided by id as trec_eval does
        q: {docs[j]: float(rng.integers(0, 6)) for j in rng.choice(300, 120, replace=False)}
        for q in qids
    }
    qrels = {
        q: {docs[j]: int(rng.integers(0, 3)) for j in rng.choice(300, 8, replace=False)}
        for q in qids
    }
    qrels = {q: d for q, d in qrels.items() if any(g > 0 for g in d.values())}
    got = score_ranked_retrieval(results, qids, qrels, k_values=K_VALUES)
    _equal(got, _mteb_scores(results, qrels))


def test_ties_are_ranked_by_id_descending() -> None:
    assert order_results({"a": 1.0, "b": 1.0, "c": 2.0, "aa": 1.0}, 10) == ["c", "b", "aa", "a"]


_WORDS = (
    "benzene acid methyl ethyl chloride sodium water carbon oxygen ring bond atom ion the of "
    "a is are was reaction yield solvent ethanol acetone catalyst aspirin caffeine CC(=O)O "
    "C1=CC=CC=C1 H2O NaCl 50-00-0 7732-18-5 naïve café éthanol"
).split()


def _corpus(seed: int, n_docs: int, n_queries: int) -> tuple[list[dict[str, str]], list[str]]:
    pick = random.Random(seed)
    docs = [
        {
            "id": f"doc{i}",
            "title": pick.choice(["", "Benzene", "Aspirin (drug)"]),
            "text": " ".join(pick.choice(_WORDS) for _ in range(pick.randint(0, 30))),
        }
        for i in range(n_docs)
    ]
    docs[3]["text"] = "benzene " * 50  # one repeated token
    queries = [
        " ".join(pick.choice(_WORDS) for _ in range(pick.randint(1, 6))) for _ in range(n_queries)
    ]
    queries[0] = "the of a is"  # stopwords only
    return docs, queries


def _mteb_bm25(docs: list[dict[str, str]], queries: list[str], qids: list[str]) -> Any:
    pytest.importorskip("mteb")
    pytest.importorskip("bm25s")
    from datasets import Dataset
    from mteb.models.model_implementations.bm25 import BM25Search

    meta: Any = SimpleNamespace(eval_langs=["eng-Latn"])
    kwargs: Any = {}
    search = BM25Search()
    search.index(
        docs, task_metadata=meta, hf_split="test", hf_subset="default", encode_kwargs=kwargs
    )
    return search.search(
        Dataset.from_dict({"id": qids, "text": queries}),
        task_metadata=meta,
        hf_split="test",
        hf_subset="default",
        top_k=max(K_VALUES),
        encode_kwargs=kwargs,
    )


@pytest.mark.parametrize("seed", range(3))
def test_bm25_equals_mtebs_baseline_bm25s(seed: int) -> None:
    """Every score key equals MTEB's BM25 model on the same files: non-ASCII names, SMILES, CAS
    numbers, empty documents, one repeated token, a query of stopwords only, ties."""
    pytest.importorskip("bm25s")
    from chemteb_eval.models.bm25 import bm25_search

    docs, queries = _corpus(seed, 400, 40)
    qids = [f"q{i}" for i in range(len(queries))]
    theirs = _mteb_bm25(docs, queries, qids)
    texts = ["\n".join([d["title"], d["text"]]) for d in docs]
    ours = bm25_search(queries, qids, texts, [d["id"] for d in docs])
    assert ours.keys() == theirs.keys()
    for q in qids:
        assert ours[q].keys() == theirs[q].keys(), q
        assert max(abs(ours[q][d] - theirs[q][d]) for d in ours[q]) <= 1e-6
    pick = random.Random(seed)
    qrels = {q: {f"doc{pick.randrange(400)}": 1 for _ in range(3)} for q in qids}
    got = score_ranked_retrieval(ours, qids, qrels, k_values=K_VALUES)
    _equal(got, _mteb_scores(theirs, qrels))


def test_bm25_without_its_extra_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.models.bm25 import BM25Index

    monkeypatch.setitem(sys.modules, "bm25s", None)  # as if not installed
    with pytest.raises(ChemtebError, match="lexical") as err:
        BM25Index(["a document"])
    assert len(str(err.value).splitlines()) == 1


def test_reciprocal_rank_fusion_by_hand() -> None:
    from chemteb_eval.scoring.ranked import reciprocal_rank_fusion

    dense = {"q": {"a": 0.9, "b": 0.8, "c": 0.1}}
    lexical = {"q": {"c": 12.0, "a": 3.0, "d": 3.0}}  # a and d tie: d ranks first (id desc)
    fused = reciprocal_rank_fusion([dense, lexical])
    assert fused["q"] == pytest.approx(
        {"a": 1 / 61 + 1 / 63, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}
    )
    assert order_results(fused["q"], 10) == ["c", "a", "d", "b"]  # a, c tie: c (id desc)
    only = reciprocal_rank_fusion([dense, lexical], depth=1)  # each list's first only
    assert only["q"] == pytest.approx({"a": 1 / 61, "c": 1 / 61})
    with pytest.raises(ValueError, match="depth"):
        reciprocal_rank_fusion([dense], depth=0)
    with pytest.raises(ValueError, match="no number"):
        reciprocal_rank_fusion([{"q": {"a": float("nan")}}])
