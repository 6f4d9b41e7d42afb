"""What the variants of a model's vectors cost (issue 38): ``--dims``/``--precisions`` scoring
from the cached vectors, as a ratio to the plain run of the same tasks, in one process.

    python benchmarks/bench_costs.py [--scale full|small] [--dims 256,128] [--precisions int8,binary]

1. plain: ``run`` of the bundled all-MiniLM-L6-v2 on PipChem with an empty embedding cache
   (encoding and scoring; each task's time is its result file's ``evaluation_time``: its share
   of the encoding plus its scoring);
2. variants: the same run again with ``dims`` x ``precisions`` (every product but the model's
   own: 8 variants by default), reading the cache: the model is never called (asserted: the
   encoder's ``encode`` is wrapped and counted, and the run's ``encoded`` is 0);
3. truncation: the token counting each result file now records, timed alone per task.

Per task: all variants' scoring seconds together over the plain task's seconds (target: under
2x, issue 38), and over the plain scoring alone (what a variant costs against one scoring pass).
Writes benchmarks/out/costs.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chemteb_eval.data import pipchem
from chemteb_eval.data.loader import load_task
from chemteb_eval.models import load_encoder
from chemteb_eval.runner import run
from chemteb_eval.runner.costs import sides, truncation
from chemteb_eval.runner.stages import task_prompt
from chemteb_eval.tasks import benchmark_tasks


def _extra(folder: Path, task: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / f"{task}.json").read_text())
    return data


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=sorted(pipchem.SCALES), default="small")
    parser.add_argument("--dims", default="256,128")
    parser.add_argument("--precisions", default="int8,binary")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "costs.json")
    parser.add_argument(
        "--figures",
        action="store_true",
        help="record the ratios in docs/figures.json and rewrite docs/costs.md's figures",
    )
    args = parser.parse_args()
    os.environ["CHEMTEB_PIPCHEM_SCALE"] = args.scale
    pipchem.ensure_built(args.scale)
    encoder = load_encoder()
    calls = {"n": 0}
    original = encoder.encode

    def counted(*a: Any, **k: Any) -> Any:
        calls["n"] += 1
        return original(*a, **k)

    encoder.encode = counted  # type: ignore[method-assign]
    work = Path(tempfile.mkdtemp())
    quiet = {"progress": False, "log": lambda m: None, "cache_dir": work / "cache"}
    plain = run(encoder, output_dir=work / "out", **quiet)
    before = calls["n"]
    t0 = time.perf_counter()
    varied = run(
        encoder, output_dir=work / "out", dims=args.dims, precisions=args.precisions, **quiet
    )
    variants_wall = time.perf_counter() - t0
    assert calls["n"] == before and varied.encoding["encoded"] == 0, "a variant called the model"
    rows = []
    for task in benchmark_tasks("PipChem"):
        own = _extra(plain.results_dir, task.name)
        scored = [_extra(v.results_dir, task.name) for v in varied.variants.values()]
        variant_seconds = sum(s["score_seconds"] for s in scored)
        data = load_task(task)
        t1 = time.perf_counter()
        truncation(encoder, sides(data, lambda role, t=task: task_prompt(encoder, t, role)))
        counting = time.perf_counter() - t1
        rows.append(
            {
                "task": task.name,
                "variants": len(scored),
                "plain_seconds": own["evaluation_time"],
                "plain_score_seconds": own["score_seconds"],
                "variants_score_seconds": variant_seconds,
                "variants_over_plain_task": variant_seconds / own["evaluation_time"],
                "variants_over_plain_scoring": variant_seconds / own["score_seconds"],
                "truncation_seconds": counting,
                "truncation_over_plain_scoring": counting / own["score_seconds"],
            }
        )
    total_plain = sum(r["plain_seconds"] for r in rows)
    total_variants = sum(r["variants_score_seconds"] for r in rows)
    out = {
        "scale": args.scale,
        "dims": args.dims,
        "precisions": args.precisions,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "model_calls_during_variants": calls["n"] - before,
        "variants_run_wall_seconds": variants_wall,
        "plain_run_seconds": plain.seconds,
        "all_tasks": {
            "variants_over_plain": total_variants / total_plain,
            "worst_task_variants_over_plain": max(r["variants_over_plain_task"] for r in rows),
        },
        "tasks": rows,
    }
    if args.figures:
        record_figures(out)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(
        f"{'task':<34} {'plain s':>8} {'variants s':>10} {'/plain':>7} {'/scoring':>9} {'cut s':>6}"
    )
    for r in rows:
        print(
            f"{r['task']:<34} {r['plain_seconds']:>8.2f} {r['variants_score_seconds']:>10.2f} "
            f"{r['variants_over_plain_task']:>7.2f} {r['variants_over_plain_scoring']:>9.2f} "
            f"{r['truncation_seconds']:>6.2f}"
        )
    print(
        f"all tasks: {len(varied.variants)} variants cost {out['all_tasks']['variants_over_plain']:.2f}x "
        f"the plain run's task time; model calls during variants: {out['model_calls_during_variants']}"
    )


def record_figures(out: dict[str, Any]) -> None:
    from _figures import record

    record(
        "costs",
        {
            "scale": out["scale"],
            "variants_over_plain": round(out["all_tasks"]["variants_over_plain"], 2),
            "worst": round(out["all_tasks"]["worst_task_variants_over_plain"], 2),
            "truncation": round(max(r["truncation_seconds"] for r in out["tasks"]), 2),
        },
    )


if __name__ == "__main__":
    main()
