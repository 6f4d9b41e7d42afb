"""The ONNX Runtime backend and token-budget batches against torch (issue 16), on PipChem.

    python benchmarks/bench_onnx.py encode     # throughput and vector differences (~3 min)
    python benchmarks/bench_onnx.py scores     # full PipChem runs, cold, per backend (~12 min)

``encode``: 1,500 PipChem texts (500 SMILES, 500 names, 500 Wikipedia leads), all-MiniLM-L6-v2,
batch size 32, each configuration timed twice in one process (best of two): torch with fixed
batches of 32 (the engine before this issue), torch with token-budget batches, ONNX Runtime and
ONNX Runtime int8 with token-budget batches. Ratios are against the first, in the same run.

``scores``: `chemteb run` on all seven PipChem tasks with no embedding cache, once per backend
(torch with fixed batches, torch, onnx, onnx-int8): wall time and main scores to 6 decimals, and
the largest main-score difference from torch. Writes benchmarks/out/onnx_<part>.md.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
OUT = Path(__file__).parent / "out"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


class FixedBatches:
    """An encoder as the engine saw them before token budgets: no token lengths, so the engine
    cuts batch_size texts per call (length-sorted by characters)."""

    def __init__(self, encoder: Any) -> None:
        self.inner = encoder
        self.meta = encoder.meta

    def prompt(self, task_type: str, role: Any) -> str:
        return str(self.inner.prompt(task_type, role))

    def encode(self, texts: list[str], *, prompt: str, batch_size: int) -> Any:
        return self.inner.encode(texts, prompt=prompt, batch_size=batch_size)


def pipchem_texts(n: int = 500, seed: int = 0) -> list[str]:
    import datasets

    from chemteb_eval.data import pipchem

    root = pipchem.ensure_built("full")
    bm = datasets.load_dataset(str(root / "PipChemSMILESNameBM"), split="test")
    wiki = datasets.load_dataset(str(root / "PipChemWikiRetrieval"), "corpus", split="corpus")
    rng = random.Random(seed)
    smiles = rng.sample(list(bm["canonical_smiles"]), n)
    names = rng.sample(list(bm["title"]), n)
    leads = rng.sample(list(wiki["text"]), n)
    return smiles + names + leads


def encode_part() -> list[str]:
    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.models import load_encoder

    texts = pipchem_texts()
    torch_encoder = load_encoder(MODEL, backend="torch")
    configs = {
        "torch, fixed batches of 32": FixedBatches(torch_encoder),
        "torch, token-budget batches": torch_encoder,
        "onnx, token-budget batches": load_encoder(MODEL, backend="onnx"),
        "onnx-int8, each text alone": load_encoder(MODEL, backend="onnx-int8"),
    }
    results: dict[str, tuple[float, np.ndarray]] = {}
    for _ in range(2):  # two rounds, best of two: the first warms caches and thread pools
        for name, encoder in configs.items():
            engine = EmbeddingEngine(encoder, None, batch_size=32, progress=False)
            started = time.perf_counter()
            engine.prefetch(("", t) for t in texts)
            seconds = time.perf_counter() - started
            vectors = engine.embed(texts, "")
            if name not in results or seconds < results[name][0]:
                results[name] = (seconds, vectors)
    base_seconds, base = results["torch, fixed batches of 32"]
    lines = [
        f"all-MiniLM-L6-v2, {len(texts)} PipChem texts (500 SMILES, 500 names, 500 Wikipedia "
        f"leads), batch size 32, {os.cpu_count()} CPU cores, best of two rounds.",
        "",
        "| configuration | seconds | texts/s | speed-up | largest abs. difference from torch |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (seconds, vectors) in results.items():
        diff = float(np.max(np.abs(vectors - base)))
        lines.append(
            f"| {name} | {seconds:.1f} | {len(texts) / seconds:.0f} | "
            f"{base_seconds / seconds:.2f}x | {diff:.1e} |"
        )
    return lines


def scores_part() -> list[str]:
    from chemteb_eval.models import load_encoder
    from chemteb_eval.runner import run

    runs: dict[str, tuple[float, dict[str, float]]] = {}
    for name, backend in (
        ("torch, fixed batches", "fixed"),
        ("torch", "torch"),
        ("onnx", "onnx"),
        ("onnx-int8", "onnx-int8"),
    ):
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["CHEMTEB_ONNX_DIR"] = str(Path(tmp) / "onnx")  # the export counts too
            started = time.perf_counter()
            model: Any = MODEL
            if backend == "fixed":
                model = FixedBatches(load_encoder(MODEL, backend="torch"))
            report = run(
                model,
                benchmark="PipChem",
                output_dir=Path(tmp) / "out",
                backend="torch" if backend == "fixed" else backend,
                use_cache=False,
                progress=False,
                log=lambda _: None,
            )
            runs[name] = (time.perf_counter() - started, dict(report.main_scores))
            print(name, f"{runs[name][0]:.1f} s", flush=True)
    names = list(runs["torch"][1])
    header = " | ".join(runs)
    lines = [
        "all-MiniLM-L6-v2, `chemteb run` on the seven PipChem tasks (full scale), no embedding "
        f"cache, {os.cpu_count()} CPU cores; the ONNX runs include the export (into an empty folder).",
        "",
        f"| | {header} |",
        "|---|" + "---:|" * len(runs),
        "| wall time (s) | " + " | ".join(f"{s:.1f}" for s, _ in runs.values()) + " |",
        "| speed-up vs torch, fixed batches | "
        + " | ".join(f"{runs['torch, fixed batches'][0] / s:.2f}x" for s, _ in runs.values())
        + " |",
    ]
    for task in names:
        lines.append(
            f"| {task} | " + " | ".join(f"{scores[task]:.6f}" for _, scores in runs.values()) + " |"
        )
    torch_scores = runs["torch"][1]
    lines.append(
        "| largest main-score difference from torch | "
        + " | ".join(
            f"{max(abs(scores[t] - torch_scores[t]) for t in names):.1e}"
            for _, scores in runs.values()
        )
        + " |"
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("part", choices=["encode", "scores"])
    args = parser.parse_args()
    lines = encode_part() if args.part == "encode" else scores_part()
    OUT.mkdir(exist_ok=True)
    (OUT / f"onnx_{args.part}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
