"""What every task type's per-item evidence record shares: the layout checks of untrusted arrays.

Each scorer module keeps its type's record beside its scoring function (``RetrievalItems`` in
``retrieval.py``, ...): the arrays its ``return_items=True`` output holds, checked, and the score
recomputed on any resample of its items. The items come from ``<Task>.items.npz`` files, which
are untrusted, so every check names the array and what is wrong with it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["ItemRecord", "Items", "Statistic", "array", "labels", "numbers", "same_length"]

#: A score recomputed on a subset of the items (row indices, with repeats).
Statistic = Callable[[NDArray[np.int64]], float]


class ItemRecord(Protocol):
    """One task type's checked items of one split and subset."""

    task_type: ClassVar[str]

    @classmethod
    def check(cls, items: Mapping[str, Any], key: str) -> ItemRecord:
        """The checked items; ``ValueError`` naming the array and what is wrong with it."""
        ...

    @property
    def n(self) -> int:
        """How many items (queries, test rows, pairs...)."""
        ...

    @property
    def ids(self) -> tuple[str, ...] | None:
        """What each item is (retrieval's query ids), when the items carry it."""
        ...

    def statistic(self, key: str) -> Statistic:
        """Score ``key`` recomputed on a resample of the items."""
        ...


@dataclass(frozen=True)
class Items:
    """What every items record holds: its item count. ``ids`` is ``None`` unless the record
    knows what each item is (retrieval's query ids)."""

    n: int

    @property
    def ids(self) -> tuple[str, ...] | None:
        return None


def array(items: Mapping[str, Any], name: str, ndim: int = 1) -> NDArray[Any]:
    if name not in items:
        raise ValueError(f"no {name!r} array")
    value = np.asarray(items[name])
    if value.ndim != ndim:
        raise ValueError(f"{name!r} has {value.ndim} dimensions, not {ndim}")
    return value


def numbers(
    items: Mapping[str, Any], name: str, low: float = -math.inf, high: float = math.inf
) -> NDArray[Any]:
    value = array(items, name)
    if value.dtype.kind not in "biuf":
        raise ValueError(f"{name!r} is not numeric")
    finite = value.astype(np.float64)
    if not np.isfinite(finite).all():
        raise ValueError(f"{name!r} has NaN or infinite values")
    if value.size and (finite.min() < low or finite.max() > high):
        raise ValueError(f"{name!r} has values outside [{low:g}, {high:g}]")
    # float64 whatever was stored: a bool or uint8 array would break the statistics' arithmetic
    return finite


def same_length(*arrays: NDArray[Any]) -> int:
    lengths = {int(a.shape[-1]) for a in arrays}
    if len(lengths) != 1:
        raise ValueError(f"arrays of different lengths {sorted(lengths)}")
    return lengths.pop()


def labels(items: Mapping[str, Any], name: str, ndim: int = 1) -> NDArray[Any]:
    value = array(items, name, ndim)
    if value.dtype.kind not in "biufU":  # bytes, objects, dates: no label a scorer writes
        raise ValueError(f"{name!r} holds {value.dtype} values, not labels")
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise ValueError(f"{name!r} has NaN or infinite labels")
    return value
