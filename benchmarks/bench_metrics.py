"""Benchmark the five ChemTEB metrics at ChemTEB scale (random 384-d float32 embeddings).

For each metric it times, in the same run and on the same inputs:
  - our scoring function (``chemteb_eval.scoring``),
  - the evaluate module (``evaluate.load("metrics/<name>")``), as a ratio to the function,
  - MTEB's evaluator code (the reference implementation) where it can run without a model,
and the peak memory our function allocates (tracemalloc: numpy's allocations are tracked).
A fixed float32 matmul is timed too, so figures can be compared across machines as multiples
of it. Usage:

    python benchmarks/bench_metrics.py [--quick] [--no-mteb] [--out benchmarks/out/metrics.md]

``--quick`` shrinks every size tenfold (a smoke run, ~30 s); the default sizes take several
minutes with the MTEB reference (its 69k x 5k retrieval alone builds 5M Python dict entries).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from _figures import record

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")

from chemteb_eval import scoring

REPO = Path(__file__).resolve().parents[1]
DIM = 384


def best_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mb(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20


def emb(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal((n, DIM)).astype(np.float32)


def mteb_reference() -> Any:
    """The adapters in tests/helpers/mteb_reference.py (MTEB's own code on arrays), shared with the tests."""
    import sys

    sys.path.insert(0, str(REPO))
    from tests.helpers import mteb_reference

    return mteb_reference


# ----------------------------------------------------------------------------- cases


def cases(scale: float, rng: np.random.Generator) -> list[dict[str, Any]]:
    def n(x: int) -> int:
        return max(10, int(x * scale))

    out = []
    n_tr, n_te = n(46_661), n(11_670)
    x_tr, x_te = emb(rng, n_tr), emb(rng, n_te)
    y_tr, y_te = rng.integers(0, 2, n_tr), rng.integers(0, 2, n_te)
    out.append(
        dict(
            name="classification",
            module="classification",
            size=f"train {n_tr:,} / test {n_te:,} / 2 labels",
            direct=lambda: scoring.score_classification(x_tr, y_tr, x_te, y_te),
            module_kwargs=dict(
                references=y_te, test_embeddings=x_te, train_embeddings=x_tr, train_labels=y_tr
            ),
            mteb=lambda: mteb_reference().classification(x_tr, y_tr, x_te, y_te),
        )
    )
    n_cl = n(2_105)
    x_cl, y_cl = emb(rng, n_cl), rng.integers(0, 9, n_cl)
    out.append(
        dict(
            name="clustering",
            module="clustering",
            size=f"{n_cl:,} x 9 labels",
            direct=lambda: scoring.score_clustering(x_cl, y_cl),
            module_kwargs=dict(references=y_cl, embeddings=x_cl),
            mteb=lambda: mteb_reference().clustering_v_measure(x_cl, y_cl),
        )
    )
    n_pc = n(4_096)
    e1 = emb(rng, n_pc)
    e2 = (0.5 * e1 + emb(rng, n_pc)).astype(np.float32)
    y_pc = rng.integers(0, 2, n_pc)
    out.append(
        dict(
            name="pair_classification",
            module="pair_classification",
            size=f"{n_pc:,} pairs",
            direct=lambda: scoring.score_pair_classification(e1, e2, y_pc),
            module_kwargs=dict(references=y_pc, embeddings1=e1, embeddings2=e2),
            mteb=lambda: mteb_reference().pair_classification(
                mteb_reference().pair_distances(e1, e2), y_pc
            ),
        )
    )
    n_bm = n(30_914)
    src = emb(rng, n_bm)
    tgt = (src + 2.0 * emb(rng, n_bm)).astype(np.float32)
    out.append(
        dict(
            name="bitext_mining",
            module="bitext_mining",
            size=f"{n_bm:,} pairs",
            direct=lambda: scoring.score_bitext_mining(src, tgt),
            module_kwargs=dict(source_embeddings=src, target_embeddings=tgt),
            mteb=lambda: mteb_reference().bitext_mining(src, tgt),
        )
    )
    for n_docs, n_q in ((22_933, 27), (69_457, 5_000)):
        nd, nq = n(n_docs), n(n_q)
        c = emb(rng, nd)
        qrel_docs = rng.integers(0, nd, (nq, 2))
        q = (c[qrel_docs[:, 0]] + 1.5 * emb(rng, nq)).astype(np.float32)
        dids = [f"doc{i}" for i in range(nd)]
        qids = [f"q{i}" for i in range(nq)]
        qrels = {qids[i]: {dids[j]: 1 for j in qrel_docs[i]} for i in range(nq)}
        out.append(
            dict(
                name="retrieval",
                module="retrieval",
                size=f"{nd:,} docs x {nq:,} queries",
                direct=partial(scoring.score_retrieval, q, c, qids, dids, qrels),
                module_kwargs=dict(
                    query_embeddings=q,
                    corpus_embeddings=c,
                    query_ids=qids,
                    corpus_ids=dids,
                    qrels=qrels,
                ),
                mteb=lambda q=q, c=c, qids=qids, dids=dids, qrels=qrels: mteb_reference().retrieval(
                    q, c, qids, dids, qrels, [1, 3, 5, 10, 20, 100, 1000]
                ),
            )
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="sizes / 10")
    parser.add_argument("--no-mteb", action="store_true", help="skip the MTEB reference timings")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "out" / "metrics.md")
    parser.add_argument(
        "--record", action="store_true", help="write docs/figures.json['metrics'] and the pages"
    )
    args = parser.parse_args()
    if args.record and (args.quick or args.no_mteb):
        parser.error("--record needs the full sizes and MTEB's timings (no --quick, --no-mteb)")

    import evaluate

    rng = np.random.default_rng(0)
    a = rng.standard_normal((4096, DIM)).astype(np.float32)
    baseline, _ = best_time(lambda: a @ a.T, 5)

    rows = []
    for case in cases(0.1 if args.quick else 1.0, rng):
        repeats = 1 if "69" in case["size"] or "30,914" in case["size"] else 3
        t_direct, result = best_time(case["direct"], repeats)
        module = evaluate.load(str(REPO / "metrics" / case["module"]))
        t_module, _ = best_time(lambda c=case, m=module: m.compute(**c["module_kwargs"]), repeats)
        mem = peak_mb(case["direct"])
        t_mteb = float("nan")
        if not args.no_mteb:
            t_mteb, _ = best_time(case["mteb"], 1)
        rows.append(
            (
                case["name"],
                case["size"],
                t_direct,
                t_module / t_direct,
                t_mteb,
                t_mteb / t_direct,
                mem,
                result["main_score"],
            )
        )
        print(rows[-1], flush=True)

    header = (
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}. "
        f"Baseline: a 4096x{DIM} @ {DIM}x4096 float32 matmul took {baseline * 1000:.1f} ms in this run.\n\n"
        "| metric | size | ours (s) | ours / baseline | module / function | MTEB code (s) | MTEB / ours | peak MB (ours) |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {name} | {size} | {t:.3f} | {t / baseline:.2f} | {mod:.2f} | {tm:.3f} | {ratio:.1f}x | {mem:.0f} |"
        for name, size, t, mod, tm, ratio, mem, _ in rows
    ]
    text = header + "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    if args.record:
        record("metrics", figures(baseline, rows))


def figures(baseline: float, rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """The run as docs/figures.json['metrics'] (``scripts/docs_figures.py`` renders it)."""
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, numpy {np.__version__}",
        "baseline_ms": round(baseline * 1000, 1),
        "rows": [
            {
                "metric": name,
                "size": size,
                "ours_s": round(t, 3),
                "ours_over_baseline": round(t / baseline, 2),
                "module_over_function": round(mod, 2),
                "mteb_s": round(tm, 3),
                "mteb_over_ours": round(ratio, 1),
                "peak_mb": round(mem),
            }
            for name, size, t, mod, tm, ratio, mem, _ in rows
        ],
    }


if __name__ == "__main__":
    main()
