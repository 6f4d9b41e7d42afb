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


def _by_id_at_the_cut(found: dict[str, float], corpus_ids: list[str]) -> list[str]:
    """A brute force of the hybrid's BM25 list: the documents bm25s scored above 0 by score,
    then every document scored 0 (no word in common), ties by id descending, the first 1,000."""
    positive = order_results({d: s for d, s in found.items() if s > 0}, len(found))
    zeros = sorted((d for d in corpus_ids if found.get(d, 0.0) <= 0), reverse=True)
    return (positive + zeros)[:1000]


# -- a run: the hybrid, and where people look ------------------------------------------------


@pytest.fixture(scope="module")
def board_root(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A hashing model, its hybrid and BM25 in one results folder (the small PipChem)."""
    root = tmp_path_factory.mktemp("board")
    out, cache = root / "results", root / "emb"
    encoder = HashingEncoder()
    plain = run(encoder, output_dir=out, cache_dir=cache, **_quiet())
    calls = encoder.calls
    hybrid = run(encoder, output_dir=out, cache_dir=cache, hybrid="bm25s", **_quiet())
    bm25 = run("bm25s", output_dir=out, **_quiet())
    return {
        "root": root,
        "out": out,
        "cache": cache,
        "encoder": encoder,
        "calls": calls,
        "plain": plain,
        "hybrid": hybrid,
        "bm25": bm25,
    }


def test_the_hybrid_is_fused_from_the_cached_vectors_into_an_experiment_folder(
    board_root: dict[str, Any],
) -> None:
    mteb = pytest.importorskip("mteb")
    from chemteb_eval.models.bm25 import bm25_search

    encoder, report = board_root["encoder"], board_root["hybrid"]
    assert board_root["calls"] == encoder.calls  # no model call: fused from the cached vectors
    its = report.variants[HYBRID]
    assert its.results_dir == board_root["plain"].results_dir / "experiments" / HYBRID
    assert its.statuses == {"PipChemWikiRetrieval": "done"}  # retrieval only
    # the stored score is the fusion of the two rankings, computed here from the parts
    data = _retrieval_data()
    q = encoder.encode(data.query_texts, prompt="query: ", batch_size=32)
    c = encoder.encode(data.corpus_texts, prompt="", batch_size=32)
    dense = dense_ranking(q, c, data.query_ids, data.corpus_ids)
    found = bm25_search(data.query_texts, data.query_ids, data.corpus_texts, data.corpus_ids)
    lexical = {q: _by_id_at_the_cut(found[q], data.corpus_ids) for q in data.query_ids}
    fused = reciprocal_rank_fusion([dense, lexical])
    want = score_ranked_retrieval(fused, data.query_ids, data.qrels)["ndcg_at_10"]
    stored = json.loads((its.results_dir / "PipChemWikiRetrieval.json").read_text())
    assert stored["scores"]["test"][0]["main_score"] == want
    storage = stored["storage"]
    vectors = storage["vectors"] * 4 * c.shape[1]
    assert storage["index_bytes"] == vectors + storage["lexical_index_bytes"]
    assert (its.results_dir / "PipChemWikiRetrieval.items.npz").is_file()
    # MTEB reads it as an experiment of the model, by name (and BM25 as its own model)
    loaded = mteb.ResultCache(board_root["root"]).load_results(
        include_remote=False, load_experiments="match_name"
    )
    assert len(loaded.model_results) == 3
    # a rerun finds it current: nothing pending for the types a hybrid never scores
    out, cache = board_root["out"], board_root["cache"]
    again = run(encoder, output_dir=out, cache_dir=cache, hybrid="bm25s", **_quiet())
    assert again.variants[HYBRID].statuses == {"PipChemWikiRetrieval": "skipped"}
    assert set(again.statuses.values()) == {"skipped"}


def test_rank_badges_bm25_and_says_each_verdict(
    board_root: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from chemteb_eval.results.compare import load_models, paired_task_interval
    from chemteb_eval.tasks import get_task

    out = board_root["out"]
    assert chemteb_main(["rank", str(out)]) == 0
    text = capsys.readouterr().out
    (bm25_line,) = [line for line in text.splitlines() if line.strip().startswith("- mteb/")]
    assert bm25_line.endswith("[BM25 reference]")
    assert "Versus BM25 (mteb/baseline-bm25s)" in text
    assert chemteb_main(["rank", str(out), "--json"]) == 0
    rows = {r["model"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["mteb/baseline-bm25s"]["reference"] == "BM25 reference"
    dense = rows["test/hashing-trigrams"]
    (verdict,) = dense["versus_bm25"]
    assert verdict["verdict"] in ("better", "worse", "can't tell")
    assert verdict["score"] - verdict["other"] == pytest.approx(verdict["difference"], abs=1e-4)
    # the interval is compare's: the same paired bootstrap over the same queries
    model_dir = board_root["plain"].results_dir.parent
    models, bench = load_models([model_dir, board_root["bm25"].results_dir.parent], "PipChem")
    task = get_task("PipChemWikiRetrieval")
    paired, _ = paired_task_interval(task, bench, models[0], models[1], 1000, 0)
    assert paired is not None
    assert (verdict["low"], verdict["high"]) == (paired.low, paired.high)
    hybrid = next(r for n, r in rows.items() if "hybrid=bm25s" in n)
    assert [v["against"] for v in hybrid["versus_bm25"]] == [
        "mteb/baseline-bm25s",
        "test/hashing-trigrams",
    ]


def test_rank_frontier_places_bm25_and_the_hybrid_on_the_retrieval_part(
    board_root: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = board_root["out"]
    assert chemteb_main(["rank", str(out), "--frontier", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    part = {r["model"]: r for r in rows if r["benchmark"] == "PipChem (retrieval)"}
    assert len(part) == 3 and all(r["score"] is not None for r in part.values())
    bm25 = part["mteb/baseline-bm25s"]
    assert bm25["bytes_per_vector"] is None and bm25["precision"] is None
    assert bm25["index_bytes"] > 0 and bm25["texts_per_second"] > 0
    assert chemteb_main(["rank", str(out), "--frontier"]) == 0
    assert (
        "PipChem (retrieval): quality (mean main score over its 1 task;" in capsys.readouterr().out
    )


def test_the_space_shows_the_verdicts_and_never_hides_bm25(board_root: dict[str, Any]) -> None:
    import sys

    from tests.conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app
    import tabs
    import views

    state = app.build_state([board_root["out"]])
    board = state.boards["PipChem"]
    assert {r["Reference"] for r in board.overall} == {"BM25 reference", ""}
    assert len(board.versus) == 3 and len(board.lexical_frontier) == 3
    # a search no model matches still keeps the reference row
    kept = tabs.handler(tabs.lexical.TAB)(state, "PipChem", "all", [], [], "no such model")
    assert [row[0] for row in kept[3]["value"]["data"]] == ["mteb/baseline-bm25s"]  # no Hub link
    assert views._model_cell("mteb/baseline-bm25s", True) == "mteb/baseline-bm25s"


def test_a_verdict_reads_its_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    import chemteb_eval.results.lexical as lexical
    from chemteb_eval.results.board import ModelResults
    from chemteb_eval.scoring.uncertainty import PairedResult

    a = ModelResults("a", Path("a"), scores={"T": 0.5})
    b = ModelResults("b", Path("b"), scores={"T": 0.4})
    task = type("T", (), {"name": "T"})()
    for paired, said in (
        (PairedResult(0.1, 0.02, 0.2, 0.01), "better"),
        (PairedResult(-0.1, -0.2, -0.02, 0.01), "worse"),
        (PairedResult(0.1, -0.01, 0.2, 0.2), "can't tell"),
        (None, "no interval"),
    ):
        monkeypatch.setattr(lexical, "paired_task_interval", lambda *a, p=paired: (p, "why"))
        assert lexical._verdict(a, b, task, cast(Any, None), 10, 0).verdict == said


def test_compare_a_dense_model_with_bm25_on_their_one_shared_task(
    board_root: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    dense = board_root["plain"].results_dir.parent
    bm25 = board_root["bm25"].results_dir.parent
    assert chemteb_main(["compare", str(dense), str(bm25)]) == 0
    text = capsys.readouterr().out
    (line,) = [row for row in text.splitlines() if row.startswith("PipChemWikiRetrieval")]
    assert "[" in line and "]" in line  # its paired interval over the queries
    assert "cannot separate two models" in text  # one task: no verdict over tasks


def test_the_hybrid_does_not_move_with_the_corpus_row_order() -> None:
    """BM25 gives most documents 0 for a two-word query: which zeros fill its top 1,000 is
    decided by id (as the dense side's cut), not by row, so a shuffled corpus fuses the same."""
    import random

    import numpy as np

    from chemteb_eval.data.types import RetrievalData
    from chemteb_eval.runner.lexical import score_hybrid_split
    from chemteb_eval.tasks import get_task

    pick = random.Random(0)
    words = [f"w{i}" for i in range(400)]
    ids = [f"d{i:04d}" for i in range(2500)]
    texts = [" ".join(pick.choice(words) for _ in range(6)) for _ in ids]
    qids = [f"q{i}" for i in range(30)]
    queries = [f"{pick.choice(words)} {pick.choice(words)}" for _ in qids]
    qrels = {q: {pick.choice(ids): 1} for q in qids}
    rng = np.random.default_rng(0)
    vectors = {d: rng.normal(size=8) for d in ids}
    query_vectors = rng.normal(size=(30, 8))
    task = get_task("PipChemWikiRetrieval")
    found = []
    for order in (list(range(2500)), pick.sample(range(2500), 2500)):
        data = RetrievalData(
            [ids[i] for i in order], [texts[i] for i in order], qids, queries, qrels
        )
        emb = {"queries": query_vectors, "corpus": np.array([vectors[ids[i]] for i in order])}
        metrics, _ = score_hybrid_split(data, emb, task)
        metrics.pop("items")
        found.append(metrics)
    assert found[0]["recall_at_1000"] == found[1]["recall_at_1000"]
    assert found[0]["ndcg_at_1000"] == pytest.approx(found[1]["ndcg_at_1000"], abs=1e-12)
    assert found[0]["map_at_1000"] == pytest.approx(found[1]["map_at_1000"], abs=1e-12)


def test_a_corpus_without_an_indexable_word_is_one_line() -> None:
    from chemteb_eval.models.bm25 import BM25Index

    with pytest.raises(ValueError, match="no document has a word BM25 indexes"):
        BM25Index(["the of a", "C O N", "H + 2"])


def test_two_bm25_rows_are_each_a_reference_and_a_claim_is_not_one(
    board_root: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    out = board_root["out"]
    second = tmp_path / "second"
    shutil.copytree(out / "mteb__baseline-bm25s", second / "mteb__baseline-bm25s")
    # a folder elsewhere whose model_meta.json only says it is BM25, with better scores
    fake = second / "aaa__fake" / "0_3_0"
    shutil.copytree(out / "mteb__baseline-bm25s" / "0_3_0", fake)
    stored = json.loads((fake / "PipChemWikiRetrieval.json").read_text())
    stored["scores"]["test"][0]["main_score"] = stored["scores"]["test"][0]["ndcg_at_10"] = 0.99
    (fake / "PipChemWikiRetrieval.json").write_text(json.dumps(stored))
    assert chemteb_main(["rank", str(out), str(second)]) == 0
    text = capsys.readouterr().out
    badged = [line for line in text.splitlines() if line.endswith("[BM25 reference]")]
    assert len(badged) == 2 and not any("aaa__fake" in line for line in badged)
    assert "[note] 2 BM25 rows: each row is compared with each." in text
    lines = text.splitlines()
    hashing = [r for r in lines if r.startswith("  test/hashing-trigrams ") and "hybrid" not in r]
    assert len(hashing) == 2 and all("vs mteb/baseline-bm25s [" in line for line in hashing)
    assert "vs its model" in text  # the hybrid against its own model, once
    assert sum("vs its model" in line for line in text.splitlines()) == 1


def test_the_versus_cell_is_shown_as_a_model_cell_is() -> None:
    import sys

    import pandas as pd

    from tests.conftest import REPO_ROOT

    sys.path.insert(0, str(REPO_ROOT / "space"))
    import views

    evil = "evil/x\x1b[2J\u202e<b>"
    df = pd.DataFrame([{"Task": "T\x1b[2J", "Model": evil, "Versus": evil, "Verdict": "worse"}])
    shown = views.display(df)["metadata"]["display_value"][0]
    assert shown[1] == shown[2] and "\x1b" not in shown[2] and "\u202e" not in shown[2]
    assert "<b>" not in shown[2] and "\x1b" not in shown[0]


def test_a_variant_left_from_other_vectors_is_left_out_and_said(
    small_suite: Path, tmp_path: Path
) -> None:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.tasks import get_benchmark, get_task

    task = [get_task("PipChemWikiRetrieval")]
    out, cache = tmp_path / "results", tmp_path / "emb"
    run(
        HashingEncoder(dim=64),
        tasks=task,
        output_dir=out,
        cache_dir=cache,
        hybrid="bm25s",
        **_quiet(),
    )
    # the model changes under its name and revision; its folder is rescored, not the hybrid
    run(
        HashingEncoder(dim=8),
        tasks=task,
        output_dir=out,
        cache_dir=cache,
        overwrite=True,
        **_quiet(),
    )
    models = {m.model: m for m in read_results([out], get_benchmark("PipChem"))}
    hybrid = next(m for name, m in models.items() if "hybrid" in name)
    assert "PipChemWikiRetrieval" not in hybrid.scores
    assert any("scored from other vectors" in line for line in hybrid.skipped)
    # the same run of both keeps both
    run(
        HashingEncoder(dim=8),
        tasks=task,
        output_dir=out,
        cache_dir=cache,
        hybrid="bm25s",
        overwrite=True,
        **_quiet(),
    )
    models = {m.model: m for m in read_results([out], get_benchmark("PipChem"))}
    hybrid = next(m for name, m in models.items() if "hybrid" in name)
    assert "PipChemWikiRetrieval" in hybrid.scores and not hybrid.skipped
