"""The CUDA paths, checked on a lent GPU (issue 16): fp16/bf16 encoding, batching on a GPU (fixed
batches, the engine's default there, and token-budget batches forced), `--backend auto` choosing
torch there, and the ONNX backend refusing CUDA. Issue 30 adds `pipeline`: for MiniLM and a
BERT-base-sized encoder, texts/s of the engine (`chemteb run`'s: dedup, the pipelined host side,
one copy back) against the model's forward pass alone on pre-tokenised batches, at the best
batch size, in float32 and float16 (targets: engine >= 80% of forward-only; MiniLM float16 >=
60,000 texts/s on an H200).

    python benchmarks/gpu_check.py MODEL_FOLDER [--out gpu_check.json] [--device cuda]
    python benchmarks/gpu_check.py MODEL_FOLDER --device cpu --texts 256   # the script itself

Issue 60 adds `--world`: the engine's texts/s per GPU under torchrun at world size 1 and N (every
GPU; `--gpus`), each rank encoding its share into one fresh cache folder, over `--world-texts`
(default 100,000) distinct texts in float32, float16 and bfloat16 — what `chemteb submit
--flavor h200x8` pays for, per GPU:

    python benchmarks/gpu_check.py MODEL_FOLDER --world [--gpus 8]
    python benchmarks/gpu_check.py MODEL_FOLDER --world --device cpu --gpus 2 --world-texts 2000

The larger encoder is built by the script, not downloaded: BERT-base's architecture (12 layers,
768-d, 110M parameters) with random weights and MiniLM's tokenizer (the same uncased vocabulary),
mean-pooled: its speed is the architecture's, its vectors mean nothing.

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


def bert_base(minilm: str, folder: Path) -> str:
    """A BERT-base-sized sentence encoder, random weights, saved to ``folder``."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(minilm)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size)).save_pretrained(folder / "bert")
    tokenizer.save_pretrained(folder / "bert")
    word = models.Transformer(str(folder / "bert"), max_seq_length=256)
    dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pooling = models.Pooling(dim(), "mean")
    SentenceTransformer(modules=[word, pooling]).save(str(folder / "st"))
    return str(folder / "st")


def forward_only(encoder: Any, corpus: list[str], batch_size: int, device: str) -> float:
    """Texts/s of the model's forward pass alone: batches tokenised and moved beforehand."""
    import torch
    from sentence_transformers.util import batch_to_device

    model = encoder.model
    ordered = sorted(corpus, key=len, reverse=True)  # the engine's length order
    batches = [
        batch_to_device(model.preprocess(ordered[i : i + batch_size]), model.device)
        for i in range(0, len(ordered), batch_size)
    ]
    best = float("inf")
    for _ in range(3):
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        with torch.inference_mode():
            for features in batches:
                model(features)
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - started)
    return len(corpus) / best


def engine_rate(encoder: Any, corpus: list[str], batch_size: int, device: str) -> float:
    import torch

    from chemteb_eval.engine import EmbeddingEngine

    best = float("inf")
    for _ in range(3):
        engine = EmbeddingEngine(encoder, None, batch_size=batch_size, progress=False)
        if device == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        engine.prefetch(("", t) for t in corpus)
        engine.embed(corpus, "")
        best = min(best, time.perf_counter() - started)
    return len(corpus) / best


def pipeline(model: str, corpus: list[str], device: str, sizes: tuple[int, ...]) -> dict[str, Any]:
    """Engine against forward-only, per model and precision, at the best batch size."""
    import tempfile

    import torch

    from chemteb_eval.models.sentence_transformers import SentenceTransformerEncoder

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        models_ = {
            "all-MiniLM-L6-v2": model,
            "bert-base (random weights)": bert_base(model, Path(tmp)),
        }
        precisions = ("float32", "float16") if device == "cuda" else ("float32",)
        for name, folder in models_.items():
            for precision in precisions:
                encoder = SentenceTransformerEncoder(folder, device=device, precision=precision)
                rates = {b: forward_only(encoder, corpus, b, device) for b in sizes}
                best = max(rates, key=rates.__getitem__)
                engine = engine_rate(encoder, corpus, best, device)
                out[f"{name}/{precision}"] = {
                    "pipelined": encoder.pipelined,
                    "forward_only_texts_per_s": {str(b): round(r) for b, r in rates.items()},
                    "best_batch": best,
                    "engine_texts_per_s": round(engine),
                    "engine_share_of_forward": round(engine / rates[best], 3),
                }
                del encoder
                if device == "cuda":
                    torch.cuda.empty_cache()
    return out


def world_worker(model: str, n: int, precision: str, cache: str, device: str) -> None:
    """One rank of ``--world``: the engine over ``n`` distinct texts into the shared ``cache``
    (each rank its share, one barrier at the end); rank 0 prints the run's texts/s."""
    import os

    import torch

    from chemteb_eval.engine import EmbeddingEngine
    from chemteb_eval.engine.cache import EmbeddingCache
    from chemteb_eval.models.sentence_transformers import SentenceTransformerEncoder

    local = int(os.environ.get("LOCAL_RANK", "0"))
    on = f"cuda:{local}" if device == "cuda" else "cpu"
    encoder = SentenceTransformerEncoder(model, device=on, precision=precision)
    corpus = [f"{t} {i}" for i, t in enumerate(texts(n, seed=1))]
    store = EmbeddingCache(Path(cache), "gpu-check", precision, "-")
    batch = 256 if device == "cuda" else 16
    engine = EmbeddingEngine(encoder, store, batch_size=batch, progress=False)
    if device == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    engine.prefetch(("", t) for t in corpus)
    engine.finish_ranks()
    wall = time.perf_counter() - started
    if os.environ.get("RANK", "0") == "0":
        done = {"texts": engine.stats.encoded, "wall_s": wall, "encode_s": engine.stats.seconds}
        print("WORLD " + json.dumps(done))


def world(model: str, n: int, device: str, gpus: int) -> dict[str, Any]:
    """Texts/s per GPU at world size 1 and ``gpus``, per precision (a fresh cache each)."""
    import shutil
    import subprocess
    import tempfile

    torchrun = shutil.which("torchrun", path=str(Path(sys.executable).parent)) or "torchrun"
    out: dict[str, Any] = {"texts": n, "gpus": gpus}
    precisions = ("float32", "float16", "bfloat16") if device == "cuda" else ("float32",)
    for precision in precisions:
        for size in sorted({1, gpus}):
            with tempfile.TemporaryDirectory() as cache:
                cmd = [torchrun, "--standalone", f"--nproc_per_node={size}", __file__, model,
                       "--world-worker", cache, "--world-texts", str(n),
                       "--precision", precision, "--device", device]  # fmt: skip
                proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            line = [x for x in proc.stdout.splitlines() if x.startswith("WORLD ")]
            if proc.returncode != 0 or not line:
                out[f"{precision}/world{size}"] = {"failed": proc.stderr[-1500:]}
                continue
            done = json.loads(line[0][len("WORLD ") :])
            rate = done["texts"] / done["wall_s"]
            out[f"{precision}/world{size}"] = {
                **done,
                "texts_per_s": round(rate),
                "texts_per_s_per_gpu": round(rate / size),
            }
        one, many = out.get(f"{precision}/world1", {}), out.get(f"{precision}/world{gpus}", {})
        if gpus > 1 and "texts_per_s" in one and "texts_per_s" in many:
            out[f"{precision}/scaling"] = round(many["texts_per_s"] / one["texts_per_s"] / gpus, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--texts", type=int, default=4000)
    parser.add_argument("--world", action="store_true", help="texts/s per GPU at world 1 and N")
    parser.add_argument("--gpus", type=int, help="N for --world (default: every GPU)")
    parser.add_argument("--world-texts", type=int, default=100_000)
    parser.add_argument("--world-worker", metavar="CACHE", help=argparse.SUPPRESS)
    parser.add_argument("--precision", default="float32", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.world_worker:
        world_worker(args.model, args.world_texts, args.precision, args.world_worker, args.device)
        return
    import torch

    if args.world:
        gpus = args.gpus or (torch.cuda.device_count() if args.device == "cuda" else 2)
        report = {
            "device": args.device,
            "world": world(args.model, args.world_texts, args.device, gpus),
        }
        if args.device == "cuda":
            report["gpu"] = torch.cuda.get_device_name(0)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        return

    if args.device == "cpu":  # the script checked on a machine without a GPU: pipeline only
        corpus = texts(args.texts)
        report = {"device": "cpu", "pipeline": pipeline(args.model, corpus, "cpu", (16, 64))}
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(json.dumps(report, indent=2))
        return

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
    report["pipeline"] = pipeline(args.model, corpus, "cuda", (64, 128, 256, 512, 1024))
    text = json.dumps(report, indent=2)
    args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
