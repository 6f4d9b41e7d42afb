"""Synthetic result folders (our layout) to try the Space on, and to measure it at scale.

``python space/synthetic.py OUT --models 100`` writes 100 models' results on the tasks of
ChemTEB(paper) (36 task files: the 35 scored tasks plus the release's extra one). The scores
are random: never read them as anything but a load test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from chemteb_eval.results.board import DETAIL_KEYS
from chemteb_eval.tasks import get_benchmark, list_tasks

__all__ = ["write_synthetic_mteb_scores", "write_synthetic_results"]


def write_synthetic_results(
    out: str | Path,
    *,
    n_models: int = 100,
    benchmark: str = "ChemTEB(paper)",
    seed: int = 0,
    incomplete: int = 0,
    malformed: int = 0,
) -> Path:
    """Write ``n_models`` model folders with a result file per task of ``benchmark``'s collection.

    Args:
        out: the results folder to write.
        n_models: how many models.
        benchmark: whose task collection to cover.
        seed: random seed.
        incomplete: how many of the models lack one task (they must be ranked apart).
        malformed: how many extra broken files to add (the page must list and skip them).

    Returns:
        ``out``.
    """
    rng = np.random.default_rng(seed)
    # the tokenization blocks draw from their own generator: the scores stay what they were
    cuts = np.random.default_rng(seed + 1)
    bench = get_benchmark(benchmark)
    tasks = list_tasks(bench.collection)
    out = Path(out)
    for i in range(n_models):
        folder = out / f"synthetic-org{i % 7}__model-{i:03d}" / ("0" * 40)
        folder.mkdir(parents=True, exist_ok=True)
        skill = rng.uniform(0.3, 0.8)
        meta = {
            "name": f"synthetic-org{i % 7}/model-{i:03d}",
            "revision": "0" * 40,
            "n_parameters": int(rng.lognormal(18.5, 1.2)),
            "embedding_dim": int(rng.choice([256, 384, 768, 1024, 1536, 3072])),
            "max_tokens": int(rng.choice([512, 8192])),
            "open_weights": bool(rng.random() < 0.7),
            "framework": "synthetic",
            "source": "synthetic",
        }
        (folder / "model_meta.json").write_text(json.dumps(meta))
        skip = {tasks[int(rng.integers(len(tasks)))].name} if i < incomplete else set()
        per_smiles, unknown = float(cuts.uniform(15, 80)), float(cuts.choice([0.0, 0.02, 0.19]))
        for task in tasks:
            if task.name in skip:
                continue
            scores = {}
            for split in task.eval_splits:
                entry: dict[str, object] = {"hf_subset": "default", "languages": ["eng-Latn"]}
                for key in DETAIL_KEYS[task.type]:
                    entry[key] = float(np.clip(skill + rng.normal(0, 0.1), 0, 1))
                entry["main_score"] = entry[task.main_score]
                scores[split] = [entry]
            payload = {
                "task_name": task.name,
                "dataset_revision": task.revision,
                "evaluation_time": float(rng.uniform(1, 60)),
                "mteb_version": "synthetic",
                "scores": scores,
                # the run's tokenization block (issue 48): the Space's Tokenization tab
                "chemistry": {
                    "smiles": {
                        "strings": 100,
                        "mean_tokens": per_smiles,
                        "p95_tokens": 2 * per_smiles,
                        "unk_share": unknown,
                        "cut_share": 0.0,
                    },
                    "text": {
                        "strings": 100,
                        "mean_tokens": 40.0,
                        "p95_tokens": 90.0,
                        "unk_share": 0.0,
                        "cut_share": 0.0,
                    },
                },
            }
            (folder / f"{task.name}.json").write_text(json.dumps(payload))
    for j in range(malformed):
        folder = out / f"synthetic-broken__model-{j}" / ("0" * 40)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{tasks[j % len(tasks)].name}.json").write_text("{ not json")
    return out


def write_synthetic_mteb_scores(
    path: str | Path, *, n_models: int = 100, seed: int = 0, missing: int = 0
) -> Path:
    """Write general-domain scores for ``write_synthetic_results``'s models in
    ``mteb_eng_v1_scores.csv``'s columns: two made-up tasks per task type both benchmarks have
    (named ``Synthetic<Type><n>``, never a real MTEB task), each score the model's ChemTEB skill
    plus noise. The first ``missing`` models lack one classification task.

    Returns:
        ``path``.
    """
    from chemteb_eval.results.domains import DOMAIN_TYPES

    rng = np.random.default_rng(seed)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ["model_id,task,task_type,split,main_score"]
    for i in range(n_models):
        model = f"synthetic-org{i % 7}/model-{i:03d}"
        skill = rng.uniform(0.3, 0.8)
        for kind in DOMAIN_TYPES:
            for n in (1, 2):
                if i < missing and kind == DOMAIN_TYPES[0] and n == 2:  # the first type
                    continue
                score = float(np.clip(skill + rng.normal(0, 0.1), 0, 1))
                lines.append(f"{model},Synthetic{kind}{n},{kind},test,{score:.6f}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--benchmark", default="ChemTEB(paper)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    write_synthetic_results(
        args.out, n_models=args.models, benchmark=args.benchmark, seed=args.seed
    )
    print(f"wrote {args.models} synthetic models to {args.out}")


if __name__ == "__main__":
    main()
