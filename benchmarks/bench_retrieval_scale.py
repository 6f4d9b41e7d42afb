"""Exact retrieval at scale (issue 29): time and peak working memory of ``rank_corpus`` over
synthetic 384-d float32 vectors, 1,000 queries, top-100, at 100k, 1M and 5M documents.

The corpus is written once to a ``.npy`` file and memory-mapped, as the runner spills a large
corpus (so the corpus itself is not counted: its pages live in the OS cache). Peak memory is
``tracemalloc``'s peak of what ranking allocates (numpy's allocations are traced). The baseline is
the same function in one pass over the whole corpus (``corpus_chunk_size`` = the corpus size:
how it ranked before streaming), run where it fits (100k, and 400k, the issue's figure); the
same-run reference is a 1024 x 1024 float32 matmul. Ranks are checked equal to the one-pass
ranks at every size both run.

Usage: python benchmarks/bench_retrieval_scale.py [--sizes 100000 1000000 5000000] [--dir DIR]
Writes benchmarks/out/retrieval_scale.json.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.scoring.retrieval import DEFAULT_CORPUS_CHUNK, rank_corpus

DIM, N_QUERIES, TOP_K = 384, 1000, 100
ONE_PASS_UP_TO = 400_000  # the old single pass: 2.7 GB at 400k (the measurement)


def corpus_file(folder: Path, n: int) -> np.ndarray:
    path = folder / f"corpus_{n}.npy"
    if not path.exists():
        out = np.lib.format.open_memmap(path, "w+", np.float32, (n, DIM))
        rng = np.random.default_rng(n)
        for start in range(0, n, 200_000):
            stop = min(n, start + 200_000)
            out[start:stop] = rng.standard_normal((stop - start, DIM), dtype=np.float32)
        out.flush()
        del out
    mapped: np.ndarray = np.load(path, mmap_mode="r")
    return mapped


def measure(queries: np.ndarray, corpus: np.ndarray, ids: list[str], chunk: int) -> dict[str, Any]:
    tracemalloc.start()
    started = time.perf_counter()
    ranked = rank_corpus(queries, corpus, ids, TOP_K, corpus_chunk_size=chunk)
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"seconds": seconds, "peak_mb": peak / 2**20, "ranked": ranked}


def reference_seconds() -> float:
    a = np.random.default_rng(0).standard_normal((1024, 1024), dtype=np.float32)
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000, 5_000_000])
    parser.add_argument("--dir", help="where the synthetic corpora go (default: a temp folder)")
    args = parser.parse_args()
    folder = Path(args.dir or tempfile.mkdtemp(prefix="chemteb-scale-"))
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    queries = rng.standard_normal((N_QUERIES, DIM), dtype=np.float32)
    matmul = reference_seconds()
    rows = []
    sizes = sorted(set(args.sizes) | ({ONE_PASS_UP_TO} if max(args.sizes) >= 1e6 else set()))
    for n in sizes:
        corpus = corpus_file(folder, n)
        ids = [f"d{i}" for i in range(n)]
        streamed = measure(queries, corpus, ids, DEFAULT_CORPUS_CHUNK)
        row: dict[str, Any] = {
            "documents": n,
            "seconds": round(streamed["seconds"], 2),
            "peak_mb": round(streamed["peak_mb"], 1),
            "seconds_per_1m_docs": round(streamed["seconds"] / n * 1e6, 2),
            "seconds_in_matmuls_of_1024": round(streamed["seconds"] / matmul, 1),
        }
        if n <= ONE_PASS_UP_TO:
            one_pass = measure(queries, np.asarray(corpus), ids, n)
            assert one_pass["ranked"].tolist() == streamed["ranked"].tolist(), n
            row["one_pass_seconds"] = round(one_pass["seconds"], 2)
            row["one_pass_peak_mb"] = round(one_pass["peak_mb"], 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = Path(__file__).resolve().parent / "out" / "retrieval_scale.json"
    out.parent.mkdir(exist_ok=True)
    report = {
        "dim": DIM,
        "queries": N_QUERIES,
        "top_k": TOP_K,
        "corpus_chunk": DEFAULT_CORPUS_CHUNK,
        "matmul_1024_seconds": round(matmul, 4),
        "rows": rows,
    }
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
