"""bfloat16 on a CPU with native bfloat16 (issue 39): encode speed over float32 and how far any
main score moves, in one process, on PipChem.

    python benchmarks/bench_dtype.py [--scale full|small] [--figures]

The bundled all-MiniLM-L6-v2 on the torch backend, loaded twice (float32; bfloat16), each run
with no embedding cache so that every text is encoded; the runs alternate (float32, bfloat16,
float32, bfloat16 with ``--repeat 2``) and each dtype's best encode rate is kept. Reports the
encode speed-up (the runs' texts per second, model time only) and the largest change of any
task's main score (target: >= 1.5x, no score moved by more than 0.005). Writes
benchmarks/out/dtype.json.
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
from chemteb_eval.models import load_encoder
from chemteb_eval.runner import run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=sorted(pipchem.SCALES), default="small")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--figures", action="store_true", help="record in docs/figures.json")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "dtype.json")
    args = parser.parse_args()
    os.environ["CHEMTEB_PIPCHEM_SCALE"] = args.scale
    pipchem.ensure_built(args.scale)
    encoders = {
        dtype: load_encoder(backend="torch", precision=dtype, log=lambda m: None)
        for dtype in ("float32", "bfloat16")
    }
    best: dict[str, dict[str, Any]] = {}
    work = Path(tempfile.mkdtemp())
    for round_ in range(args.repeat):
        for dtype, encoder in encoders.items():
            t0 = time.perf_counter()
            report = run(
                encoder,
                output_dir=work / f"{dtype}-{round_}",
                use_cache=False,
                precision=dtype,
                progress=False,
                log=lambda m: None,
            )
            wall = time.perf_counter() - t0
            rate = report.encoding["texts_per_second"]
            if dtype not in best or rate > best[dtype]["texts_per_second"]:
                best[dtype] = {
                    "texts_per_second": rate,
                    "run_seconds": wall,
                    "scores": dict(report.main_scores),
                }
    f32, b16 = best["float32"], best["bfloat16"]
    moved = {t: abs(b16["scores"][t] - f32["scores"][t]) for t in f32["scores"]}
    out = {
        "scale": args.scale,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "encode_speedup": b16["texts_per_second"] / f32["texts_per_second"],
        "run_speedup": f32["run_seconds"] / b16["run_seconds"],
        "largest_score_change": max(moved.values()),
        "score_changes": moved,
        "float32": f32,
        "bfloat16": b16,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(
        f"bfloat16 encodes {out['encode_speedup']:.2f}x float32's texts/s "
        f"({b16['texts_per_second']:.0f} vs {f32['texts_per_second']:.0f}); run "
        f"{out['run_speedup']:.2f}x; largest main-score change {out['largest_score_change']:.4f}"
    )
    for task, change in moved.items():
        print(f"  {task:<34} {f32['scores'][task]:.4f} -> {b16['scores'][task]:.4f} ({change:.4f})")
    if args.figures:
        record_figures(out)


def record_figures(out: dict[str, Any]) -> None:
    from _figures import record

    record(
        "dtype",
        {
            "scale": out["scale"],
            "encode_speedup": round(out["encode_speedup"], 2),
            "run_speedup": round(out["run_speedup"], 2),
            "largest_score_change": round(out["largest_score_change"], 4),
        },
    )


if __name__ == "__main__":
    main()
