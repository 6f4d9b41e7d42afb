"""The one reader of ``<Task>.items.npz`` evidence files: untrusted input, checked like the JSON.

An items file is what a run's scoring returned with ``return_items=True`` (per query, per test
row, per pair...), saved beside the task's MTEB-layout JSON. Everything that resamples items —
``rank --ci``, ``compare``, the Space's interval columns — reads it through here, so a hostile or
stale file cannot move a number: its sizes are checked from the zip and ``.npy`` headers before
any array is allocated, every array's dtype and shape from its header, the values for finiteness
and range, and the items must reproduce the score the JSON records. A file that fails any check
is refused with the reason; callers skip it with a notice and fall back to resampling tasks.
"""

from __future__ import annotations

import math
import stat
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["MAX_ITEMS_BYTES", "Evidence", "check_evidence", "read_items"]

# The largest evidence a run writes: retrieval's per-query metrics are ~20 float64 arrays per
# query, so 1M queries are ~160 MB. 256 MiB unpacked bounds what a 1 MB hostile file can cost.
MAX_ITEMS_BYTES = 256 * 2**20
MAX_MEMBERS = 4096  # a run writes ~2-25 arrays per split and subset
_KINDS = "biufU"  # bool, ints, floats and unicode labels: nothing that needs pickle
# The items' score may differ from the JSON's by its rounding: MTEB rounds retrieval's means to
# 5 decimals (half a unit: 5e-6), plus float noise from another summation order.
_TOLERANCE = 1e-5


def read_items(
    path: str | Path, *, max_bytes: int | None = None
) -> dict[tuple[str, str], dict[str, NDArray[Any]]]:
    """``{(split, subset): {name: array}}`` from an items file, sizes checked before loading
    (``max_bytes`` unpacked at most; default ``MAX_ITEMS_BYTES``).

    Raises:
        ValueError: naming the file and what is wrong with it (not a zip, a truncated member, a
            declared size over ``max_bytes``, an object or structured dtype, a member name that
            is not ``split/subset/name.npy``).
    """
    path = Path(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would hang, /dev/zero never end
            raise ValueError("not a regular file")
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            _check_sizes(infos, MAX_ITEMS_BYTES if max_bytes is None else max_bytes)
            out: dict[tuple[str, str], dict[str, NDArray[Any]]] = {}
            for info in infos:
                split, subset, name = _member_key(info.filename)
                with archive.open(info) as member:
                    out.setdefault((split, subset), {})[name] = _read_array(member, info)
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
        raise ValueError(f"{path}: not a readable items file ({exc})") from None
    except (zlib.error, RuntimeError, NotImplementedError) as exc:
        # a damaged deflate stream, an "encrypted" flag, an unknown compression method
        raise ValueError(
            f"{path}: not a readable items file ({type(exc).__name__}: {exc})"
        ) from None
    return out


def _check_sizes(infos: list[zipfile.ZipInfo], max_bytes: int) -> None:
    if not infos:
        raise ValueError("no arrays in it")
    if len(infos) > MAX_MEMBERS:
        raise ValueError(f"{len(infos)} arrays, more than the {MAX_MEMBERS} a run writes")
    # zipfile stops a member at the size its central directory declares, so this bounds memory.
    declared = sum(i.file_size for i in infos)
    if declared > max_bytes:
        raise ValueError(f"declares {declared:,} bytes unpacked, over the {max_bytes:,} limit")


def _member_key(filename: str) -> tuple[str, str, str]:
    parts = filename.removesuffix(".npy").split("/")
    if not filename.endswith(".npy") or len(parts) != 3 or not all(parts):
        raise ValueError(f"member {filename[:80]!r} is not split/subset/name.npy")
    return parts[0], parts[1], parts[2]


def _read_array(member: IO[bytes], info: zipfile.ZipInfo) -> NDArray[Any]:
    """One ``.npy`` member, its header checked against the member's declared size first (a
    header may declare a shape of 10**12 rows in a 100-byte member)."""
    fmt = np.lib.format
    version = fmt.read_magic(member)
    header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
    shape, fortran, dtype = header(member)
    name = info.filename
    if dtype.kind not in _KINDS or dtype.itemsize == 0 or dtype.fields is not None:
        raise ValueError(f"{name}: dtype {dtype} is not a number or text array")
    count = math.prod(shape)
    size = count * dtype.itemsize
    if size > info.file_size:
        raise ValueError(f"{name}: its header declares {shape}, more than the member holds")
    data = member.read(size)
    if len(data) != size:
        raise ValueError(f"{name}: truncated ({len(data):,} of {size:,} bytes)")
    flat = np.frombuffer(data, dtype=dtype, count=count)
    return flat.reshape(shape, order="F") if fortran else flat.reshape(shape)


@dataclass(frozen=True)
class Evidence:
    """Checked items of one task: the score recomputed on any resample of them (row indices),
    and their count."""

    items: Mapping[str, NDArray[Any]]
    statistic: Callable[[NDArray[np.int64]], float]
    n: int
    ids: tuple[str, ...] | None = None  # what each item is (retrieval's query ids), if known

    def aligned_to(self, reference: Evidence) -> Callable[[NDArray[np.int64]], float] | None:
        """This statistic indexed by ``reference``'s item positions, so that a resample draws
        the same items for both: the same order as it is, another order of the same ids
        re-indexed, ``None`` for other items (or counts that differ). Without ids on both
        sides, the row order is taken as the pairing (the run writes items in data order)."""
        if self.n != reference.n:
            return None
        if self.ids is None or reference.ids is None or self.ids == reference.ids:
            return self.statistic
        position = {item: i for i, item in enumerate(self.ids)}
        if len(position) != self.n or set(position) != set(reference.ids):
            return None
        order = np.array([position[item] for item in reference.ids], dtype=np.int64)
        statistic = self.statistic
        return lambda idx: statistic(order[idx])


def check_evidence(task_type: str, items: Mapping[str, Any], key: str, score: float) -> Evidence:
    """The items of one split and subset, checked against the task type's layout (its scorer's
    items record) and the score the result file records for ``key``.

    Raises:
        ValueError: the reason — a missing or mis-shaped array, a non-finite or out-of-range
            value, or items whose ``key`` is not ``score``.
    """
    from chemteb_eval.scoring.uncertainty import check_items, item_records

    if task_type not in item_records():
        raise ValueError(f"no per-item evidence for {task_type} tasks")
    record = check_items(task_type, items, key)
    if record.n < 1:
        raise ValueError("no items")
    statistic = record.statistic(key)
    with np.errstate(all="ignore"):
        recomputed = statistic(np.arange(record.n))
    if not math.isfinite(recomputed) or abs(recomputed - score) > _TOLERANCE * max(1, abs(score)):
        raise ValueError(
            f"its items give {key} = {recomputed:.6g}, the result file says {score:.6g}"
        )
    return Evidence(items=dict(items), statistic=statistic, n=record.n, ids=record.ids)
