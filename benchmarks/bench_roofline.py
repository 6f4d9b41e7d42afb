"""How close the encoder runs to this CPU's limit (issue 50): in one process, this CPU's
matrix-product peak at the model's own shapes, and the encoder's achieved rate on PipChem texts,
in float32 and bfloat16.

- **Peak**: ``torch.mm`` of a call's shapes (``TOKENS_PER_CALL`` rows: the projections
  ``h x h``, ``h x I`` and ``I x h`` of all-MiniLM-L6-v2), each on one thread as the engine's
  calls run, on every one of torch's threads side by side (one product per thread, as many
  at once as the engine runs calls); best of 5, GFLOP/s over all of them.
- **Achieved**: the engine (equal-length calls, one thread each, side by side; no cache)
  encodes 1,500 PipChem texts (``bench_onnx.pipchem_texts``: SMILES, names, Wikipedia
  leads); FLOPs counted from the model's config for each text's own length (the linear layers,
  ``2 n (4 h^2 + 2 h I)`` a layer, and attention's two products, ``4 n^2 h`` a layer), the
  filled rows of a short call included; GFLOP/s = FLOPs / encode seconds.
- **Share** = achieved / peak, for each dtype. Recorded with the CPU's flags, torch's version
  and threads.
- **Where the time goes**: the same calls run one after another on one thread under
  ``torch.profiler``; each operator family's share of the self CPU time (the products, the
  attention kernel, GELU, LayerNorm, copies, the rest).

Usage: python benchmarks/bench_roofline.py [--per-group 500] [--no-record]
Writes benchmarks/out/roofline.json and docs/figures.json["roofline"].
"""

from __future__ import annotations

import argparse
import threading
import time
from typing import Any

from _figures import publish

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def peak(dtype: Any, rows: int, hidden: int, inner: int, threads: int) -> float:
    """GFLOP/s of the call's three projection shapes, one product per thread, ``threads``
    at once, each thread on one torch thread (the engine's way); best of 5."""
    import torch

    shapes = [(rows, hidden, hidden), (rows, hidden, inner), (rows, inner, hidden)]
    flops = sum(2 * m * k * n for m, k, n in shapes)
    operands = [
        [(torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)) for m, k, n in shapes]
        for _ in range(threads)
    ]

    def work(pairs: list[Any], repeat: int) -> None:
        torch.set_num_threads(1)
        for _ in range(repeat):
            for a, b in pairs:
                torch.mm(a, b)

    repeat = 20
    # before the warm-up, which sets this (main) thread's count to 1: saved after it, the count
    # was "restored" to 1 and the encoder's achieved rate was then measured one call at a time
    # (2026-12-03's first two records: the engine's calls ran one at a time)
    saved = torch.get_num_threads()
    best = float("inf")
    try:
        work(operands[0], 2)  # warm the kernels
        for _ in range(5):
            pool = [threading.Thread(target=work, args=(p, repeat)) for p in operands]
            started = time.perf_counter()
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            best = min(best, time.perf_counter() - started)
    finally:
        torch.set_num_threads(saved)
    return flops * repeat * threads / best / 1e9


def model_flops(encoder: Any, texts: list[str]) -> tuple[float, int]:
    """FLOPs of the encoder's calls on ``texts`` (each text at its own token length, the rows
    a short call is filled with counted too), from the model's config; and the tokens."""
    from chemteb_eval.engine.encode import call_rows, equal_length_batches

    config = encoder.model[0].auto_model.config
    h, inner, layers = config.hidden_size, config.intermediate_size, config.num_hidden_layers
    lengths = sorted(encoder.token_lengths(texts, prompt=""), reverse=True)
    total = 0.0
    for batch in equal_length_batches(lengths):
        n = lengths[batch.start]
        rows = call_rows(n, len(batch))
        per_text = layers * (2 * n * (4 * h * h + 2 * h * inner) + 4 * n * n * h)
        total += rows * per_text
    return total, int(sum(lengths))


FAMILIES = {
    "aten::addmm": "matrix products",
    "aten::mm": "matrix products",
    "aten::bmm": "matrix products",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "attention",
    "aten::gelu": "GELU",
    "aten::native_layer_norm": "LayerNorm",
    "aten::copy_": "copies",
    "aten::add": "residual adds",
}


def op_shares(encoder: Any, texts: list[str]) -> dict[str, float]:
    """Each operator family's share (%) of the self CPU time of the engine's calls on
    ``texts``, run one after another on one thread (the profiler sees one thread)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from chemteb_eval.engine.encode import call_rows, equal_length_batches

    lengths = encoder.token_lengths(texts, prompt="")
    order = sorted(range(len(texts)), key=lambda i: -lengths[i])
    ranked = [texts[i] for i in order]
    calls = []
    for batch in equal_length_batches([lengths[i] for i in order]):
        group = ranked[batch.start : batch.stop]
        rows = call_rows(lengths[order[batch.start]], len(group))
        calls.append(encoder.prepare((group * rows)[:rows], prompt=""))
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for call in calls:
                encoder.run(call)
    finally:
        torch.set_num_threads(saved)
    spent: dict[str, float] = {}
    for event in prof.key_averages():
        family = FAMILIES.get(event.key, "the rest")
        spent[family] = spent.get(family, 0.0) + event.self_cpu_time_total
    total = sum(spent.values())
    return {k: round(100 * v / total, 1) for k, v in sorted(spent.items(), key=lambda kv: -kv[1])}


def achieved(encoder: Any, texts: list[str], flops: float) -> tuple[float, float]:
    """The engine's encode seconds on ``texts`` (no cache; best of 2) and its GFLOP/s, for
    the ``flops`` its calls run (``model_flops``)."""
    from chemteb_eval.engine import EmbeddingEngine

    best = float("inf")
    for _ in range(2):
        engine = EmbeddingEngine(encoder, None, progress=False)
        started = time.perf_counter()
        engine.prefetch(("", t) for t in texts)
        best = min(best, time.perf_counter() - started)
    return best, flops / best / 1e9


def measure(per_group: int) -> dict[str, Any]:
    import torch
    from bench_onnx import pipchem_texts

    from chemteb_eval.engine.encode import TOKENS_PER_CALL
    from chemteb_eval.models import load_encoder

    texts = pipchem_texts(per_group)
    threads = torch.get_num_threads()
    out: dict[str, Any] = {
        "torch": torch.__version__,
        "threads": threads,
        "texts": len(texts),
        "rows_per_product": TOKENS_PER_CALL,
    }
    for name in ("float32", "bfloat16"):
        encoder = load_encoder(MODEL, device="cpu", precision=name, log=lambda _: None)
        config = encoder.model[0].auto_model.config
        dtype = getattr(torch, name)
        top = peak(dtype, TOKENS_PER_CALL, config.hidden_size, config.intermediate_size, threads)
        if torch.get_num_threads() != threads:  # the engine's calls must run as in a run
            raise SystemExit(f"peak() left torch at {torch.get_num_threads()} threads")
        flops, tokens = model_flops(encoder, texts)
        seconds, rate = achieved(encoder, texts, flops)
        shares = op_shares(encoder, texts)
        out[name] = {
            "peak_gflops": round(top, 1),
            "achieved_gflops": round(rate, 1),
            "share_of_peak_pct": round(100 * rate / top, 1),
            "encode_s": round(seconds, 2),
            "tokens": tokens,
            "gflop": round(flops / 1e9, 1),
            "tokens_per_s": round(tokens / seconds),
            "time_shares_pct": shares,
        }
    out["bfloat16_over_float32_peak"] = round(
        out["bfloat16"]["peak_gflops"] / out["float32"]["peak_gflops"], 2
    )
    out["bfloat16_over_float32_encode"] = round(
        out["float32"]["encode_s"] / out["bfloat16"]["encode_s"], 2
    )
    out["float32_share_of_peak_pct"] = out["float32"]["share_of_peak_pct"]
    out["bfloat16_share_of_peak_pct"] = out["bfloat16"]["share_of_peak_pct"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-group", type=int, default=500)
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json be")
    args = parser.parse_args()
    publish("roofline", measure(args.per_group), to_docs=not args.no_record)


if __name__ == "__main__":
    main()
