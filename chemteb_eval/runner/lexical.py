"""BM25 in a run (issue 47): ``chemteb run -m bm25s`` scores the plan's retrieval tasks with
MTEB 2.26's ``mteb/baseline-bm25s`` into MTEB's layout under that name and revision, and a
dense model's run with ``--hybrid bm25s`` also scores each retrieval task as the reciprocal-rank
fusion of its ranking and BM25's, from the vectors it already has.

BM25 has no vectors: it skips the encode stage and the embedding cache, and scores each split
from its texts (the same texts the dense model embeds, without its prompts: MTEB's BM25 reads
none). The rest is the run's: the plan, the pending check, the data, the result files with
per-query evidence, ``runs.jsonl``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from chemteb_eval import __version__
from chemteb_eval._env import installed_versions
from chemteb_eval.data.types import RetrievalData, TaskData
from chemteb_eval.errors import require_extras
from chemteb_eval.models.bm25 import BM25_NAME, BM25_REVISION, BM25Index
from chemteb_eval.results.model_folder import write_model_meta
from chemteb_eval.results.schema import ResultFile
from chemteb_eval.scoring.ranked import (
    RRF_DEPTH,
    RRF_K,
    dense_ranking,
    ranking_from_scores,
    reciprocal_rank_fusion,
    score_ranked_retrieval,
)
from chemteb_eval.tasks import Benchmark, Task
from chemteb_eval.tasks.kinds import KINDS

from .folders import no_empty_folder_left, writable
from .load import load
from .plan import data_paths_for, hub_out_of_reach, pending, select, settle
from .values import Log, Plan, RunOptions, RunReport, tell
from .write import run_software, write_result, write_run_record

__all__ = [
    "HYBRIDS",
    "LEXICAL_EXTRA",
    "LEXICAL_MODELS",
    "bm25_meta",
    "is_lexical",
    "run_lexical",
    "score_bm25_split",
    "score_hybrid_split",
]

# What ``-m`` accepts for BM25 (case-insensitive), and ``--hybrid``'s choices.
LEXICAL_MODELS = ("bm25s", "bm25", BM25_NAME)
HYBRIDS = ("bm25s",)
LEXICAL_EXTRA = ("lexical", ("bm25s", "Stemmer"), "BM25")
# bm25s's settings in MTEB 2.26's BM25Search (models/bm25.py holds them as its defaults)
_SETTINGS = {
    "backend": "bm25s",
    "method": "lucene",
    "k1": 1.5,
    "b": 0.75,
    "stopwords": "en",
    "stemmer": "english",
    "top_k": RRF_DEPTH,
}


def is_lexical(model: object) -> bool:
    """Whether ``-m`` names BM25 (``bm25s``, ``bm25`` or MTEB's ``mteb/baseline-bm25s``)."""
    return isinstance(model, str) and model.strip().lower() in LEXICAL_MODELS


def bm25_meta() -> dict[str, Any]:
    """``model_meta.json`` of the BM25 folder: MTEB 2.26's record of ``mteb/baseline-bm25s``
    (its name, revision, release date, type, reference), with the one language we run it in
    (English stopwords and stemmer: every registered task is English)."""
    return {
        "name": BM25_NAME,
        "revision": BM25_REVISION,
        "release_date": "2026-05-06",
        "model_type": ["sparse"],
        "languages": ["eng-Latn"],
        "n_parameters": 0,
        "embed_dim": None,
        "max_tokens": None,
        "open_weights": True,
        "license": None,
        "framework": [],
        "similarity_fn_name": None,
        "use_instructions": False,
        "reference": "https://github.com/xhluca/bm25s",
        "public_training_code": "https://github.com/xhluca/bm25s",
        "source": "bm25s",
        "chemteb_eval_version": __version__,
    }


def _no_relevant(task: Task) -> str:
    """A judged query without a relevant document: as the dense rows of the same board score
    it (MTEB 2.26's protocol: 0; the paper's: left out)."""
    return "zero" if task.protocol == "mteb2" else "skip"


def score_bm25_split(data: RetrievalData, task: Task) -> tuple[dict[str, Any], int]:
    """One split scored by BM25 (MTEB's keys, with ``items``: each query's evidence) and what
    its index weighs."""
    results, index_bytes = _bm25_results(data)
    metrics = score_ranked_retrieval(
        results, data.query_ids, data.qrels, return_items=True, no_relevant=_no_relevant(task)
    )
    return metrics, index_bytes


def _bm25_results(data: RetrievalData) -> tuple[dict[str, dict[str, float]], int]:
    """BM25's search output of a split, ``{query_id: {doc_id: score}}`` (each query's best
    1,000 documents), and what its index weighs."""
    index = BM25Index(data.corpus_texts)
    rows, scores = index.search(data.query_texts, RRF_DEPTH)
    results = {
        q: {data.corpus_ids[int(r)]: float(s) for r, s in zip(rows[i], scores[i], strict=True)}
        for i, q in enumerate(data.query_ids)
    }
    return results, index.index_bytes


def score_hybrid_split(
    data: RetrievalData, emb: dict[str, Any], task: Task
) -> tuple[dict[str, Any], int]:
    """One split scored as the reciprocal-rank fusion (k = 60, each list's top 1,000) of the
    model's cosine ranking of its vectors and BM25's, with what BM25's index weighs."""
    dense = dense_ranking(emb["queries"], emb["corpus"], data.query_ids, data.corpus_ids)
    # BM25's list with the same cut rule as the dense one: ties by id at the 1,000th place too
    # (bm25s's own top-k picks tied documents by row, so a shuffled corpus fused otherwise)
    index = BM25Index(data.corpus_texts)
    lexical = ranking_from_scores(
        index.all_scores(data.query_texts), data.query_ids, data.corpus_ids, top_k=RRF_DEPTH
    )
    index_bytes = index.index_bytes
    fused = reciprocal_rank_fusion([dense, lexical], k=RRF_K, depth=RRF_DEPTH)
    metrics = score_ranked_retrieval(
        fused, data.query_ids, data.qrels, return_items=True, no_relevant=_no_relevant(task)
    )
    return metrics, index_bytes


def _score_task(task: Task, data: TaskData) -> tuple[ResultFile, dict[Any, Any], int, int]:
    """Every subset and split of one task scored by BM25: its result file (not yet written),
    its evidence, and the texts it read."""
    t0 = time.perf_counter()
    scores: dict[str, list[Any]] = {}
    items: dict[tuple[str, str], Any] = {}
    index_bytes, documents, texts = 0, 0, 0
    for subset, by_split in data.items():
        for split, split_data in by_split.items():
            assert isinstance(split_data, RetrievalData)
            metrics, size = score_bm25_split(split_data, task)
            items[(split, subset)] = metrics.pop("items")
            metrics["main_score"] = metrics[task.main_score]
            metrics["hf_subset"] = subset
            metrics["languages"] = ["eng-Latn"] if subset == "default" else []
            scores.setdefault(split, []).append(metrics)
            index_bytes += size
            documents += len(split_data.corpus_ids)
            texts += len(split_data.corpus_ids) + len(split_data.query_ids)
    seconds = time.perf_counter() - t0
    extra = {
        "mteb_version": None,
        "chemteb_eval_version": __version__,
        "kg_co2_emissions": None,
        "score_seconds": seconds,
        "n_texts": texts,
        "task_declaration": task.declaration_digest(),
        "software": _software(),
        # the frontier's size of the row: BM25's index, where a dense row's is its vectors
        "storage": {"index": "bm25s", "documents": documents, "index_bytes": index_bytes},
    }
    result = ResultFile(
        task_name=task.name,
        scores=scores,
        dataset_revision=task.revision,
        evaluation_time=seconds,
        extra=extra,
    )
    return result, items, texts, documents


def _software() -> dict[str, str]:
    return dict(
        sorted({**run_software(None), **installed_versions(("bm25s", "PyStemmer"))}.items())
    )


def _retrieval_plan(plan: Plan, log: Log) -> Plan:
    """The plan's retrieval tasks; the others are said in one line (BM25 ranks documents for a
    query: it has no vector to classify, cluster or pair)."""
    kept = tuple(t for t in plan.tasks if KINDS[t.type].ranks_documents)
    others = [t.name for t in plan.tasks if t not in kept]
    if not kept:
        raise ValueError(
            f"model: BM25 scores retrieval tasks only, and none of the run's {len(others)} "
            "task(s) is one; pick retrieval tasks (chemteb list shows each task's type)."
        )
    if others:
        log(f"BM25 scores retrieval only: {len(others)} task(s) skipped ({', '.join(others)}).")
    return replace(plan, tasks=kept)


def run_lexical(
    benchmark: str | Benchmark | None,
    tasks: Sequence[Task] | None,
    options: RunOptions,
) -> RunReport:
    """BM25 on the plan's retrieval tasks into ``<output>/mteb__baseline-bm25s/0_3_0/``:
    pending tasks scored and written one by one, a failing one recorded, the run's record in
    ``runs.jsonl`` whatever happens."""
    started = time.perf_counter()
    require_extras([LEXICAL_EXTRA])
    log = options.log
    plan = _retrieval_plan(select(benchmark, tasks), log)
    paths = data_paths_for(plan, options.data_paths)
    hub_out_of_reach(plan)
    output_dir = Path(options.output_dir)
    existed = {p for p in (output_dir, *output_dir.parents) if p.exists()}
    out_dir = output_dir / BM25_NAME.replace("/", "__") / BM25_REVISION
    writable(out_dir, "--output-dir:", "pass a folder you can write to")
    report = RunReport(results_dir=out_dir)
    counts = {"texts": 0, "documents": 0, "seconds": 0.0}
    try:
        with no_empty_folder_left(out_dir, existed):
            write_model_meta(out_dir, bm25_meta())
            identities: dict[str, str] = {}
            todo = pending(plan, out_dir, options.overwrite, report, log)
            loaded = load(
                plan, todo, report, log, paths, progress=options.progress, identities=identities
            )
            for name in settle(plan, loaded, identities, out_dir, options.overwrite, report, log):
                del loaded[name]
        _score_all(plan, loaded, identities, report, counts, options)
    finally:
        report.seconds = time.perf_counter() - started
        report.encoding = _throughput(counts)
        if out_dir.is_dir():
            settings = {**_SETTINGS, "requested_backend": "bm25s"}
            write_run_record(out_dir, plan, report, settings, log)
    return report


def _score_all(
    plan: Plan,
    loaded: dict[str, TaskData],
    identities: dict[str, str],
    report: RunReport,
    counts: dict[str, Any],
    options: RunOptions,
) -> None:
    from tqdm.auto import tqdm

    by_name = {t.name: t for t in plan.tasks}
    for name in tqdm(list(loaded), desc="tasks", unit="task", disable=not options.progress):
        task = by_name[name]
        try:
            result, items, texts, documents = _score_task(task, loaded[name])
            # a local task names its data by content (its files' fingerprint), as a dense run does
            result = replace(result, dataset_revision=identities.get(name) or task.revision)
            write_result(plan, task, result, items, report.results_dir, report)
        except Exception as exc:  # one task's failure is recorded; the run goes on
            report.statuses[name] = "failed"
            report.errors[name] = f"{type(exc).__name__}: {exc}"
            tell(options.log, f"[failed] {name}: {report.errors[name]}")
            continue
        counts["texts"] += texts
        counts["documents"] += documents
        counts["seconds"] += result.evaluation_time or 0.0


def _throughput(counts: dict[str, Any]) -> dict[str, float]:
    """The run's counts as the summary and the frontier read an encoder's: every document
    indexed and query searched is a text; none cached."""
    seconds = float(counts["seconds"])
    texts = int(counts["texts"])
    return {
        "requested": texts,
        "unique": texts,
        "cache_hits": 0,
        "encoded": texts,
        "seconds": seconds,
        "texts_per_second": texts / seconds if seconds else 0.0,
    }
