"""`chemteb run` against the bare model, cold and warm, on PipChem (same process, same run).

    python benchmarks/bench_runner.py [--scale full|small] [--out benchmarks/out/runner.md]
                                      [--record]

1. bare: load every PipChem task, collect the unique (prompt, text) pairs and call plain
   ``SentenceTransformer.encode`` on them (its own length sort, batch size 32, torch's own
   threads) — the encoding any tool must do, as a user without this one does it; its
   ``encode`` calls are also timed alone;
   then the engine (``EmbeddingEngine.prefetch``, no cache) on the same unique pairs: the two
   encoders on the same texts, in the same run;
2. cold: ``chemteb_eval.runner.run`` with an empty embedding cache (data loading, dedup,
   encoding, scoring, atomic writes);
3. warm: the same run again with ``overwrite=True`` (everything from the cache).
The suite is built before timing starts. Reports the ratios cold/bare and cold/warm and how many
encodings deduplication saved. ``--record`` writes docs/figures.json['runner'] and renders the
pages.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chemteb_eval.data import pipchem
from chemteb_eval.data.loader import load_task
from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.engine.cache import text_key
from chemteb_eval.models import load_encoder
from chemteb_eval.runner import run
from chemteb_eval.runner.kinds import split_texts
from chemteb_eval.tasks import benchmark_tasks


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=sorted(pipchem.SCALES), default="full")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "runner.md")
    parser.add_argument("--record", action="store_true", help="docs/figures.json too")
    args = parser.parse_args()
    if args.record and args.scale != "full":
        parser.error("--record measures the full suite (no --scale small)")
    os.environ["CHEMTEB_PIPCHEM_SCALE"] = args.scale
    pipchem.ensure_built(args.scale)
    encoder = load_encoder()
    load_before = round(os.getloadavg()[0], 2)

    t0 = time.perf_counter()
    requests = []
    for task in benchmark_tasks("PipChem"):
        for by_split in load_task(task).values():
            for data in by_split.values():
                for texts, role in split_texts(data).values():
                    requests += [(encoder.prompt(task.type, role), t) for t in texts]
    unique: dict[str, tuple[str, str]] = {}
    for prompt, text in requests:
        unique.setdefault(text_key(prompt, text), (prompt, text))
    by_prompt: dict[str, list[str]] = {}
    for prompt, text in unique.values():
        by_prompt.setdefault(prompt, []).append(text)
    t1 = time.perf_counter()
    for prompt, texts in by_prompt.items():
        encoder.model.encode(texts, prompt=prompt or None, batch_size=args.batch_size)  # type: ignore[attr-defined]
    bare = time.perf_counter() - t0
    plain_encode = time.perf_counter() - t1

    engine = EmbeddingEngine(encoder, None, batch_size=args.batch_size, progress=False)
    t1 = time.perf_counter()
    engine.prefetch(unique.values())
    engine_encode = time.perf_counter() - t1
    engine.close()

    work = Path(tempfile.mkdtemp())
    try:
        t0 = time.perf_counter()
        cold = run(
            encoder,
            output_dir=work / "out",
            cache_dir=work / "cache",
            batch_size=args.batch_size,
            progress=False,
        )
        t_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        run(
            encoder,
            output_dir=work / "out",
            cache_dir=work / "cache",
            batch_size=args.batch_size,
            overwrite=True,
            progress=False,
        )
        t_warm = time.perf_counter() - t0
    finally:
        shutil.rmtree(work, ignore_errors=True)

    enc = cold.encoding
    lines = [
        f"PipChem ({args.scale}), all-MiniLM-L6-v2, batch size {args.batch_size}, {platform.machine()} with {os.cpu_count()} CPUs; suite prebuilt.",
        "",
        "| measure | value |",
        "|---|---:|",
        f"| bare model: load tasks + encode the unique texts (s) | {bare:.1f} |",
        f"| plain encode alone / the engine's on the same texts (s) | {plain_encode:.1f} / {engine_encode:.1f} |",
        f"| `run`, cold cache (s) | {t_cold:.1f} |",
        f"| `run`, warm cache, --overwrite (s) | {t_warm:.1f} |",
        f"| cold / bare (target <= 1.15) | {t_cold / bare:.3f} |",
        f"| cold / warm (target >= 20) | {t_cold / t_warm:.1f} |",
        f"| texts requested / unique | {int(enc['requested']):,} / {int(enc['unique']):,} |",
        f"| encodings saved by deduplication | {int(enc['requested'] - enc['unique']):,} ({1 - enc['unique'] / enc['requested']:.1%}) |",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.record:
        from _figures import record

        record(
            "runner",
            {
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "load_1min_before": load_before,
                "batch_size": args.batch_size,
                "bare_s": round(bare, 1),
                "cold_s": round(t_cold, 1),
                "warm_s": round(t_warm, 1),
                "bare_over_cold": round(bare / t_cold, 2),
                "plain_encode_s": round(plain_encode, 1),
                "engine_encode_s": round(engine_encode, 1),
                "plain_over_engine_encode": round(plain_encode / engine_encode, 2),
                "cold_over_warm": round(t_cold / t_warm, 1),
                "requested": int(enc["requested"]),
                "unique": int(enc["unique"]),
            },
        )


if __name__ == "__main__":
    main()
