"""BM25 at scale (issue 47): index and search time and peak memory of ``models.bm25.BM25Index``
(MTEB 2.26's ``baseline-bm25s`` settings) at 100k and 1M documents, 1,000 queries, each query's
top 1,000 — what ``chemteb run -m bm25s`` and ``--hybrid bm25s`` do per split.

The corpus is synthetic English-like text: 40 words a document drawn from a Zipf law (s = 1.1)
over 200,000 word forms (the 300 commonest are English words, so stopwords are removed as in
real text) with a SMILES, a CAS number or a formula in one document of three. Each size runs in
a fresh process, so its peak resident memory (``ru_maxrss``) is its own; the figure given is
that peak less the process's memory once the texts were made (the texts are the input, held by
any caller). The same-run reference is the 100k size: the 1M figures are also given as ratios
to it (linear scaling reads 10x).

Usage: python benchmarks/bench_bm25_scale.py [--sizes 100000 1000000] [--queries 1000]
Writes benchmarks/out/bm25_scale.json and docs/figures.json["lexical_scale"].
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

WORDS, PER_DOC = 200_000, 40
COMMON = (
    "the of and in to a is was for as by with on that from are at an it be this which or "
    "acid compound water reaction used sodium carbon chemical formula molecule organic"
).split()


def texts(n: int, seed: int, length: int = PER_DOC) -> list[str]:
    rng = np.random.default_rng(seed)
    ranks = np.minimum(rng.zipf(1.1, size=n * length), WORDS) - 1
    vocab = [COMMON[i] if i < len(COMMON) else f"w{i}" for i in range(WORDS)]
    out = []
    extras = ("CC(=O)Oc1ccccc1C(=O)O", "50-78-2", "C9H8O4", "")
    for i in range(n):
        words = [vocab[r] for r in ranks[i * length : (i + 1) * length]]
        out.append(" ".join(words) + " " + extras[i % 3 if i % 3 else 3])
    return out


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one(n: int, n_queries: int) -> dict[str, Any]:
    """Index ``n`` documents and search ``n_queries`` (in this process)."""
    from chemteb_eval.models.bm25 import BM25Index

    corpus = texts(n, seed=n)
    queries = texts(n_queries, seed=7, length=6)
    before = _rss_mb()
    started = time.perf_counter()
    index = BM25Index(corpus)
    indexed = time.perf_counter() - started
    started = time.perf_counter()
    rows, _ = index.search(queries, 1000)
    searched = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert rows.shape == (n_queries, min(1000, n))
    return {
        "documents": n,
        "queries": n_queries,
        "index_seconds": round(indexed, 2),
        "search_seconds": round(searched, 2),
        "documents_per_second": round(n / indexed),
        "queries_per_second": round(n_queries / searched, 1),
        "peak_mb_over_texts": round(peak - before),
        "process_mb_with_texts": round(before),
        "index_mb": round(index.index_bytes / 2**20, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a size, in this process
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json as is")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.queries)))
        return
    runs = []
    for n in args.sizes:
        found = subprocess.run(
            [sys.executable, __file__, "--one", str(n), "--queries", str(args.queries)],
            check=True,
            capture_output=True,
            text=True,
        )
        runs.append(json.loads(found.stdout.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]))
    base, top = runs[0], runs[-1]
    result: dict[str, Any] = {
        "sizes": runs,
        "largest_over_smallest": {
            "documents": top["documents"] / base["documents"],
            "index_time": round(top["index_seconds"] / base["index_seconds"], 1),
            "search_time": round(top["search_seconds"] / base["search_seconds"], 1),
            "peak_memory": round(top["peak_mb_over_texts"] / max(base["peak_mb_over_texts"], 1), 1),
        },
    }
    out = Path(__file__).parent / "out"
    out.mkdir(exist_ok=True)
    (out / "bm25_scale.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["largest_over_smallest"]))
    if not args.no_record:
        from _figures import record

        record(
            "lexical_scale", {"largest": top, "smallest": base, **result["largest_over_smallest"]}
        )


if __name__ == "__main__":
    main()
