"""What one thread per call costs (issue 46): calls side by side, each on one thread, against
one call at a time on all of torch's threads (the engine of before).

A vector's bits must not depend on the cores, the thread count or the load: a product split
over threads may sum in another order for another row count (models/_threads.py). The engine
now runs each CPU call on one thread and as many calls at once as torch had threads. This
measures, in one process, the texts/s of both ways on the same PipChem texts (500 SMILES, 500
names, 500 Wikipedia leads; all-MiniLM-L6-v2, float32, no cache, the same equal-length calls),
alternating their order over the repeats and keeping the best of each; and checks the claim:
the vectors are bit-identical to those of the same calls run one at a time on one thread, and
to every text's vector in a call of 1, 4 and 16 texts of its length.

Usage: python benchmarks/bench_threads.py [--repeat 3] [--per-group 500]
Writes benchmarks/out/threads.json and docs/figures.json["threads"].
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.engine.encode import call_rows


class AllThreadsEngine(EmbeddingEngine):
    """The engine of before: one call at a time, on all of torch's threads."""

    def _run_calls(self, *args: Any, **kwargs: Any) -> None:
        encoder = self.encoder
        saved = encoder.one_thread_per_call  # type: ignore[attr-defined]
        try:
            encoder.one_thread_per_call = lambda: contextlib.nullcontext(1)  # type: ignore[attr-defined]
            super()._run_calls(*args, **kwargs)
        finally:
            encoder.one_thread_per_call = saved  # type: ignore[attr-defined]


def encode(cls: type[EmbeddingEngine], encoder: Any, texts: list[str]) -> tuple[float, Any]:
    engine = cls(encoder, None, batch_size=32, progress=False)
    started = time.perf_counter()
    engine.prefetch(("", t) for t in texts)
    return time.perf_counter() - started, engine.embed(texts, "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-group", type=int, default=500)
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json")
    args = parser.parse_args()
    import torch
    from bench_onnx import pipchem_texts

    from chemteb_eval.models import load_encoder

    encoder: Any = load_encoder("sentence-transformers/all-MiniLM-L6-v2", backend="torch")
    texts = pipchem_texts(args.per_group)
    threads = torch.get_num_threads()
    best = {"one thread per call": float("inf"), "all threads per call": float("inf")}
    vectors: dict[str, Any] = {}
    for i in range(args.repeat):
        pair = [
            ("one thread per call", EmbeddingEngine),
            ("all threads per call", AllThreadsEngine),
        ]
        for name, cls in pair if i % 2 == 0 else pair[::-1]:
            seconds, vectors[name] = encode(cls, encoder, texts)
            best[name] = min(best[name], seconds)
    torch.set_num_threads(1)  # the same calls, one at a time, on one thread
    try:
        _, serial = encode(AllThreadsEngine, encoder, texts)
        lengths = encoder.token_lengths(texts, prompt="")
        by_length: dict[int, list[int]] = {}
        for j, n in enumerate(lengths):
            by_length.setdefault(n, []).append(j)
        rows_equal = True
        # every text in a call of `rows` texts of its length, filled as the engine fills a call
        # (call_rows: at least MIN_CALL_TOKENS positions). Unfilled, a call of one 15-token
        # text runs another GEMM kernel on an Intel Xeon (AVX-512) and gives other bits: this
        # check compared such calls until 2026-12-03 and read "not identical" there.
        for rows in (1, 4, 16):
            for length, members in by_length.items():
                for s in range(0, len(members), rows):
                    chunk = members[s : s + rows]
                    fill = call_rows(length, len(chunk))
                    call = ([texts[j] for j in chunk] * fill)[:fill]
                    got = encoder.encode(call, prompt="", batch_size=fill)[: len(chunk)]
                    rows_equal &= bool(np.array_equal(got, vectors["one thread per call"][chunk]))
    finally:
        torch.set_num_threads(threads)
    ratio = best["one thread per call"] / best["all threads per call"]
    report = {
        "texts": len(texts),
        "torch_threads": threads,
        "seconds": best,
        "texts_per_second": {k: len(texts) / v for k, v in best.items()},
        "one_thread_over_all_threads_time": ratio,
        "equal_to_serial_one_thread": bool(np.array_equal(vectors["one thread per call"], serial)),
        "equal_in_calls_of_1_4_16": rows_equal,
    }
    out = Path(__file__).parent / "out" / "threads.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))
    if not args.no_record:
        from _figures import record

        record(
            "threads",
            {
                "texts": len(texts),
                "torch_threads": threads,
                "one_thread_over_all_threads_time": round(ratio, 2),
                "one_thread_texts_per_second": round(len(texts) / best["one thread per call"]),
                "all_threads_texts_per_second": round(len(texts) / best["all threads per call"]),
                "bit_identical": report["equal_to_serial_one_thread"] and rows_equal,
            },
        )


if __name__ == "__main__":
    main()
