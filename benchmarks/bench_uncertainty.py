"""Time the uncertainty estimates against their targets (issue 14), with a same-run baseline.

- across-task bootstrap of the benchmark aggregate: 34 models x 35 tasks x 1,000 resamples (RRF,
  the paper's 34 models when ../shared is there, else synthetic scores) — target < 2 s;
- a per-task item bootstrap: 5,000 queries x 1,000 resamples of per-query nDCG — target < 1 s;
- pair-classification resampling: 4,096 pairs x 1,000 resamples, the four-function threshold
  sweep redone on each — target < 10 s.

The baseline is a fixed 1024 x 1024 float64 matmul timed in the same run (so figures compare
across machines as multiples of it). Usage: python benchmarks/bench_uncertainty.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.scoring import score_pair_classification
from chemteb_eval.scoring.uncertainty import bootstrap_ci, mean_ci, rank_intervals, task_statistic

SHARED = Path(__file__).resolve().parents[2] / "shared" / "reference" / "paper_results"


def best_of(fn: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def paper_scores() -> tuple[dict[str, dict[str, float]], dict[str, str], str]:
    if SHARED.is_dir():
        from chemteb_eval.results.board import read_results
        from chemteb_eval.tasks import benchmark_tasks, get_benchmark

        bench = get_benchmark("ChemTEB(paper)")
        tasks = benchmark_tasks(bench)
        models = [m for m in read_results([SHARED], bench) if len(m.scores) == len(tasks)]
        return (
            {m.model: dict(m.scores) for m in models},
            {t.name: t.type for t in tasks},
            "the paper's 34 models",
        )
    rng = np.random.default_rng(0)
    types = {f"t{i}": ("A", "B", "C", "D", "E")[i % 5] for i in range(35)}
    scores = {f"m{j}": {t: float(rng.random()) for t in types} for j in range(34)}
    return scores, types, "synthetic scores (../shared absent)"


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.random((1024, 1024))
    baseline = best_of(lambda: a @ a)
    scores, types, source = paper_scores()
    across = best_of(lambda: rank_intervals(scores, types, aggregation="rrf", resamples=1000))
    per_query = rng.random(5000)
    items = best_of(lambda: mean_ci(per_query, resamples=1000))
    e1 = rng.normal(size=(4096, 64)).astype(np.float32)
    e2 = (e1 + rng.normal(scale=2.0, size=e1.shape)).astype(np.float32)
    labels = rng.integers(0, 2, 4096)
    evidence = score_pair_classification(e1, e2, labels, return_items=True)["items"]
    statistic, n = task_statistic("PairClassification", evidence, "max_f1")
    pairs = best_of(lambda: bootstrap_ci(statistic, n, resamples=1000), repeat=1)
    rows = [
        (f"across-task rank intervals, {source}, 35 tasks x 1,000", across, 2.0),
        ("item bootstrap, 5,000 queries x 1,000", items, 1.0),
        ("pair classification, 4,096 pairs x 1,000 (4 sweeps each)", pairs, 10.0),
    ]
    print(f"baseline: 1024x1024 float64 matmul {baseline * 1000:.1f} ms\n")
    print("| estimate | seconds | / baseline | target |")
    print("|---|---:|---:|---:|")
    for name, seconds, target in rows:
        ok = "ok" if seconds < target else "MISSED"
        print(f"| {name} | {seconds:.3f} | {seconds / baseline:.0f}x | < {target:g} s ({ok}) |")


if __name__ == "__main__":
    main()
