"""What batch-invariant vectors cost (issue 35): equal-length calls against padded batches.

The engine now runs a local model on a CPU in calls of one token length, unpadded, each filled
to at least 64 positions, so that a text's vector never depends on the other texts of a run.
This measures, in one process, the texts/s of those calls against the token-budget batches of
before (texts of mixed lengths padded to the batch's longest, ``token_budget_batches``), on the
same PipChem texts (500 SMILES, 500 names, 500 Wikipedia leads), all-MiniLM-L6-v2, float32,
no cache; the order of the two is alternated over the repeats, and the best of each is kept.
Beside them, plain sentence-transformers (``SentenceTransformer.encode`` on the same texts,
batch size 32, torch's own threads): what a user gets without this tool.
It also checks the claim: each text's vector from the equal-length calls equals, bit for bit,
its vector in a run of that text alone; the padded batches' differ (by how much is reported).

Usage: python benchmarks/bench_batching.py [--repeat 3] [--per-group 500] [--record]
Writes benchmarks/out/batching.json (``--record``: docs/figures.json['batching'] too).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from _figures import publish

from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.engine.encode import token_budget_batches


class PaddedEngine(EmbeddingEngine):
    """The engine with the batches of before: mixed lengths, padded to each batch's longest."""

    def _batches(
        self, group: list[str], unique: dict[str, tuple[str, str]], prompt: str
    ) -> list[tuple[list[str], int]]:
        lengths = self.encoder.token_lengths([unique[k][1] for k in group], prompt=prompt)  # type: ignore[attr-defined]
        order = sorted(range(len(group)), key=lambda i: (-lengths[i], -len(unique[group[i]][1])))
        ranked = [group[i] for i in order]
        sizes = token_budget_batches([lengths[i] for i in order], self.batch_size)
        return [(ranked[r.start : r.stop], len(r)) for r in sizes]


def encode(
    engine_class: type[EmbeddingEngine], encoder: Any, texts: list[str]
) -> tuple[float, Any]:
    engine = engine_class(encoder, None, batch_size=32, progress=False)
    started = time.perf_counter()
    engine.prefetch(("", t) for t in texts)
    seconds = time.perf_counter() - started
    return seconds, engine.embed(texts, "")


def plain(encoder: Any, texts: list[str]) -> tuple[float, Any]:
    """``SentenceTransformer.encode`` as a user calls it: its own length sort and batches."""
    started = time.perf_counter()
    vectors = encoder.model.encode(texts, batch_size=32, convert_to_numpy=True)
    return time.perf_counter() - started, vectors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-group", type=int, default=500)
    parser.add_argument("--record", action="store_true", help="docs/figures.json too")
    args = parser.parse_args()
    from bench_onnx import pipchem_texts

    from chemteb_eval.models import load_encoder

    encoder = load_encoder("sentence-transformers/all-MiniLM-L6-v2", backend="torch")
    texts = pipchem_texts(args.per_group)
    lengths = encoder.token_lengths(texts, prompt="")  # type: ignore[attr-defined]
    best = dict.fromkeys(("equal-length", "padded", "sentence-transformers"), float("inf"))
    vectors: dict[str, Any] = {}
    runs: list[tuple[str, Any]] = [
        ("equal-length", lambda: encode(EmbeddingEngine, encoder, texts)),
        ("padded", lambda: encode(PaddedEngine, encoder, texts)),
        ("sentence-transformers", lambda: plain(encoder, texts)),
    ]
    for i in range(args.repeat):
        for name, go in runs[i % 3 :] + runs[: i % 3]:  # each goes first once in three
            seconds, vectors[name] = go()
            best[name] = min(best[name], seconds)
    # the claim, checked on a sample: a vector from the run equals the text's in a run alone
    sample = list(range(0, len(texts), max(1, len(texts) // 60)))
    alone = np.concatenate([encode(EmbeddingEngine, encoder, [texts[i]])[1] for i in sample])
    report = {
        "texts": len(texts),
        "distinct_token_lengths": len(set(lengths)),
        "tokens": int(sum(lengths)),
        "repeats": args.repeat,
        "seconds": {k: round(v, 1) for k, v in best.items()},
        "texts_per_second": {k: round(len(texts) / v) for k, v in best.items()},
        "equal_length_over_padded_time": round(best["equal-length"] / best["padded"], 2),
        "plain_over_engine_time": round(best["sentence-transformers"] / best["equal-length"], 2),
        "plain_max_abs_difference": float(
            np.abs(vectors["sentence-transformers"] - vectors["equal-length"]).max()
        ),
        "sample_equal_to_alone": bool(np.array_equal(vectors["equal-length"][sample], alone)),
        "padded_max_abs_difference_from_alone": float(
            np.abs(vectors["padded"][sample] - alone).max()
        ),
    }
    publish("batching", report, to_docs=args.record)


if __name__ == "__main__":
    main()
