"""BM25, all-MiniLM-L6-v2 and their hybrid on PipChem's retrieval task (issue 47), measured as
a user runs them: ``chemteb run -m bm25s`` and ``chemteb run --hybrid bm25s`` on
PipChemWikiRetrieval (the full build) into one fresh results folder, then read back as ``chemteb
rank`` reads it: each main score (nDCG@10), each verdict with its 95% paired-bootstrap interval
over the queries, what each index weighs and what each costs in seconds.

The model's vectors come from the embedding cache when a run made them before (the hybrid needs
no model call; its seconds are its fusion and scoring). The same-run reference for BM25's
seconds is the dense model's scoring of the same task from the same cached vectors.

Usage: python benchmarks/bench_lexical.py [--no-record]
Writes benchmarks/out/lexical.json and docs/figures.json["lexical"].
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from chemteb_eval.results.board import read_results
from chemteb_eval.results.lexical import versus_bm25
from chemteb_eval.runner import run
from chemteb_eval.tasks import get_benchmark, get_task

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
TASK = "PipChemWikiRetrieval"


def _file(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((folder / f"{TASK}.json").read_text())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json as is")
    args = parser.parse_args()
    task = get_task(TASK)
    quiet: dict[str, Any] = {"progress": False, "log": lambda _: None}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results"
        started = time.perf_counter()
        bm25 = run("bm25s", tasks=[task], output_dir=out, **quiet)
        bm25_seconds = time.perf_counter() - started
        dense = run(MODEL, tasks=[task], output_dir=out, hybrid="bm25s", **quiet)
        (hybrid,) = dense.variants.values()
        bench = get_benchmark("PipChem")
        models = read_results([out], bench)
        verdicts = {(v.model, v.against): v for v in versus_bm25(models, bench)}
        files = {
            "bm25": _file(bm25.results_dir),
            "dense": _file(dense.results_dir),
            "hybrid": _file(hybrid.results_dir),
        }
    names = {m.model for m in models}
    hybrid_name = next(n for n in names if "hybrid=bm25s" in n)
    bm25_name = "mteb/baseline-bm25s"

    def said(model: str, against: str) -> dict[str, Any]:
        v = verdicts[(model, against)]
        return {
            "difference": round(v.difference, 4),
            "low": round(v.low, 4) if v.low is not None else None,
            "high": round(v.high, 4) if v.high is not None else None,
            "verdict": v.verdict,
        }

    result = {
        "task": TASK,
        "model": MODEL,
        "bm25": round(files["bm25"]["scores"]["test"][0]["ndcg_at_10"], 4),
        "dense": round(files["dense"]["scores"]["test"][0]["ndcg_at_10"], 4),
        "hybrid": round(files["hybrid"]["scores"]["test"][0]["ndcg_at_10"], 4),
        "dense_vs_bm25": said(MODEL, bm25_name),
        "hybrid_vs_bm25": said(hybrid_name, bm25_name),
        "hybrid_vs_dense": said(hybrid_name, MODEL),
        "bm25_run_seconds": round(bm25_seconds, 1),
        "bm25_score_seconds": round(files["bm25"]["score_seconds"], 2),
        "dense_score_seconds": round(files["dense"]["score_seconds"], 2),
        "hybrid_score_seconds": round(files["hybrid"]["score_seconds"], 2),
        "bm25_index_mb": round(files["bm25"]["storage"]["index_bytes"] / 1e6, 1),
        "dense_index_mb": round(files["dense"]["storage"]["index_bytes"] / 1e6, 1),
        "hybrid_index_mb": round(files["hybrid"]["storage"]["index_bytes"] / 1e6, 1),
        "documents": files["bm25"]["storage"]["documents"],
    }
    from _figures import publish

    publish("lexical", result, to_docs=not args.no_record)


if __name__ == "__main__":
    main()
