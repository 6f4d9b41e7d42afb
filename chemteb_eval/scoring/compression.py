"""A model's vectors made smaller after the fact: fewer dimensions (Matryoshka truncation, as
sentence-transformers' ``truncate_dim``) and fewer bits per component (MTEB 2.26's
``CompressionWrapper``), and what a vector then weighs.

Pure numpy, written again here rather than imported: MTEB's wrapper needs torch and a model to
wrap, and a run scores its variants from vectors it already has. ``tests/test_compression.py``
holds every precision equal to ``CompressionWrapper._quantize_embeddings`` on the same vectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .ranked import RRF_K

__all__ = [
    "PRECISIONS",
    "Calibration",
    "Compression",
    "bytes_per_vector",
    "calibrate",
    "check_dims",
    "check_precisions",
    "compress",
]

FloatArray = NDArray[np.floating[Any]]
# an integer precision's levels of one encode call: per dimension, its lowest value and the step
# between levels (``calibrate``)
Calibration = tuple[NDArray[np.float32], NDArray[np.float32]]

# MTEB's OutputDType values we compute (its float8 levels need torch's float8 types; not here),
# with the bits one component then takes in an index.
_BITS = {
    "float32": 32,
    "float16": 16,
    "bfloat16": 16,
    "int8": 8,
    "uint8": 8,
    "int4": 4,
    "uint4": 4,
    "binary": 1,
}
PRECISIONS = tuple(_BITS)
_INTEGER = {"int8": 8, "uint8": 8, "int4": 4, "uint4": 4}


@dataclass(frozen=True)
class Compression:
    """One variant of a model's vectors: the first ``dim`` components (``None``: all of them),
    each stored in ``precision`` (an MTEB ``OutputDType`` value); or, with ``hybrid``, the
    model's own vectors whose ranking is fused with a lexical model's (``"bm25s"``:
    reciprocal-rank fusion with BM25, ``scoring.ranked``), which scores retrieval tasks only."""

    dim: int | None = None
    precision: str = "float32"
    hybrid: str | None = None

    def __post_init__(self) -> None:
        if self.precision not in _BITS:
            raise ValueError(
                f"precision: {self.precision!r} is not one we compute; use one of "
                f"{', '.join(PRECISIONS)}."
            )
        if self.dim is not None and (isinstance(self.dim, bool) or self.dim < 1):
            raise ValueError(f"dim: must be a positive whole number, got {self.dim!r}.")
        if self.hybrid is not None and (self.dim is not None or self.precision != "float32"):
            raise ValueError(
                "hybrid: fuses the model's own vectors' ranking; not a compressed one."
            )

    @property
    def full_vectors(self) -> bool:
        """Every dimension in float32: the vectors as the model gave them."""
        return self.dim is None and self.precision == "float32"

    @property
    def plain(self) -> bool:
        """The model's own vectors, ranked by themselves: every dimension, float32, no fusion."""
        return self.full_vectors and self.hybrid is None

    def kwargs(self) -> dict[str, str | int]:
        """MTEB's ``experiment_kwargs`` of the variant: ``output_dtypes`` as its
        ``CompressionWrapper`` records it, ``truncate_dim`` as sentence-transformers names the
        argument. Empty for the plain vectors."""
        out: dict[str, str | int] = {}
        if self.dim is not None:
            out["truncate_dim"] = self.dim
        if self.precision != "float32":
            out["output_dtypes"] = self.precision
        if self.hybrid is not None:  # our keys: MTEB has no hybrid to name
            out.update(hybrid=self.hybrid, fusion="rrf", rrf_k=RRF_K)
        return out


def bytes_per_vector(dim: int, precision: str) -> int:
    """What one vector of ``dim`` components in ``precision`` weighs in an index, packed (int4:
    two components a byte; binary: eight), rounded up to whole bytes."""
    return -(-dim * _BITS[precision] // 8)


def check_dims(dims: object, full: int | None = None) -> tuple[int, ...]:
    """``dims`` (``"256,128"`` or a sequence of whole numbers) as sorted distinct positive
    dimensions, each at most ``full`` when the model's is known; ``ValueError`` naming ``dims``."""
    parts = dims.split(",") if isinstance(dims, str) else dims
    if not isinstance(parts, (list, tuple)):
        raise ValueError(f"dims: expected numbers such as 256,128, got {dims!r}.")
    out = set()
    for part in parts:
        text = part.strip() if isinstance(part, str) else part
        if isinstance(text, bool) or not (
            isinstance(text, int) or (isinstance(text, str) and text.isascii() and text.isdigit())
        ):
            raise ValueError(f"dims: {part!r} is not a whole number of dimensions.")
        value = int(text)
        if value < 1:
            raise ValueError(f"dims: {value} dimensions; use a positive number.")
        if full is not None and value > full:
            raise ValueError(f"dims: {value} is more than the model's {full} dimensions.")
        out.add(value)
    if not out:
        raise ValueError("dims: name at least one dimension, such as 256.")
    return tuple(sorted(out, reverse=True))


def check_precisions(precisions: object) -> tuple[str, ...]:
    """``precisions`` (``"int8,binary"`` or a sequence) as distinct known precisions in the
    order of ``PRECISIONS``; ``ValueError`` naming ``precisions`` and the known ones."""
    parts = precisions.split(",") if isinstance(precisions, str) else precisions
    if not isinstance(parts, (list, tuple)) or not parts:
        raise ValueError(f"precisions: expected names such as int8,binary, got {precisions!r}.")
    names = {p.strip().lower() if isinstance(p, str) else p for p in parts}
    unknown = [repr(n) for n in names if n not in _BITS]
    if unknown:
        raise ValueError(
            f"precisions: {', '.join(sorted(unknown))} unknown; use any of {', '.join(PRECISIONS)}."
        )
    return tuple(p for p in PRECISIONS if p in names)


def compress(
    vectors: FloatArray,
    variant: Compression,
    *,
    renormalise: bool = False,
    calibration: Calibration | None = None,
) -> FloatArray:
    """The vectors of one encode call as ``variant`` stores them, as float32 values the scorers
    read (MTEB also returns floats: "to avoid issues with downstream calculations").

    - Dimensions: the first ``dim`` components (sentence-transformers' ``truncate_embeddings``);
      with ``renormalise``, each row then scaled back to unit norm (for a model whose vectors are
      unit vectors: what sentence-transformers' ``normalize_embeddings`` does after truncation).
    - Precision: MTEB 2.26's ``_quantize_embeddings``. Integers are calibrated on these vectors
      (min and max per dimension over the call, so one split's queries and one split's corpus
      are calibrated apart, as MTEB's encode calls are); ``int8``/``int4`` are then shifted by
      half their range. Binary is 1 where a component is positive, else 0.

    Rows with NaN (a word model's text with no known word) stay NaN and take no part in the
    calibration. One deviation from MTEB: a dimension constant over the call (max = min) gives
    MTEB 0/0 = NaN; here its lowest level (``-2**(bits-1)`` for signed, 0 for unsigned).

    ``calibration``: the call's levels (``calibrate``) where ``vectors`` are some of its rows:
    every step after the calibration is row by row, so rows compressed apart are the call's to
    the bit (a corpus compressed a chunk at a time, ``runner.costs``)."""
    out = _cut(vectors, variant, renormalise)
    precision = variant.precision
    if precision == "float32":
        return np.array(out, dtype=np.float32)  # a copy: the caller's rows stay its own
    if precision == "float16":
        return out.astype(np.float16).astype(np.float32)
    if precision == "bfloat16":
        return _bfloat16(out)
    if precision == "binary":
        return np.where(np.isnan(out), np.nan, np.where(out > 0, 1.0, 0.0)).astype(np.float32)
    bits = _INTEGER[precision]
    levels = calibration if calibration is not None else _calibration(out, bits)
    return _integers(out, bits, levels, signed=not precision.startswith("u"))


def calibrate(
    vectors: FloatArray, variant: Compression, *, renormalise: bool = False
) -> Calibration | None:
    """The integer levels ``compress`` calibrates on one encode call's ``vectors`` (``None``: a
    precision without levels, or no row with numbers, which ``compress`` returns as they are)."""
    bits = _INTEGER.get(variant.precision)
    return None if bits is None else _calibration(_cut(vectors, variant, renormalise), bits)


def _cut(vectors: FloatArray, variant: Compression, renormalise: bool) -> NDArray[np.float32]:
    """The vectors as float32, their first ``dim`` components (each row renormalised)."""
    out = np.asarray(vectors, dtype=np.float32)
    if variant.dim is not None:
        out = out[:, : variant.dim]
        if renormalise:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            out = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
    return out


def _bfloat16(values: NDArray[np.float32]) -> NDArray[np.float32]:
    """float32 rounded to bfloat16 (the top 16 bits, round half to even: torch's conversion)
    and back. NaN stays NaN (its rounding could carry into the exponent)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out: NDArray[np.float32] = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(values), np.float32(np.nan), out).astype(np.float32)


def _calibration(values: NDArray[np.float32], bits: int) -> Calibration | None:
    """MTEB's calibration: per dimension, the min over the rows with numbers and the step
    ``(max - min) / (2**bits - 1)``, in float32 as torch computes it; ``None`` without such a
    row."""
    finite = values[~np.isnan(values).any(axis=1)] if values.size else values
    if len(finite) == 0:
        return None
    mins = finite.min(axis=0)
    return mins, (finite.max(axis=0) - mins) / np.float32(2**bits - 1)


def _integers(
    values: NDArray[np.float32], bits: int, levels: Calibration | None, *, signed: bool
) -> NDArray[np.float32]:
    """MTEB's integer levels: ``floor((x - min) / ((max - min) / (2**bits - 1))) - shift``,
    every step in float32 as torch computes it (``levels``: the call's min and step)."""
    if levels is None:
        return np.array(values, dtype=np.float32)
    mins, steps = levels
    shift = np.float32(2 ** (bits - 1) if signed else 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        found = np.floor((values - mins) / steps)
    found = np.where(steps > 0, found, np.float32(0))  # a constant dimension: see compress
    out: NDArray[np.float32] = (found - shift).astype(np.float32)
    out[np.isnan(values)] = np.nan
    return out
