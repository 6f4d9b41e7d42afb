"""Input checks shared by the scoring functions.

Every check raises a ``ValueError`` whose message starts with the argument's name, so a user who
passes the wrong thing learns which argument and what to do, never a traceback from inside numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    finite = _by_rows(arr, lambda a: np.isfinite(a).all(axis=1))
    if missing_ok:
        finite |= _by_rows(arr, lambda a: np.isnan(a).any(axis=1) & ~np.isinf(a).any(axis=1))
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise ValueError(
            f"{name}: {bad.size} row(s) contain NaN or inf, first at row {int(bad[0])}; "
            "check the encoder's output for these inputs."
        )
    return arr


def as_values(name: str, value: Any, *, missing_ok: bool = False) -> NDArray[np.float64]:
    """``value`` as a non-empty 1-D float64 array of finite numbers (``missing_ok``: NaN allowed,
    meaning "none"); a ``ValueError`` naming the argument and the first bad position otherwise."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: must be numbers ({exc}).") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: must be a non-empty 1-D sequence, got shape {arr.shape}.")
    bad = ~np.isfinite(arr) if not missing_ok else np.isinf(arr)
    if bad.any():
        what = "NaN or inf" if not missing_ok else "inf"
        raise ValueError(
            f"{name}: {int(bad.sum())} value(s) are {what}, first at {int(np.flatnonzero(bad)[0])}."
        )
    return arr


# Rows checked at a time: the checks' temporaries (n x d booleans) stay at 64k rows (25 MiB for
# 384-d), not the corpus's size (a 5M x 384 corpus would need 1.9 GB of them at once).
_CHECK_ROWS = 65_536


def check_zero_rows(zero_rows: str, **arrays: FloatArray) -> None:
    """The scorers' ``zero_rows`` policy: ``"error"`` refuses a zero row in any of ``arrays``
    (``check_nonzero_rows``, naming the array); ``"zero"`` lets them through (cosine 0)."""
    if zero_rows not in ("error", "zero"):
        raise ValueError(f"zero_rows: 'error' or 'zero', got {zero_rows!r}.")
    if zero_rows == "error":
        for name, arr in arrays.items():
            check_nonzero_rows(name, arr)


def _by_rows(
    arr: NDArray[Any], check: Callable[[NDArray[Any]], NDArray[np.bool_]]
) -> NDArray[np.bool_]:
    """``check`` (a per-row reduction) applied block by block over the rows of ``arr``."""
    if len(arr) <= _CHECK_ROWS:
        return check(arr)
    return np.concatenate(
        [check(arr[i : i + _CHECK_ROWS]) for i in range(0, len(arr), _CHECK_ROWS)]
    )


def check_nonzero_rows(name: str, arr: FloatArray) -> None:
    """Raise if a row has zero norm, for which cosine similarity is undefined."""
    zero = ~_by_rows(arr, lambda a: np.any(a != 0, axis=1))
    if zero.any():
        bad = np.flatnonzero(zero)
        raise ValueError(
            f"{name}: {bad.size} row(s) are all zeros (first at row {int(bad[0])}); cosine "
            "similarity is undefined for them. Check the encoder (empty texts?) before scoring."
        )


def _int64(name: str, arr: NDArray[Any]) -> NDArray[Any]:
    """Integer labels as int64: numpy holds ints past 64 bits as objects (2**63 as uint64 or,
    beside small ints, float64), which would overflow or wrap to a negative "gold index"."""
    too_big = {"u": np.iinfo(np.int64).max, "f": 2.0**63 - 1024}.get(arr.dtype.kind)
    if too_big is not None and arr.size and np.abs(arr).max() > too_big:
        # [2**63, 0] arrives as uint64 or float64: cast, it wraps to -2**63
        raise ValueError(f"{name}: a label is beyond 64-bit integers.")
    try:
        return arr.astype(np.int64)
    except OverflowError:
        raise ValueError(f"{name}: a label is beyond 64-bit integers.") from None


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
            arr = _int64(name, arr)
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
        arr = _int64(name, arr)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind == "u":
        arr = _int64(name, arr)
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


def _unit_exponent(max_abs: Any) -> Any:
    # 2**-e brings max_abs into [0.5, 1): multiplying by a power of two is exact (no rounding).
    return np.frexp(max_abs)[1]


def rescale_rows(arr: FloatArray, *, floor: float | None = None) -> FloatArray:
    """Rows whose squared norm would underflow or overflow in their precision, each multiplied by
    a power of two that brings its largest value into [0.5, 1); every other row is unchanged.

    A float32 row of values near 1e-20 has squares near 1e-40, below float32's smallest normal
    number (1.2e-38): its norm loses its digits or becomes 0; a row near 1e20 overflows (1e40 >
    3.4e38). Cosine ignores the scale of each row, so rescaling changes nothing but the rounding,
    and by a power of two not even that: rows in the safe range keep their bits, which is what
    keeps our scores equal to MTEB's on ordinary embeddings.

    ``floor``: also rescale rows whose largest value is below it (scikit-learn's ``normalize``
    leaves rows with a norm under 10 x machine epsilon unnormalised: 1.2e-6 in float32).
    """
    if arr.size == 0:
        return arr
    info = np.finfo(arr.dtype)
    max_abs = np.abs(arr).max(axis=1)
    # Safe: the largest square is a normal number and d of them cannot overflow.
    low = np.sqrt(info.tiny) if floor is None else max(floor, np.sqrt(info.tiny))
    unsafe = (max_abs < low) | (max_abs > np.sqrt(info.max / arr.shape[1]) / 2)
    unsafe &= max_abs > 0
    if not unsafe.any():
        return arr
    out: FloatArray = arr.copy()
    out[unsafe] = np.ldexp(arr[unsafe], -_unit_exponent(max_abs[unsafe])[:, None])
    return out


def global_rescale(*arrays: FloatArray) -> tuple[int, list[FloatArray]]:
    """All ``arrays`` multiplied by one power of two ``2**-e`` when their values are so large or
    small that squares or sums of squares leave the precision's normal range; ``(e, arrays)``,
    with ``e = 0`` and the arrays unchanged (same bits) otherwise.

    Dot products scale by ``2**2e`` and distances by ``2**e``: orders, and so ranks, thresholds'
    positions, AP and correlations, are unchanged.
    """
    info = np.finfo(arrays[0].dtype)
    dim = arrays[0].shape[1]
    max_abs = max(float(np.abs(a).max()) for a in arrays)
    if max_abs == 0 or np.sqrt(info.tiny) <= max_abs <= np.sqrt(info.max / dim) / 2:
        return 0, list(arrays)
    e = int(_unit_exponent(max_abs))
    return e, [np.ldexp(a, -e) for a in arrays]


def l2_normalize(arr: FloatArray) -> FloatArray:
    """Rows scaled to unit norm, in the array's own precision, for any finite non-zero row (rows
    near the precision's limits are first brought into range by ``rescale_rows``); a zero row
    stays zero (cosine 0 with everything, as MTEB's ``cos_sim``; the scorers refuse zero rows
    unless told ``zero_rows="zero"``)."""
    arr = rescale_rows(arr)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    normalized: FloatArray = arr / np.where(norms == 0, 1, norms).astype(arr.dtype)
    return normalized


def check_beta(beta: Any) -> float:
    """The F-beta's ``beta`` as a positive float (``inf``, and anything above float's range,
    means recall: the limit of F-beta as beta grows)."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.integer, np.floating)):
        raise ValueError(f"beta: must be a positive number, got {beta!r}.")
    try:
        value = float(beta)
    except OverflowError:  # an int beyond float's range
        value = float("inf")
    if not value > 0:  # NaN too
        raise ValueError(f"beta: must be positive, got {beta!r}.")
    return value
