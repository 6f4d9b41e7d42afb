"""Why bfloat16 moves PipChemWikiFieldClustering (issue 50): the vectors, or k-means?

    python benchmarks/bench_bf16_clustering.py [--noise-seeds 10] [--record]

One process, the task's own texts, all-MiniLM-L6-v2 through the engine (no cache) in float32
and in bfloat16 (on a CPU with native bfloat16). It reports:

1. how far bfloat16 moves each vector: ``|v_bf16 - v_f32| / |v_f32|`` (mean, largest);
2. the task's score (V-measure, MTEB's protocol: ``scoring.score_clustering``) from each, and
   from bfloat16 vectors of plain ``SentenceTransformer.encode`` (other calls: other roundings),
   and from the float32 model under ``torch.autocast`` to bfloat16 (LayerNorm, softmax and the
   residual sums kept in float32), with that encode's time against the bfloat16 cast's;
3. the float32 vectors under random perturbations of a set relative size (1e-3, 3e-3 and
   bfloat16's own mean), each vector moved by Gaussian noise scaled to that share of its norm,
   ``--noise-seeds`` draws each: how far the score moves (mean, largest) — does the float32 run
   itself move that much when its vectors move as much as bfloat16 moves them?
4. the float32 vectors under other k-means seeds (0-9): k-means' own spread on this task;
5. the task's texts encoded together with 1,500 other PipChem texts, each
   dtype: how many of its vectors differ from the task's run alone, and the score from them.
   float32 calls on a CPU are batch-invariant (0 rows); bfloat16's need not be (oneDNN's
   bfloat16 products may block a call by its rows), and then a run's score depends on which
   texts shared its calls.

If (3) at bfloat16's size moves the score as much as bfloat16 does, the move is k-means'
sensitivity to perturbations of that size, not a defect of the bfloat16 vectors: only vectors
closer to float32's can make it smaller, and (3) at 1e-3 says how much closer. ``--record`` writes
docs/figures.json['bf16_clustering'] and renders the pages.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
from _figures import publish

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chemteb_eval.data import pipchem
from chemteb_eval.data.loader import load_task
from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.models import load_encoder
from chemteb_eval.scoring import score_clustering
from chemteb_eval.tasks import get_task

TASK = "PipChemWikiFieldClustering"


def vectors(
    precision: str, texts: list[str], others: list[str], autocast: bool = False
) -> list[Any]:
    """The engine's vectors, its vectors of ``texts`` encoded together with ``others``, plain
    ``SentenceTransformer.encode``'s (its own batches) and its seconds, and (``autocast``)
    plain encode's under ``torch.autocast`` to bfloat16 and its seconds."""
    import torch

    encoder = load_encoder(precision=precision, backend="torch")
    engine = EmbeddingEngine(encoder, None, progress=False)
    prompt = encoder.prompt("Clustering", None)
    engine.prefetch((prompt, t) for t in texts)
    model: Any = encoder.model  # type: ignore[attr-defined]

    def plain() -> tuple[np.ndarray, float]:
        started = time.perf_counter()
        out = model.encode(texts, prompt=prompt or None, convert_to_tensor=True)
        return np.asarray(
            out.float().cpu().numpy(), dtype=np.float32
        ), time.perf_counter() - started

    mixed = EmbeddingEngine(encoder, None, progress=False)
    mixed.prefetch((prompt, t) for t in [*texts, *others])
    found = [
        np.asarray(engine.embed(texts, prompt), dtype=np.float32),
        np.asarray(mixed.embed(texts, prompt), dtype=np.float32),
        *plain(),
    ]
    if autocast:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            found += plain()
    return found


def perturbed(base: np.ndarray, share: float, seed: int) -> np.ndarray:
    """Each row moved by Gaussian noise whose norm is ``share`` of the row's norm."""
    noise = np.random.default_rng(seed).standard_normal(base.shape).astype(np.float32)
    noise *= (share * np.linalg.norm(base, axis=1) / np.linalg.norm(noise, axis=1))[:, None]
    return base + noise


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--noise-seeds", type=int, default=10)
    parser.add_argument("--record", action="store_true", help="docs/figures.json too")
    args = parser.parse_args()
    pipchem.ensure_built("full")
    ((split, data),) = next(iter(load_task(get_task(TASK)).values())).items()
    texts, labels = data.sets[0].texts, data.sets[0].labels

    from bench_onnx import pipchem_texts

    others = [t for t in pipchem_texts(500) if t not in set(texts)]
    f32, f32_mixed, _, _, auto, auto_s = vectors("float32", texts, others, autocast=True)
    b16, b16_mixed, b16_plain, b16_s = vectors("bfloat16", texts, others)
    moved = np.linalg.norm(b16 - f32, axis=1) / np.linalg.norm(f32, axis=1)
    plain_moved = np.linalg.norm(b16_plain - f32, axis=1) / np.linalg.norm(f32, axis=1)
    auto_moved = np.linalg.norm(auto - f32, axis=1) / np.linalg.norm(f32, axis=1)

    def score(x: np.ndarray, seed: int = 42) -> float:
        return float(score_clustering(x, labels, seed=seed)["main_score"])

    base = score(f32)
    shares = {"1e-3": 1e-3, "3e-3": 3e-3, "bfloat16_mean": float(moved.mean())}
    noise: dict[str, Any] = {}
    for name, share in shares.items():
        moves = [abs(score(perturbed(f32, share, s)) - base) for s in range(args.noise_seeds)]
        noise[name] = {
            "share": round(share, 5),
            "mean_move": round(float(np.mean(moves)), 4),
            "largest_move": round(float(np.max(moves)), 4),
        }
    by_seed = [score(f32, seed) for seed in range(10)]
    report = {
        "task": TASK,
        "split": split,
        "texts": len(texts),
        "vector_move_mean": round(float(moved.mean()), 5),
        "vector_move_largest": round(float(moved.max()), 5),
        "float32": round(base, 6),
        "bfloat16": round(score(b16), 6),
        "bfloat16_move": round(abs(score(b16) - base), 4),
        "plain_bfloat16_vector_move_mean": round(float(plain_moved.mean()), 5),
        "plain_bfloat16": round(score(b16_plain), 6),
        "plain_bfloat16_move": round(abs(score(b16_plain) - base), 4),
        "autocast_vector_move_mean": round(float(auto_moved.mean()), 5),
        "autocast_move": round(abs(score(auto) - base), 4),
        "autocast_over_bfloat16_time": round(auto_s / b16_s, 2),
        "with_others": len(others),
        "float32_rows_moved_by_others": int((f32_mixed != f32).any(axis=1).sum()),
        "bfloat16_rows_moved_by_others": int((b16_mixed != b16).any(axis=1).sum()),
        "bfloat16_largest_move_by_others": float(np.abs(b16_mixed - b16).max()),
        "bfloat16_with_others": round(score(b16_mixed), 6),
        "noise_seeds": args.noise_seeds,
        "float32_under_noise": noise,
        "kmeans_seeds_lowest": round(min(by_seed), 4),
        "kmeans_seeds_highest": round(max(by_seed), 4),
    }

    publish("bf16_clustering", report, to_docs=args.record)


if __name__ == "__main__":
    main()
