"""How the engine cuts a run's texts into model calls: calls of one token length (a vector
independent of its run), and the token-budget batches before them (a benchmark's baseline)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "MAX_ROWS_PER_CALL",
    "MIN_CALL_TOKENS",
    "TOKENS_PER_CALL",
    "call_rows",
    "equal_length_batches",
    "rows_per_call",
    "token_budget_batches",
]

# A token-budget batch holds at most this many times batch_size texts (short names): beyond it
# a CPU forward pass gains nothing and memory grows.
_MAX_BATCH_FACTOR = 16


def token_budget_batches(lengths: list[int], batch_size: int) -> list[range]:
    """The engine's batches before issue 35, kept as ``benchmarks/bench_batching.py``'s same-run
    baseline (the engine now batches by ``equal_length_batches``).

    Split texts sorted longest first into batches of at most ``batch_size x median length``
    padded tokens (texts x the batch's longest), at least one text and at most
    ``16 x batch_size`` texts each.

    Fixed-count batches pay for padding: a batch of 32 whose longest SMILES has 120 tokens runs
    32 x 120 positions even where most texts have 20. With a budget, long texts go in small
    batches and short ones in large ones, so every batch costs about the same.
    """
    if not lengths:
        return []
    budget = batch_size * max(int(np.median(lengths)), 1)
    most = batch_size * _MAX_BATCH_FACTOR
    batches, start = [], 0
    while start < len(lengths):
        longest = max(lengths[start], 1)  # sorted longest first: the batch's first text
        size = min(max(budget // longest, 1), most, len(lengths) - start)
        batches.append(range(start, start + size))
        start += size
    return batches


# Local models on a CPU run calls of one token length, never padded, each of at least
# MIN_CALL_TOKENS positions (a shorter call is filled with repeats of its own texts, their
# outputs dropped). Why: padding moved MiniLM's vectors by up to 1.5e-7 (a batch's longest text
# set its shape), and so did a call of one or two rows of 3-9 tokens (another GEMM kernel for so
# few rows: measured, not assumed), so a text's vector depended on which texts shared its run:
# PipChemWikiTopicClassification scored 0.728549 alone and 0.728393 in the seven-task run, and
# the cache served whichever came first. Calls of one length and at least 64 positions gave the
# same bits for every row count on 1,500 PipChem texts (as calls of one fixed shape per length,
# which cost 3x); measured cost against the padded batches: docs/runner.md.
TOKENS_PER_CALL = 2048
MAX_ROWS_PER_CALL = 256
MIN_CALL_TOKENS = 64


def rows_per_call(length: int) -> int:
    """The most texts of ``length`` tokens in one call (about ``TOKENS_PER_CALL`` positions)."""
    return max(1, min(MAX_ROWS_PER_CALL, TOKENS_PER_CALL // max(length, 1)))


def call_rows(length: int, texts: int) -> int:
    """The rows a call of ``texts`` texts of ``length`` tokens runs: the texts, filled up to
    ``MIN_CALL_TOKENS`` positions."""
    return max(texts, -(-MIN_CALL_TOKENS // max(length, 1)))


def equal_length_batches(lengths: list[int]) -> list[range]:
    """Texts sorted longest first, cut into batches of one token length each, at most
    ``rows_per_call(length)`` texts each (the engine fills a call to ``call_rows``)."""
    batches: list[range] = []
    start = 0
    while start < len(lengths):
        stop = start
        while stop < len(lengths) and lengths[stop] == lengths[start]:
            stop += 1
        step = rows_per_call(lengths[start])
        batches += [range(i, min(i + step, stop)) for i in range(start, stop, step)]
        start = stop
    return batches
