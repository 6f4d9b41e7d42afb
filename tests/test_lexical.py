"""BM25 in a run and hybrid retrieval (issue 47): ``chemteb run -m bm25s`` into MTEB's layout,
equal to MTEB's BM25 model on the very files the run scored; ``--hybrid bm25s`` fused from the
cached vectors into an experiment folder MTEB reads; the arguments that mean nothing for BM25
refused in one line. About 40 s (the small PipChem build, a hashing encoder)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any, cast

import pytest

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.results.io import experiment_name
from chemteb_eval.runner import run
from chemteb_eval.runner.lexical import is_lexical
from chemteb_eval.scoring.compression import Compression
from chemteb_eval.scoring.ranked import (
    dense_ranking,
    order_results,
    reciprocal_rank_fusion,
    score_ranked_retrieval,
)

from .helpers.hashing_encoder import HashingEncoder

pytest.importorskip("bm25s")
HYBRID = "fusion_rrf__hybrid_bm25s__rrf_k_60"
BM25_FOLDER = ("mteb__baseline-bm25s", "0_3_0")


def _quiet(**options: Any) -> dict[str, Any]:
    return {"progress": False, "log": lambda m: None, **options}


def _retrieval_data() -> Any:
    from chemteb_eval.data import load_task
    from chemteb_eval.tasks import get_task

    return load_task(get_task("PipChemWikiRetrieval"))["default"]["test"]


# -- fast: names and values -------------------------------------------------------------------


def test_bm25_names_and_the_hybrid_variants_folder() -> None:
    assert all(is_lexical(n) for n in ("bm25s", "BM25", " mteb/baseline-bm25s"))
    assert not is_lexical("sentence-transformers/all-MiniLM-L6-v2") and not is_lexical(None)
    hybrid = Compression(hybrid="bm25s")
    assert not hybrid.plain and hybrid.full_vectors
    assert hybrid.kwargs() == {"hybrid": "bm25s", "fusion": "rrf", "rrf_k": 60}
    assert experiment_name(hybrid.kwargs()) == HYBRID
    with pytest.raises(ValueError, match="hybrid"):
        Compression(dim=16, hybrid="bm25s")


def test_fusion_of_a_ranked_list_and_a_search_output_by_hand() -> None:
    dense = {"q": ["b", "a"]}  # a ranked list, best first: its order is kept as given
    lexical = {"q": {"a": 2.0, "c": 2.0}}  # a tie: c first (id descending)
    fused = reciprocal_rank_fusion([dense, lexical], k=1)
    assert fused["q"] == pytest.approx({"b": 1 / 2, "a": 1 / 3 + 1 / 3, "c": 1 / 2})
    assert order_results(fused["q"], 3) == ["a", "c", "b"]
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([{"q": ["a", "a"]}])
    with pytest.raises(ValueError, match="list"):
        reciprocal_rank_fusion([{"q": "ab"}])


def test_the_dense_ranking_is_the_one_score_retrieval_ranks() -> None:
    import numpy as np

    from chemteb_eval.scoring import score_retrieval

    rng = np.random.default_rng(0)
    q, c = rng.normal(size=(20, 8)), rng.normal(size=(300, 8))
    c[7] = c[3]  # duplicates tie: id decides
    qids, dids = [f"q{i}" for i in range(20)], [f"d{i}" for i in range(300)]
    qrels = {f"q{i}": {f"d{(7 * i) % 300}": 1, f"d{(3 * i) % 300}": 2} for i in range(20)}
    ranked = dense_ranking(q, c, qids, dids)
    assert all(len(v) == 300 for v in ranked.values())
    # scored as a ranked output, the dense ranking gives score_retrieval's every key
    as_scores = {qid: {d: -r for r, d in enumerate(docs)} for qid, docs in ranked.items()}
    assert score_ranked_retrieval(as_scores, qids, qrels) == score_retrieval(
        q, c, qids, dids, qrels
    )


# -- a run: BM25 ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bm25_run(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[str]]:
    lines: list[str] = []
    out = tmp_path_factory.mktemp("bm25") / "results"
    report = run("bm25s", output_dir=out, progress=False, log=lines.append)
    return report, lines


def test_bm25_runs_the_retrieval_tasks_into_mtebs_layout(bm25_run: tuple[Any, list[str]]) -> None:
    report, lines = bm25_run
    assert report.results_dir.parts[-2:] == BM25_FOLDER
    assert report.statuses == {"PipChemWikiRetrieval": "done"}
    assert lines[0].startswith("BM25 scores retrieval only: 6 task(s) skipped (")
    meta = json.loads((report.results_dir / "model_meta.json").read_text())
    assert (meta["name"], meta["revision"]) == ("mteb/baseline-bm25s", "0_3_0")
    stored = json.loads((report.results_dir / "PipChemWikiRetrieval.json").read_text())
    assert stored["storage"]["index"] == "bm25s" and stored["storage"]["index_bytes"] > 0
    assert {"bm25s", "PyStemmer", "numpy"} <= set(stored["software"])
    assert (report.results_dir / "PipChemWikiRetrieval.items.npz").is_file()
    record = json.loads((report.results_dir / "runs.jsonl").read_text().splitlines()[-1])
    assert record["settings"]["k1"] == 1.5 and record["encoding"]["encoded"] > 0


def test_bm25s_run_equals_mtebs_bm25_model_on_the_same_files(
    bm25_run: tuple[Any, list[str]],
) -> None:
    """Every score key of the file the run wrote equals MTEB's BM25Search on the same corpus
    and queries, scored by MTEB's own evaluator, within 1e-6."""
    pytest.importorskip("mteb")
    from datasets import Dataset
    from mteb._evaluators.retrieval_metrics import calculate_retrieval_scores
    from mteb.models.model_implementations.bm25 import BM25Search

    report, _ = bm25_run
    data = _retrieval_data()
    search, kwargs = BM25Search(), cast(Any, {})
    meta = type("Meta", (), {"eval_langs": ["eng-Latn"]})()
    pairs = zip(data.corpus_ids, data.corpus_texts, strict=True)
    docs = [{"id": i, "title": "", "text": t} for i, t in pairs]
    search.index(
        docs, task_metadata=meta, hf_split="test", hf_subset="default", encode_kwargs=kwargs
    )
    theirs = search.search(
        Dataset.from_dict({"id": data.query_ids, "text": data.query_texts}),
        task_metadata=meta,
        hf_split="test",
        hf_subset="default",
        top_k=1000,
        encode_kwargs=kwargs,
    )
    k_values = [1, 3, 5, 10, 20, 100, 1000]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = calculate_retrieval_scores(theirs, dict(data.qrels), k_values)
    stored = json.loads((report.results_dir / "PipChemWikiRetrieval.json").read_text())
    got = stored["scores"]["test"][0]
    keys = [(f"ndcg_at_{k}", want.ndcg[f"NDCG@{k}"]) for k in k_values]
    keys += [(f"map_at_{k}", want.map[f"MAP@{k}"]) for k in k_values]
    keys += [(f"recall_at_{k}", want.recall[f"Recall@{k}"]) for k in k_values]
    keys += [(f"precision_at_{k}", want.precision[f"P@{k}"]) for k in k_values]
    keys += [(f"mrr_at_{k}", want.mrr[f"MRR@{k}"]) for k in k_values]
    assert max(abs(got[key] - value) for key, value in keys) <= 1e-6


def test_mtebs_result_cache_reads_the_bm25_folder(bm25_run: tuple[Any, list[str]]) -> None:
    mteb = pytest.importorskip("mteb")
    report, _ = bm25_run
    root = report.results_dir.parent.parent.parent
    loaded = mteb.ResultCache(root).load_results(include_remote=False)
    (one,) = loaded.model_results
    assert (one.model_name, one.model_revision) == ("mteb/baseline-bm25s", "0_3_0")
    assert [r.task_name for r in one.task_results] == ["PipChemWikiRetrieval"]


def test_a_bm25_rerun_skips_what_it_has(bm25_run: tuple[Any, list[str]]) -> None:
    report, _ = bm25_run
    again = run("bm25s", output_dir=report.results_dir.parent.parent, **_quiet())
    assert again.statuses == {"PipChemWikiRetrieval": "skipped"}
    assert again.main_scores == report.main_scores


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-t", "PipChemWikiTopicClassification"], "BM25 scores retrieval tasks only"),
        (["--dims", "16"], "BM25 has no vectors"),
        (["--dtype", "bfloat16"], "BM25 has no vectors"),
        (["--hybrid", "bm25s"], "--hybrid"),
    ],
)
def test_what_bm25_cannot_do_is_one_line(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = chemteb_main(["run", "-m", "bm25s", "--output-dir", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_without_the_lexical_extra_bm25_and_hybrid_say_which_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "bm25s", None)
    monkeypatch.setattr(
        "importlib.util.find_spec", lambda name, *a: None if name == "bm25s" else object()
    )
    for args in (["-m", "bm25s"], ["--hybrid", "bm25s"]):
        code = chemteb_main(["run", *args, "--output-dir", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert code != 0 and "chemteb-eval[lexical]" in err and "Traceback" not in err, err


# -- a run: the hybrid ------------------------------------------------------------------------


def test_the_hybrid_is_fused_from_the_cached_vectors_into_an_experiment_folder(
    small_suite: Path, tmp_path: Path
) -> None:
    mteb = pytest.importorskip("mteb")
    from chemteb_eval.models.bm25 import bm25_search

    encoder = HashingEncoder()
    out, cache = tmp_path / "results", tmp_path / "emb"
    plain = run(encoder, output_dir=out, cache_dir=cache, **_quiet())
    calls = encoder.calls
    report = run(encoder, output_dir=out, cache_dir=cache, hybrid="bm25s", **_quiet())
    assert encoder.calls == calls  # no model call: fused from the cached vectors
    its = report.variants[HYBRID]
    assert its.results_dir == plain.results_dir / "experiments" / HYBRID
    assert its.statuses == {"PipChemWikiRetrieval": "done"}  # retrieval only
    # the stored score is the fusion of the two rankings, computed here from the parts
    data = _retrieval_data()
    q = encoder.encode(data.query_texts, prompt="query: ", batch_size=32)
    c = encoder.encode(data.corpus_texts, prompt="", batch_size=32)
    dense = dense_ranking(q, c, data.query_ids, data.corpus_ids)
    lexical = bm25_search(data.query_texts, data.query_ids, data.corpus_texts, data.corpus_ids)
    fused = reciprocal_rank_fusion([dense, lexical])
    want = score_ranked_retrieval(fused, data.query_ids, data.qrels)["ndcg_at_10"]
    stored = json.loads((its.results_dir / "PipChemWikiRetrieval.json").read_text())
    assert stored["scores"]["test"][0]["main_score"] == want
    storage = stored["storage"]
    assert (
        storage["index_bytes"]
        == storage["vectors"] * 4 * c.shape[1] + storage["lexical_index_bytes"]
    )
    assert (its.results_dir / "PipChemWikiRetrieval.items.npz").is_file()
    # MTEB reads it as an experiment of the model, by name
    loaded = mteb.ResultCache(tmp_path).load_results(
        include_remote=False, load_experiments="match_name"
    )
    assert len(loaded.model_results) == 2
    # a rerun finds it current: nothing loaded, nothing pending for the other types
    again = run(encoder, output_dir=out, cache_dir=cache, hybrid="bm25s", **_quiet())
    assert again.variants[HYBRID].statuses == {"PipChemWikiRetrieval": "skipped"}
    assert set(again.statuses.values()) == {"skipped"}
