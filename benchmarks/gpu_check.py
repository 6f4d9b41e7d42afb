"""The CUDA paths, checked on a lent GPU (issue 16): fp16/bf16 encoding, batching on a GPU (fixed
batches, the engine's default there, and token-budget batches forced), `--backend auto` choosing
torch there, and the ONNX backend refusing CUDA.

    python benchmarks/gpu_check.py MODEL_FOLDER [--out gpu_check.json]

Needs only torch, sentence-transformers and numpy (a CUDA image has them; chemteb-eval's
datasets-based rooms are not imported). MODEL_FOLDER is a sentence-transformers folder; the check
that was run used all-MiniLM-L6-v2 saved with fp16 weights (46 MB, small enough to carry), which
the float32 run upcasts. Prints and writes a JSON report.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def texts(n: int = 4000, seed: int = 0) -> list[str]:
    """Chemistry-like texts of very different lengths: SMILES-like strings, names, sentences."""
    rng = random.Random(seed)
    atoms = ["C", "c1", "O", "N", "(=O)", "Cl", "Br", "S", "c", "1", "[N+]", "F"]
    words = "acid ester benzene ring solvent reaction yield catalyst polymer oxidation".split()
    out = []
    for i in range(n):
        kind = i % 3
        if kind == 0:
            out.append("".join(rng.choice(atoms) for _ in range(rng.randint(3, 60))))
        elif kind == 1:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 4))))
        else:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(20, 220))) + ".")
    return out


class FixedBatches:
    def __init__(self, encoder: Any) -> None:
        self.inner, self.meta = encoder, encoder.meta

    def prompt(self, task_type: str, role: Any) -> str:
        return ""

    def encode(self, batch: list[str], *, prompt: str, batch_size: int) -> Any:
        return self.inner.encode(batch, prompt=prompt, batch_size=batch_size)


class ForcedBudget(FixedBatches):
    """Token-budget batches even on the GPU (what the engine did before it asked the backend)."""

    token_budget = True

    def token_lengths(self, batch: list[str], *, prompt: str) -> list[int]:
        return list(self.inner.token_lengths(batch, prompt=prompt))


def timed(encoder: Any, corpus: list[str], batch_size: int = 64) -> tuple[float, np.ndarray]:
    import torch

    from chemteb_eval.engine import EmbeddingEngine

    best, vectors = float("inf"), np.zeros(0)
    for _ in range(3):  # the first warms CUDA up
        engine = EmbeddingEngine(encoder, None, batch_size=batch_size, progress=False)
        torch.cuda.synchronize()
        started = time.perf_counter()
        engine.prefetch(("", t) for t in corpus)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - started)
        vectors = engine.embed(corpus, "")
    return best, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    args = parser.parse_args()
    import torch

    from chemteb_eval.models import load_encoder
    from chemteb_eval.models.sentence_transformers import SentenceTransformerEncoder

    report: dict[str, Any] = {
        "gpu": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    corpus = texts()
    auto = load_encoder(args.model, backend="auto", log=lambda _: None)
    report["auto_backend_on_cuda"] = auto.meta.framework
    try:
        load_encoder(f"onnx:{args.model}", device="cuda")
        report["onnx_on_cuda"] = "accepted (wrong)"
    except ValueError as exc:
        report["onnx_on_cuda"] = f"refused: {exc}"
    runs = {}
    base = None
    for precision in ("float32", "float16", "bfloat16"):
        encoder = SentenceTransformerEncoder(args.model, device="cuda", precision=precision)
        dtype = str(next(encoder.model.parameters()).dtype)
        configs = (
            ("fixed", FixedBatches(encoder)),
            ("default", encoder),  # the engine's choice: the backend says no budget on a GPU
            ("budget", ForcedBudget(encoder)),
        )
        for batching, wrapped in configs:
            seconds, vectors = timed(wrapped, corpus)
            if base is None:
                base = vectors
            cos = np.sum(base * vectors, axis=1) / (
                np.linalg.norm(base, axis=1) * np.linalg.norm(vectors, axis=1)
            )
            runs[f"{precision}/{batching}"] = {
                "weights_dtype": dtype,
                "seconds": round(seconds, 3),
                "texts_per_s": round(len(corpus) / seconds),
                "max_abs_diff_vs_fp32_fixed": float(np.max(np.abs(vectors - base))),
                "min_cosine_vs_fp32_fixed": float(cos.min()),
            }
        del encoder
        torch.cuda.empty_cache()
    report["runs"] = runs
    text = json.dumps(report, indent=2)
    args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
