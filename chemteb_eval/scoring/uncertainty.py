"""How sure a score, a difference and a rank are: seeded, vectorised bootstrap.

Three questions, three functions (the method, its assumptions and references are in
``docs/uncertainty.md``):

- ``bootstrap_ci``: a percentile interval of one task's score, resampling its items (queries,
  pairs, test texts) with replacement; ``mean_ci`` is the vectorised case of a mean of per-item
  values (retrieval's per-query nDCG, a classification's per-text correctness).
- ``paired_bootstrap``: two models scored on the same items; the difference, its interval and a
  two-sided p-value, resampling the items jointly (the pairing removes the items' own difficulty).
- ``rank_intervals``: a benchmark's aggregate (mean over tasks, Borda, or per-type means fused
  by Reciprocal Rank Fusion) recomputed on tasks resampled with replacement (within each task
  type, so every resample has each type's task count), optionally with items resampled inside
  each task as well (two levels); each model's 95% rank interval and the models not separable
  from the top (those ranked first in at least 2.5% of resamples).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

import numpy as np
from numpy.typing import NDArray

from ._items import ItemRecord
from ._validation import as_values, check_positive_int

K = TypeVar("K")

__all__ = [
    "PairedResult",
    "RankIntervals",
    "bootstrap_ci",
    "bootstrap_draws",
    "check_items",
    "competition_ranks",
    "item_records",
    "mean_ci",
    "min_tasks_for",
    "paired_bootstrap",
    "paired_statistic_bootstrap",
    "rank_intervals",
    "sign_flip_test",
    "task_statistic",
]

Aggregation = Literal["mean", "rrf", "borda"]


def _check(resamples: int, confidence: float) -> tuple[int, float]:
    resamples = check_positive_int("resamples", resamples)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must be between 0 and 1, got {confidence!r}.")
    return resamples, (1 - confidence) / 2


def mean_ci(
    values: Any, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the percentile bootstrap interval of the mean of per-item values.

    Vectorised: one (resamples x n) index draw; 5,000 items x 1,000 resamples take ~0.1 s.
    """
    arr = as_values("values", values)
    resamples, tail = _check(resamples, confidence)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, arr.size, size=(resamples, arr.size))].mean(axis=1)
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(arr.mean()), float(low), float(high)


def bootstrap_ci(
    statistic: Callable[[NDArray[np.int64]], float],
    n_items: int,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(estimate, low, high)`` of any per-task statistic of ``n_items`` items.

    Args:
        statistic: the score computed on the items at the given row indices (called once on
            ``arange(n_items)`` for the estimate, then once per resample).
        n_items: how many items the task has.
        resamples: bootstrap resamples.
        confidence: the interval's coverage.
        seed: the random seed (the same seed draws the same resamples).
    """
    n_items = check_positive_int("n_items", n_items)
    resamples, tail = _check(resamples, confidence)
    estimate = float(statistic(np.arange(n_items)))
    draws = bootstrap_draws(statistic, n_items, resamples=resamples, seed=seed)
    low, high = np.quantile(draws, [tail, 1 - tail])
    return estimate, float(low), float(high)


def bootstrap_draws(
    statistic: Callable[[NDArray[np.int64]], float],
    n_items: int,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> NDArray[np.float64]:
    """The statistic on ``resamples`` resamples of ``n_items`` items drawn with replacement:
    ``bootstrap_ci``'s draws (same seed, same draws), for a standard error or another interval."""
    n_items = check_positive_int("n_items", n_items)
    resamples = check_positive_int("resamples", resamples)
    rng = np.random.default_rng(seed)
    return np.array(
        [statistic(rng.integers(0, n_items, size=n_items)) for _ in range(resamples)],
        dtype=np.float64,
    )


@dataclass(frozen=True)
class PairedResult:
    """Model A minus model B on the same items."""

    difference: float
    low: float
    high: float
    p_value: float

    def to_dict(self) -> dict[str, float]:
        return {
            "difference": self.difference,
            "low": self.low,
            "high": self.high,
            "p_value": self.p_value,
        }


def paired_bootstrap(
    a: Any, b: Any, *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> PairedResult:
    """The mean difference of per-item values ``a - b`` with its interval and two-sided
    p-value (twice the smaller share of resampled differences on either side of 0, at most 1).

    Identical models give difference 0 and p = 1; a model better on every item gives p = 0
    (no resample reaches 0).
    """
    x, y = as_values("a", a), as_values("b", b)
    if x.size != y.size:
        raise ValueError(f"length mismatch: a has {x.size} items, b has {y.size}; pair them.")
    resamples, tail = _check(resamples, confidence)
    diff = x - y
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(resamples, diff.size))].mean(axis=1)
    low, high = np.quantile(means, [tail, 1 - tail])
    p = min(1.0, 2 * min(float((means <= 0).mean()), float((means >= 0).mean())))
    return PairedResult(float(diff.mean()), float(low), float(high), p)


# Exact enumeration of every sign pattern up to 2**16 = 65,536 patterns (16 tasks: ~10 MB of
# work, milliseconds); beyond that a seeded Monte Carlo sample of patterns.
EXACT_SIGN_FLIP_MAX = 16


def sign_flip_test(a: Any, b: Any, *, resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided p-value of the mean paired difference ``a - b`` under the null that each
    difference's sign is a coin flip (the paired permutation test).

    Exact (all ``2**n`` sign patterns) for ``n <= EXACT_SIGN_FLIP_MAX``, so two tasks can never
    give less than 0.5 (2 of 4 patterns are as extreme); beyond that ``resamples`` random
    patterns with the observed one counted, so p >= 1 / (resamples + 1) and never 0.
    """
    x, y = as_values("a", a), as_values("b", b)
    if x.size != y.size:
        raise ValueError(f"length mismatch: a has {x.size} items, b has {y.size}; pair them.")
    diff = x - y
    observed = abs(diff.mean())
    # a pattern as extreme as the observed one, allowing for float noise in the sum
    slack = 1e-12 * max(1.0, float(np.abs(diff).max(initial=0.0)))
    if diff.size <= EXACT_SIGN_FLIP_MAX:
        patterns = np.arange(2**diff.size)[:, None] >> np.arange(diff.size) & 1
        means = np.abs(((1 - 2 * patterns) * diff).mean(axis=1))
        return float((means >= observed - slack).mean())
    resamples = check_positive_int("resamples", resamples)
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, diff.size))
    extreme = int((np.abs((signs * diff).mean(axis=1)) >= observed - slack).sum())
    return (extreme + 1) / (resamples + 1)


def min_tasks_for(alpha: float = 0.05) -> int:
    """The fewest paired values an exact sign-flip test needs to reach ``p < alpha`` at all:
    its smallest p-value is ``2 / 2**n`` (6 for 5%)."""
    n = 1
    while 2 / 2**n >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class RankIntervals:
    """Each model's rank (1 = best) on the full benchmark and its bootstrap interval."""

    models: tuple[str, ...]
    rank: tuple[int, ...]
    low: tuple[int, ...]
    high: tuple[int, ...]
    top_share: tuple[float, ...]  # share of resamples in which the model ranks first
    tied_with_top: tuple[bool, ...]  # ranked first in at least (1 - confidence) / 2 of them

    def as_dict(self) -> dict[str, dict[str, Any]]:
        return {
            m: {
                "rank": r,
                "rank_low": lo,
                "rank_high": hi,
                "top_share": share,
                "tied_with_top": tied,
            }
            for m, r, lo, hi, share, tied in zip(
                self.models,
                self.rank,
                self.low,
                self.high,
                self.top_share,
                self.tied_with_top,
                strict=True,
            )
        }


@overload
def competition_ranks(
    values: Mapping[K, float], against: Iterable[float] | None = None
) -> dict[K, int]: ...
@overload
def competition_ranks(
    values: NDArray[np.float64], against: Iterable[float] | None = None
) -> NDArray[np.int64]: ...
def competition_ranks(
    values: Mapping[K, float] | NDArray[np.float64], against: Iterable[float] | None = None
) -> dict[K, int] | NDArray[np.int64]:
    """The one competition ("min") ranking of the house: 1 = highest, ties share the lowest
    rank (scores 0.9, 0.8, 0.8, 0.7 rank 1, 2, 2, 4).

    Args:
        values: ``{name: score}`` (ranks returned by name), or an array ranked along axis 0
            (the models; further axes, e.g. resamples, are ranked independently).
        against: rank each value among these scores instead of among ``values`` themselves
            (an incomplete model's type mean among the complete models'; 1 + how many are
            higher). Only with a mapping.
    """
    if isinstance(values, Mapping):
        names = list(values)
        scores = np.asarray([values[n] for n in names], dtype=np.float64)
        if against is not None:
            others = np.asarray(list(against), dtype=np.float64)
            higher = (others[None, :] > scores[:, None]).sum(axis=1)
        else:
            higher = (scores[None, :] > scores[:, None]).sum(axis=1)
        return {n: 1 + int(h) for n, h in zip(names, higher, strict=True)}
    if against is not None:
        raise ValueError("against: only with a mapping of scores.")
    better = (values[None, :, ...] > values[:, None, ...]).sum(axis=1)
    ranks: NDArray[np.int64] = 1 + better
    return ranks


def _aggregate(
    scores: NDArray[np.float64],
    type_of_task: NDArray[np.int64],
    n_types: int,
    aggregation: Aggregation,
    rrf_k: int,
) -> NDArray[np.float64]:
    """Aggregate per resample: ``scores`` is (models, resamples, tasks); higher is better."""
    if aggregation == "mean":
        out: NDArray[np.float64] = scores.mean(axis=2)
        return out
    if aggregation == "borda":
        # a point per model beaten on each task
        beaten = (scores[:, None, :, :] > scores[None, :, :, :]).sum(axis=1)
        out = beaten.sum(axis=2).astype(np.float64)
        return out
    fused = np.zeros(scores.shape[:2])
    for t in range(n_types):
        cols = type_of_task == t
        if cols.any():
            fused += 1.0 / (rrf_k + competition_ranks(scores[:, :, cols].mean(axis=2)))
    return fused


def rank_intervals(
    scores: Mapping[str, Mapping[str, float]],
    task_types: Mapping[str, str],
    *,
    aggregation: Aggregation = "rrf",
    rrf_k: int = 10,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    item_resampler: Callable[[np.random.Generator], Mapping[str, Mapping[str, float]]]
    | None = None,
) -> RankIntervals:
    """Rank intervals of complete models under a benchmark's aggregate.

    Args:
        scores: ``{model: {task: main score}}``; every model must have every task.
        task_types: ``{task: type}`` (tasks are resampled within their type).
        aggregation: ``rrf`` (per-type means, ranked, fused: ChemTEB(paper)), ``mean`` over
            tasks, or ``borda`` (points for models beaten, summed over tasks).
        rrf_k: RRF's constant.
        resamples, confidence, seed: the bootstrap's.
        item_resampler: for two-level resampling, a callable that, given the generator, returns
            every model's task scores recomputed on one resample of each task's items (the
            same items for every model); tasks it omits keep their scores.

    Returns:
        The models' ranks, intervals, shares of first places and the group tied with the top.
    """
    models = tuple(scores)
    if len(models) < 2:
        raise ValueError("scores: need at least two models to rank.")
    tasks = tuple(task_types)
    missing = [(m, t) for m in models for t in tasks if t not in scores[m]]
    if missing:
        raise ValueError(
            f"scores: {len(missing)} (model, task) scores are missing, e.g. {missing[0]}; "
            "rank intervals are for complete models."
        )
    resamples, tail = _check(resamples, confidence)
    type_names = sorted(set(task_types.values()))
    type_of_task = np.array([type_names.index(task_types[t]) for t in tasks], dtype=np.int64)
    matrix = np.array([[float(scores[m][t]) for t in tasks] for m in models])
    rng = np.random.default_rng(seed)
    # Tasks resampled within their type: column indices (resamples, n_tasks).
    picks = np.empty((resamples, len(tasks)), dtype=np.int64)
    for t in range(len(type_names)):
        cols = np.flatnonzero(type_of_task == t)
        picks[:, cols] = rng.choice(cols, size=(resamples, cols.size), replace=True)
    if item_resampler is None:
        sampled = matrix[:, picks]  # (models, resamples, tasks)
    else:
        sampled = np.empty((len(models), resamples, len(tasks)))
        for b in range(resamples):
            redrawn = item_resampler(rng)
            row = np.array(
                [[float(redrawn.get(m, {}).get(t, scores[m][t])) for t in tasks] for m in models]
            )
            sampled[:, b, :] = row[:, picks[b]]
    full = _aggregate(matrix[:, None, :], type_of_task, len(type_names), aggregation, rrf_k)
    # Position j of every resample holds a task of position j's type: the type map still holds.
    boot = _aggregate(sampled, type_of_task, len(type_names), aggregation, rrf_k)
    point = competition_ranks(full[:, 0])
    ranks = competition_ranks(boot)  # (models, resamples)
    low = np.quantile(ranks, tail, axis=1, method="lower")
    high = np.quantile(ranks, 1 - tail, axis=1, method="higher")
    top_share = (ranks == 1).mean(axis=1)
    return RankIntervals(
        models=models,
        rank=tuple(int(r) for r in point),
        low=tuple(int(x) for x in low),
        high=tuple(int(x) for x in high),
        top_share=tuple(float(x) for x in top_share),
        tied_with_top=tuple(
            bool(share >= tail or r == 1) for share, r in zip(top_share, point, strict=True)
        ),
    )


def paired_statistic_bootstrap(
    statistic_a: Callable[[NDArray[np.int64]], float],
    statistic_b: Callable[[NDArray[np.int64]], float],
    n_items: int,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> PairedResult:
    """``paired_bootstrap`` for scores that are not means of items (F1 over a threshold sweep,
    V-measure, Spearman): both statistics are computed on the same resampled items."""
    n_items = check_positive_int("n_items", n_items)
    resamples, tail = _check(resamples, confidence)
    rng = np.random.default_rng(seed)
    everything = np.arange(n_items)
    estimate = float(statistic_a(everything) - statistic_b(everything))
    diffs = []
    for _ in range(resamples):
        idx = rng.integers(0, n_items, size=n_items)
        diffs.append(statistic_a(idx) - statistic_b(idx))
    draws = np.asarray(diffs, dtype=np.float64)
    draws = draws[np.isfinite(draws)]
    low, high = np.quantile(draws, [tail, 1 - tail])
    p = min(1.0, 2 * min(float((draws <= 0).mean()), float((draws >= 0).mean())))
    return PairedResult(estimate, float(low), float(high), p)


def item_records() -> Mapping[str, type[ItemRecord]]:
    """Each task type's per-item evidence record, as its scorer module defines it (keyed by the
    record's own ``task_type``): the one table of which types have evidence."""
    from .bitext_mining import BitextItems
    from .classification import ClassificationItems
    from .clustering import ClusteringItems
    from .pair_classification import PairItems
    from .retrieval import RetrievalItems
    from .sts import StsItems

    records: tuple[type[ItemRecord], ...] = (
        RetrievalItems,
        ClassificationItems,
        PairItems,
        BitextItems,
        ClusteringItems,
        StsItems,
    )
    return {r.task_type: r for r in records}


def check_items(task_type: str, items: Mapping[str, Any], key: str) -> ItemRecord:
    """The checked per-item evidence of one task of ``task_type`` for score ``key``.

    Raises:
        ValueError: ``task_type`` has no per-item evidence, or (naming the array) the items
            do not have its layout.
    """
    record = item_records().get(task_type)
    if record is None:
        raise ValueError(f"task_type: no per-item evidence for {task_type!r} tasks.")
    if not isinstance(items, Mapping):
        raise ValueError(f"items: a mapping of arrays, got {type(items).__name__}.")
    if not isinstance(key, str) or not key:
        raise ValueError(f"key: the score to recompute, got {key!r}.")
    return record.check(items, key)


def task_statistic(
    task_type: str, items: Mapping[str, Any], key: str
) -> tuple[Callable[[NDArray[np.int64]], float], int]:
    """The score ``key`` of a task recomputed on a subset of its items (row indices), from the
    evidence a scoring function returned with ``return_items=True``; and the item count.

    A resample that leaves a score undefined (pairs of one class only) gives NaN, which the
    bootstrap drops. The statistic itself sits beside each type's scorer (its items record).
    """
    record = check_items(task_type, items, key)
    return record.statistic(key), record.n
