"""What a model costs on a task, measured in the run: the texts its tokenizer cut off, and its
vectors made smaller (fewer dimensions, fewer bits) from the ones the run already has.

Both are recorded beside MTEB's keys in each result file (MTEB's readers ignore them):
``truncation`` per split and side, ``storage`` (dimension, precision, bytes per vector, the
index a task's texts make).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from chemteb_eval.data.types import TaskData
from chemteb_eval.models.base import Encoder, Role
from chemteb_eval.results.frontier import UNKNOWN
from chemteb_eval.scoring.compression import (
    Calibration,
    Compression,
    bytes_per_vector,
    calibrate,
    compress,
)
from chemteb_eval.scoring.retrieval import RowSource

from .kinds import split_texts

__all__ = ["CORPUS_CHUNK", "CompressedRows", "storage", "transform", "truncation", "variants"]

SIDES: Mapping[Role | None, str] = {None: "texts", "query": "queries", "document": "documents"}
# Rows whose norms are all within this of 1: the model's vectors are unit vectors (its pipeline
# ends in a Normalize module), and truncated ones are scaled back to unit length.
_UNIT = 1e-3

# the largest finite value of the half-precision types (float16: 65504; bfloat16 as float32's)
_LARGEST = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38}

PromptOf = Callable[[Role | None], str]


Sides = dict[tuple[str, str], dict[tuple[str, str], None]]


def sides(data: TaskData, prompt_of: PromptOf) -> Sides:
    """Per (split, side), the distinct (prompt, text) the task embeds: computed once per task,
    for ``truncation`` and every variant's ``storage``."""
    out: Sides = {}
    for by_split in data.values():
        for split, split_data in by_split.items():
            for texts, role in split_texts(split_data).values():
                prompt = prompt_of(role)
                bucket = out.setdefault((split, SIDES[role]), {})
                bucket.update(dict.fromkeys((prompt, t) for t in texts))
    return out


TOKENIZE_CHUNK = 4_096  # texts a truncation count tokenises at once (bounded memory)


def truncation(encoder: Encoder, by_side: Sides) -> dict[str, Any]:
    """``{split: {side: record}}``: how many of the side's distinct texts the model cut at its
    ``max_tokens`` and the share of their tokens it never read, counted by the tokenizer it
    ran (prompt and special tokens included). ``by_side``: the task's ``sides``. ``record`` is
    ``UNKNOWN`` where the backend cannot count (an API), else ``{texts, truncated, tokens,
    tokens_cut, max_tokens}``."""
    count = getattr(encoder, "untruncated_lengths", None)
    limit = encoder.meta.max_tokens
    out: dict[str, Any] = {}
    for (split, side), pairs in by_side.items():
        if count is None:
            out.setdefault(split, {})[side] = UNKNOWN
            continue
        lengths: list[int] = []
        by_prompt: dict[str, list[str]] = {}
        for prompt, text in pairs:
            by_prompt.setdefault(prompt, []).append(text)
        for prompt, texts in by_prompt.items():
            # a chunk at a time: a tokenizer's answer for a whole side of 80,000 short texts
            # held 2.7 GB (its ids, masks and offsets), where counting needs only the lengths
            for start in range(0, len(texts), TOKENIZE_CHUNK):
                lengths += count(texts[start : start + TOKENIZE_CHUNK], prompt=prompt)
        cut = [max(n - limit, 0) for n in lengths] if limit else [0] * len(lengths)
        out.setdefault(split, {})[side] = {
            "texts": len(lengths),
            "truncated": sum(1 for c in cut if c),
            "tokens": int(sum(lengths)),
            "tokens_cut": int(sum(cut)),
            "max_tokens": limit,
        }
    return out


def variants(
    dims: Sequence[int] | None, precisions: Sequence[str] | None, full_dim: int
) -> tuple[Compression, ...]:
    """Every variant ``--dims`` and ``--precisions`` ask for: their product with the model's own
    dimension and float32, less the model itself (scored as always). A dimension equal to the
    model's is the model's own; one above it is refused, naming ``dims``."""
    for dim in dims or ():
        if dim > full_dim:
            raise ValueError(f"dims: {dim} is more than the model's {full_dim} dimensions.")
    sizes: list[int | None] = [None, *(d for d in dims or () if d != full_dim)]
    kinds = ["float32", *(p for p in precisions or () if p != "float32")]
    out = [Compression(d, p) for d, p in itertools.product(sizes, kinds)]
    return tuple(v for v in dict.fromkeys(out) if not v.plain)


# MTEB's retrieval search encodes the corpus CORPUS_CHUNK documents at a time, in the corpus's
# order (``corpus_chunk_size``, 50,000 in 2.26), and its CompressionWrapper calibrates integer
# levels per encode call: per chunk. Calibrating a 50,001-document corpus at once gave 0.13886
# where MTEB gave 0.14711.
CORPUS_CHUNK = 50_000


def transform(
    vectors: np.ndarray,
    variant: Compression,
    *,
    chunk: int | None = None,
    renormalise: bool | None = None,
) -> np.ndarray | CompressedRows:
    """One group's vectors as ``variant`` stores them; truncated unit vectors are renormalised
    (the model's similarity is on unit vectors), others sliced as they are: decided once for
    the group, on its first 4,096 rows, unless ``renormalise`` says. ``chunk``: the rows are
    calibrated ``chunk`` at a time (a retrieval corpus: ``CORPUS_CHUNK``, as MTEB's encode
    calls are) and made only when read (``CompressedRows``): the scorer reads them a chunk at
    a time, so the variant weighs a chunk's rows, not the corpus's, however large it is."""
    if variant.full_vectors:  # the model's own (a hybrid fuses their ranking)
        return vectors
    if renormalise is None:
        renormalise = variant.dim is not None and _unit_rows(vectors)
    if chunk is not None:
        return CompressedRows(vectors, variant, chunk, renormalise)
    with np.errstate(over="ignore"):  # said below, in one line naming the variant
        out = compress(vectors, variant, renormalise=renormalise)
    return _in_range(out, vectors, variant)


def _in_range(out: np.ndarray, vectors: np.ndarray, variant: Compression) -> np.ndarray:
    """``out``, the compressed ``vectors``; a half precision that overflowed a row with
    numbers is refused in one line naming the variant."""
    if variant.precision in ("float16", "bfloat16"):
        finite = ~np.isnan(np.asarray(vectors)).any(axis=1)
        if np.isinf(out[finite]).any():
            raise ValueError(
                f"{variant.precision}: a component of the model's vectors is beyond "
                f"{variant.precision}'s range ({_LARGEST[variant.precision]:g}); this variant "
                "cannot store them (MTEB's CompressionWrapper would score inf)."
            )
    return out


# rows compressed at a time once a chunk's calibration is known: every step after it is row by
# row, so a read of 65,536 rows holds them and one such block on the way
_BLOCK = 8_192


class CompressedRows(RowSource):
    """A group's vectors (a memory-mapped corpus) as ``variant`` stores them, calibrated
    ``chunk`` rows at a time as ``transform`` of each chunk would be, each row made when it is
    read: the same bits as the chunks' ``transform`` concatenated, never held whole. A chunk's
    integer levels are calibrated on its first read (its rows once, then let go)."""

    def __init__(
        self, vectors: np.ndarray, variant: Compression, chunk: int, renormalise: bool
    ) -> None:
        self.vectors, self.variant, self.renormalise = vectors, variant, renormalise
        self.calibrated_per = chunk
        self.shape = (len(vectors), variant.dim or int(np.shape(vectors)[1]))
        self.dtype = np.dtype(np.float32)
        self._levels: dict[int, Calibration | None] = {}

    def _calibration(self, part: int) -> Calibration | None:
        if part not in self._levels:
            start = part * self.calibrated_per
            rows = self.vectors[start : start + self.calibrated_per]
            self._levels[part] = calibrate(rows, self.variant, renormalise=self.renormalise)
        return self._levels[part]

    def _made(self, rows: np.ndarray, part: int) -> np.ndarray:
        """Some rows of calibration chunk ``part``, compressed."""
        with np.errstate(over="ignore"):
            out = compress(
                rows,
                self.variant,
                renormalise=self.renormalise,
                calibration=self._calibration(part),
            )
        return _in_range(out, rows, self.variant)

    def rows(self, index: slice | np.ndarray) -> np.ndarray:
        if isinstance(index, slice):
            positions = None
            start, stop, _ = index.indices(self.shape[0])
        else:
            positions = np.asarray(index, dtype=np.int64)
            start, stop = 0, len(positions)
        out = np.empty((stop - start, self.shape[1]), np.float32)
        at = start
        while at < stop:  # a block at a time, never across a calibration chunk's end
            where = at if positions is None else int(positions[at])
            part = where // self.calibrated_per
            if positions is None:
                end = min(stop, at + _BLOCK, (part + 1) * self.calibrated_per)
                rows = self.vectors[at:end]
            else:  # the next indices asked for while they stay in this chunk
                other = positions[at : at + _BLOCK] // self.calibrated_per != part
                end = at + (int(np.argmax(other)) if other.any() else len(other))
                rows = self.vectors[positions[at:end]]
            out[at - start : end - start] = self._made(rows, part)
            at = end
        return out


def _unit_rows(vectors: np.ndarray) -> bool:
    """Whether the group's first 4,096 rows with numbers are unit vectors (the model's)."""
    rows = np.asarray(vectors[: min(len(vectors), 4096)], dtype=np.float64)
    rows = rows[~np.isnan(rows).any(axis=1)]
    norms = np.linalg.norm(rows, axis=1)
    return bool(len(norms)) and bool(np.all(np.abs(norms - 1) < _UNIT))


def storage(variant: Compression, full_dim: int, by_side: Sides) -> dict[str, Any]:
    """What the task's index weighs in ``variant``: its vectors (a retrieval task's distinct
    documents; any other task's distinct texts; ``by_side``: the task's ``sides``) times the
    bytes of one."""
    dim = variant.dim or full_dim
    documents = {p for (_, side), v in by_side.items() if side == "documents" for p in v}
    vectors = documents or {p for v in by_side.values() for p in v}
    one = bytes_per_vector(dim, variant.precision)
    return {
        "dim": dim,
        "precision": variant.precision,
        "bytes_per_vector": one,
        "vectors": len(vectors),
        "index_bytes": one * len(vectors),
    }
