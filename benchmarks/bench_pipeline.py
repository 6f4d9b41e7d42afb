"""The stages around the model, each alone, against the model's forward pass (issue 30).

Texts/s of: tokenise (the model's fast tokenizer, batches of 256), dedup/hash (``text_key`` and
the unique-key pass ``prefetch`` makes), cache put (``EmbeddingCache.put`` in the engine's
blocks), cache get (``lookup`` of every key), gather (``EmbeddingEngine.embed``: the rows of a
task's texts in order, from the cache), and a NumPy ``.npy`` save/load of the same vectors as a
same-run reference. The model's forward pass alone (MiniLM, float32, batches of 32 and 256 of
the same texts, tokenised beforehand) is the rate every stage is compared with; the target is 10x
the H200 check's GPU encode rate (6,000 texts/s: so >= 60,000 texts/s a stage).

Usage: python benchmarks/bench_pipeline.py [--vectors 200000] [--texts 4096] [--record]
Writes benchmarks/out/pipeline.json (``--record``: docs/figures.json['pipeline'] too).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.engine.cache import EmbeddingCache, text_key

GPU_RATE = 6_000  # texts/s: docs/gpu_check_h200.json's best MiniLM encode on an H200
TARGET = 10 * GPU_RATE


def timed(fn: Callable[[], Any], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def texts_of(n: int) -> list[str]:
    rng = np.random.default_rng(0)
    words = ["acid", "benzene", "polymer", "ester", "catalyst", "solvent", "ligand", "oxide"]
    return [
        " ".join(words[j] for j in rng.integers(0, len(words), rng.integers(8, 40)))
        + f" sample {i}"
        for i in range(n)
    ]


def cache_stages(n: int, folder: Path) -> dict[str, float]:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((n, 384), dtype=np.float32)
    texts = [f"text {i}" for i in range(n)]
    keys = [text_key("", t) for t in texts]
    block = 512  # the engine's block for batch size 32
    out: dict[str, float] = {}

    def put(block: int) -> None:
        shutil.rmtree(folder / "c", ignore_errors=True)
        cache = EmbeddingCache(
            folder / "c", model="bench/model", revision="1" * 40, source="bench/model"
        )
        for start in range(0, n, block):
            cache.put(keys[start : start + block], vectors[start : start + block])
        cache.close()

    def old_layout() -> None:
        """Vectors as SQLite rows, as caches before issue 39 held them: the puts that layout
        made (one row a vector, in key order, a transaction a block) and the reads of it that
        the cache still makes for such files."""
        import sqlite3

        shutil.rmtree(folder / "c", ignore_errors=True)
        probe = EmbeddingCache(
            folder / "c", model="bench/model", revision="1" * 40, source="bench/model"
        )
        path = probe.path.with_suffix(".sqlite")  # that layout's file
        probe.close()
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("CREATE TABLE emb (key TEXT UNIQUE, dim INTEGER, vec BLOB)")
        raw, width = vectors.tobytes(), 4 * vectors.shape[1]
        started = time.perf_counter()
        for start in range(0, n, block):
            order = sorted(range(start, min(start + block, n)), key=keys.__getitem__)
            db.execute("BEGIN IMMEDIATE")
            db.executemany(
                "INSERT OR IGNORE INTO emb VALUES (?, ?, ?)",
                [(keys[i], 384, raw[i * width : (i + 1) * width]) for i in order],
            )
            db.execute("COMMIT")
        out["cache put, old layout (baseline)"] = n / (time.perf_counter() - started)

        def rows() -> None:  # that layout's reads: the rows of 900 keys a query
            for start in range(0, n, 900):
                chunk = keys[start : start + 900]
                marks = ",".join("?" * len(chunk))
                db.execute(f"SELECT key, vec FROM emb WHERE key IN ({marks})", chunk).fetchall()

        out["cache get, old layout (baseline)"] = n / timed(rows)
        db.close()

    old_layout()
    # the engine's blocks: 16 batches (512 texts at batch 32, 4,096 at a GPU's 256)
    out["cache put (blocks of 4096)"] = n / timed(lambda: put(4096))
    out["cache put"] = n / timed(lambda: put(block))
    cache = EmbeddingCache(
        folder / "c", model="bench/model", revision="1" * 40, source="bench/model"
    )
    out["cache get"] = n / timed(lambda: cache.lookup(keys, 384))
    out["cache missing"] = n / timed(lambda: cache.missing(keys))

    from chemteb_eval.engine.encode import EmbeddingEngine

    class _NoModel:
        meta = type("M", (), {"embedding_dim": 384})()

    engine = EmbeddingEngine(_NoModel(), cache, progress=False)  # type: ignore[arg-type]
    out["gather (embed from the cache)"] = n / timed(lambda: engine.embed(texts, ""))
    cache.close()
    path = folder / "v.npy"
    out["npy save (reference)"] = n / timed(lambda: np.save(path, vectors))
    out["npy load (reference)"] = n / timed(lambda: np.load(path))
    out["dedup/hash"] = n / timed(
        lambda: list(dict.fromkeys(text_key("", t) for t in texts)), repeat=2
    )
    return out


def model_stages(n_texts: int) -> dict[str, float]:
    import torch

    from chemteb_eval.models import DEFAULT_MODEL, load_encoder

    model = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda m: None).model  # bundled
    texts = texts_of(n_texts)
    out: dict[str, float] = {}
    tokenizer = model.tokenizer
    out["tokenise"] = n_texts / timed(
        lambda: [
            tokenizer(
                texts[i : i + 256],
                padding=True,
                truncation=True,
                max_length=256,
                return_tensors="pt",
            )
            for i in range(0, n_texts, 256)
        ]
    )
    for batch in (32, 256):
        features = [model.tokenize(texts[i : i + batch]) for i in range(0, n_texts, batch)]

        def forward(features: list[dict[str, Any]] = features) -> None:
            with torch.inference_mode():
                for f in features:
                    model(f)

        out[f"forward pass (batch {batch})"] = n_texts / timed(forward, repeat=1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--vectors", type=int, default=200_000)
    parser.add_argument("--texts", type=int, default=4096)
    parser.add_argument("--record", action="store_true", help="docs/figures.json too")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="chemteb-pipeline-"))
    try:
        rates = {**cache_stages(args.vectors, folder), **model_stages(args.texts)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    forward = rates["forward pass (batch 32)"]
    rows = []
    for stage, rate in rates.items():
        rows.append(
            {
                "stage": stage,
                "texts_per_second": round(rate),
                "x_forward_on_this_cpu": round(rate / forward, 1),
                "x_h200_encode_rate": round(rate / GPU_RATE, 1),
                "meets_target": rate >= TARGET or stage.startswith("forward"),
            }
        )
        print(f"{stage:<32} {rate:>12,.0f} texts/s  {rate / GPU_RATE:>7.1f}x the H200 rate")
    from _figures import publish

    report = {
        "vectors": args.vectors,
        "texts": args.texts,
        "target": TARGET,
        "rows": rows,
    }
    publish("pipeline", report, to_docs=args.record)


if __name__ == "__main__":
    main()
