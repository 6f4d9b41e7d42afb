"""Input checks shared by the scoring functions.

Every check raises a ``ValueError`` whose message starts with the argument's name, so a user who
passes the wrong thing learns which argument and what to do, never a traceback from inside numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.floating[Any]]


def _to_numpy(value: Any) -> Any:
    # torch tensors (and anything tensor-like) without importing torch in the scoring room.
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu()
        if str(getattr(value, "dtype", "")) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    return value


def as_embeddings(
    name: str, value: Any, *, dim: int | None = None, missing_ok: bool = False
) -> FloatArray:
    """Return ``value`` as a finite 2-D float array (float32 and float64 are kept as they are).

    Args:
        name: the argument's name, used in error messages.
        value: a numpy array, torch tensor or nested list of shape (n, d).
        dim: the number of columns required, if known.
        missing_ok: allow rows with NaN (an encoder's "no vector": out-of-vocabulary text);
            the caller decides what they mean. Infinities are still errors.

    Returns:
        The array, float32 if it was float32 (or half precision), else float64.
    """
    if value is None:
        raise ValueError(f"{name}: missing; pass an array of shape (n_rows, dim).")
    try:
        arr = np.asarray(_to_numpy(value))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: cannot be read as a numeric array ({exc}).") from None
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{name}: must be numeric, got dtype {arr.dtype}; ragged rows or strings are not embeddings."
        )
    if arr.ndim != 2:
        raise ValueError(f"{name}: must be 2-D (n_rows, dim), got shape {arr.shape}.")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: is empty (shape {arr.shape}).")
    if arr.dtype == np.float16:
        arr = arr.astype(np.float32)
    elif arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(
            f"{name}: has dimension {arr.shape[1]}, expected {dim} like the other embeddings."
        )
    finite = np.isfinite(arr).all(axis=1)
    if missing_ok:
        finite |= np.isnan(arr).any(axis=1) & ~np.isinf(arr).any(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise ValueError(
            f"{name}: {bad.size} row(s) contain NaN or inf, first at row {int(bad[0])}; "
            "check the encoder's output for these inputs."
        )
    return arr


def check_nonzero_rows(name: str, arr: FloatArray) -> None:
    """Raise if a row has zero norm, for which cosine similarity is undefined."""
    zero = ~np.any(arr != 0, axis=1)
    if zero.any():
        bad = np.flatnonzero(zero)
        raise ValueError(
            f"{name}: {bad.size} row(s) are all zeros (first at row {int(bad[0])}); cosine "
            "similarity is undefined for them. Check the encoder (empty texts?) before scoring."
        )


def as_labels(name: str, value: Any) -> NDArray[Any]:
    """Return ``value`` as a 1-D array of int or string labels.

    Args:
        name: the argument's name, used in error messages.
        value: a list, numpy array or tensor of labels (ints, bools or strings).

    Returns:
        A 1-D numpy array (integer or unicode dtype).
    """
    if value is None:
        raise ValueError(f"{name}: missing; pass one label per row.")
    value = _to_numpy(value)
    arr = np.asarray(value)
    if arr.dtype.kind == "U" and isinstance(value, (list, tuple)):
        # numpy would silently turn [1, "a"] into strings; mixed labels are a caller's mistake.
        if not all(isinstance(v, str) for v in value):
            raise ValueError(f"{name}: labels must be all ints or all strings, got a mix.")
    if arr.ndim != 1:
        raise ValueError(f"{name}: must be 1-D (one label per row), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name}: is empty.")
    if arr.dtype == object:
        kinds = {type(v) for v in arr.tolist()}
        if kinds <= {str}:
            arr = arr.astype(str)
        elif kinds <= {int, bool}:
            arr = arr.astype(np.int64)
        else:
            names = ", ".join(sorted(k.__name__ for k in kinds))
            raise ValueError(f"{name}: labels must be all ints or all strings, got {names}.")
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            raise ValueError(f"{name}: contains NaN or inf; labels must be ints or strings.")
        if not np.all(arr == np.round(arr)):
            raise ValueError(
                f"{name}: contains non-integer floats; labels must be ints or strings."
            )
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuU":
        raise ValueError(f"{name}: labels must be ints or strings, got dtype {arr.dtype}.")
    return arr


def check_same_length(**named: Sequence[Any] | NDArray[Any]) -> int:
    """Raise unless all arguments have the same number of rows; return that number."""
    lengths = {name: len(v) for name, v in named.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v}" for k, v in lengths.items())
        raise ValueError(f"length mismatch: {desc} rows; they must be equal.")
    return next(iter(lengths.values()))


def check_positive_int(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: must be a positive integer, got {value!r}.")
    return int(value)


def same_precision(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Both arrays in float64 when their precisions differ, else unchanged (float32 stays fast)."""
    if a.dtype == b.dtype:
        return a, b
    return a.astype(np.float64), b.astype(np.float64)


def l2_normalize(arr: FloatArray) -> FloatArray:
    """Rows scaled to unit norm, in the array's own precision."""
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    normalized: FloatArray = arr / norms
    return normalized
