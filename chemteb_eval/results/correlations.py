"""Correlation matrices of a benchmark's results (the ChemTEB paper's Figures S2 and S3).

Across datasets: for each pair of tasks, Spearman's (and Pearson's) correlation of the models'
scores on the two (the models that have both; fewer than 3 give none), tasks grouped by type — do
the tasks of a type agree? A negative correlation inside a type means the models that do well on
one of its tasks tend to do badly on the other: the tasks measure different things (the paper
finds some in pair classification). Across models: each pair of models' correlation over the
tasks both have, the models ordered by hierarchical clustering (average linkage on 1 - rho) so
that models that behave alike sit together.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from chemteb_eval.tasks import Benchmark, benchmark_tasks

from .board import ModelResults

__all__ = [
    "Correlations",
    "matrix_rows",
    "model_correlations",
    "pearson",
    "spearman",
    "spearman_rows",
    "task_correlations",
    "write_matrix",
]

MIN_PAIRS = 3  # fewer common models (or tasks) than this: no correlation


@dataclass(frozen=True)
class Correlations:
    """A labelled square matrix (``None`` where too few pairs), with a group per label."""

    labels: list[str]
    groups: list[str]
    spearman: list[list[float | None]]
    pearson: list[list[float | None]]


def pearson(u: np.ndarray, v: np.ndarray) -> float | None:
    """Pearson's r; ``None`` when either side is constant (scipy would warn and give NaN) or
    holds a NaN or infinity (``min(1.0, nan)`` is 1.0: one NaN read as a perfect correlation)."""
    if not (np.isfinite(u).all() and np.isfinite(v).all()):
        return None
    # r is scale-free: dividing by the largest magnitude keeps values near 1e300 from
    # overflowing the squares
    u, v = (x / (np.abs(x).max() or 1.0) for x in (u.astype(np.float64), v.astype(np.float64)))
    su, sv = u.std(), v.std()
    if su == 0 or sv == 0:
        return None
    value = float(((u - u.mean()) * (v - v.mean())).mean() / (su * sv))
    if not np.isfinite(value):  # overflow in the products of values near 1e308
        return None
    return max(-1.0, min(1.0, value))  # rounding can land 2e-16 outside


def spearman(u: np.ndarray, v: np.ndarray) -> float | None:
    """Spearman's rho: Pearson of the average ranks (ties as scipy's ``spearmanr``)."""
    from scipy.stats import rankdata

    return pearson(rankdata(u), rankdata(v))


def spearman_rows(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``u`` with the same row of ``v`` (both ``(k, n)``): the
    bootstrap's thousand resamples in one call (~100x faster than a loop of ``spearman``).
    NaN where a row is constant on either side; otherwise equal to ``spearman`` per row."""
    from scipy.stats import rankdata

    ru, rv = rankdata(u, axis=1), rankdata(v, axis=1)
    ru -= ru.mean(axis=1, keepdims=True)
    rv -= rv.mean(axis=1, keepdims=True)
    su, sv = np.sqrt((ru**2).mean(axis=1)), np.sqrt((rv**2).mean(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = (ru * rv).mean(axis=1) / (su * sv)
    rho[(su == 0) | (sv == 0)] = np.nan
    clipped: np.ndarray = np.clip(rho, -1.0, 1.0)
    return clipped


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    keep = ~(np.isnan(a) | np.isnan(b))
    if keep.sum() < MIN_PAIRS:
        return None, None
    x, y = a[keep], b[keep]
    return spearman(x, y), pearson(x, y)


def _columns_corr(x: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
    """Pearson's r of every column of ``x`` with every column of ``y`` (default ``x``), neither
    with a missing value; NaN where a column is constant."""
    y = x if y is None else y
    cx, cy = x - x.mean(axis=0), y - y.mean(axis=0)
    sx, sy = np.sqrt((cx**2).mean(axis=0)), np.sqrt((cy**2).mean(axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (cx.T @ cy) / len(x) / np.outer(sx, sy)
    r[(sx == 0)[:, None] | (sy == 0)[None, :]] = np.nan
    clipped: np.ndarray = np.clip(r, -1.0, 1.0)
    return clipped


def _matrix(columns: np.ndarray, labels: list[str], groups: list[str]) -> Correlations:
    """Every pair of columns, on the rows both have. Vectorised, because the Space recomputes
    the matrices on every filter change (100 models' 4,950 pairs: ~0.15 s one pair at a time,
    ~5 ms so): columns without a missing value all at once (one rank per column and a matrix
    product); a column with missing values against all those at once on its own rows; only
    pairs of two such columns one at a time."""
    from scipy.stats import rankdata

    n = columns.shape[1]
    rho = np.full((n, n), np.nan)
    r = np.full((n, n), np.nan)
    missing = np.isnan(columns)
    whole = np.flatnonzero(~missing.any(axis=0))
    if len(columns) >= MIN_PAIRS and whole.size:
        block = np.ix_(whole, whole)
        r[block] = _columns_corr(columns[:, whole])
        rho[block] = _columns_corr(rankdata(columns[:, whole], axis=0))
    partial = np.flatnonzero(missing.any(axis=0))
    for i in partial:
        rows = ~missing[:, i]
        if rows.sum() >= MIN_PAIRS and whole.size:
            x, others = columns[rows][:, [i]], columns[rows][:, whole]
            r[i, whole] = r[whole, i] = _columns_corr(x, others)[0]
            rho[i, whole] = rho[whole, i] = _columns_corr(
                rankdata(x, axis=0), rankdata(others, axis=0)
            )[0]
        for j in partial[partial >= i]:
            a, b = _pair(columns[:, i], columns[:, j])
            rho[i, j] = rho[j, i] = np.nan if a is None else a
            r[i, j] = r[j, i] = np.nan if b is None else b

    def listed(m: np.ndarray) -> list[list[float | None]]:
        return [[None if math.isnan(v) else float(v) for v in row] for row in m.tolist()]

    return Correlations(labels, groups, listed(rho), listed(r))


def _table(models: Sequence[ModelResults], tasks: list[str]) -> np.ndarray:
    return np.array(
        [[m.scores.get(t, math.nan) for t in tasks] for m in models], dtype=np.float64
    ).reshape(len(models), len(tasks))


def task_correlations(models: Sequence[ModelResults], bench: Benchmark) -> Correlations:
    """Task x task, across models; tasks ordered by type, then as the benchmark lists them."""
    tasks = benchmark_tasks(bench)
    order = sorted(range(len(tasks)), key=lambda i: (tasks[i].type, i))
    names = [tasks[i].name for i in order]
    return _matrix(_table(models, names), names, [tasks[i].type for i in order])


def model_correlations(
    models: Sequence[ModelResults], bench: Benchmark, families: dict[str, str] | None = None
) -> Correlations:
    """Model x model, across the benchmark's tasks, ordered by hierarchical clustering."""
    from scipy.cluster.hierarchy import leaves_list, linkage

    names = [t.name for t in benchmark_tasks(bench)]
    table = _table(models, names).T  # tasks x models
    labels = [m.model for m in models]
    full = _matrix(table, labels, [(families or {}).get(m, "") for m in labels])
    if len(labels) > 2:
        # distance 1 - rho (pairs without a correlation: the largest distance, 2)
        dist = np.array([[2.0 if v is None else 1.0 - v for v in row] for row in full.spearman])
        condensed = dist[np.triu_indices(len(labels), k=1)]
        order = [int(i) for i in leaves_list(linkage(condensed, method="average"))]
    else:
        order = list(range(len(labels)))

    def pick(matrix: list[list[float | None]]) -> list[list[float | None]]:
        return [[matrix[i][j] for j in order] for i in order]

    return Correlations(
        [full.labels[i] for i in order],
        [full.groups[i] for i in order],
        pick(full.spearman),
        pick(full.pearson),
    )


def matrix_rows(matrix: Correlations, kind: str = "spearman") -> list[list[str]]:
    """The matrix as CSV rows: a header of labels, then one row per label (its group second,
    six decimals, empty where too few pairs)."""
    from chemteb_eval._files import csv_safe

    values = matrix.spearman if kind == "spearman" else matrix.pearson
    rows = [["", "group", *map(csv_safe, matrix.labels)]]
    for label, group, row in zip(matrix.labels, matrix.groups, values, strict=True):
        cells = ("" if v is None else f"{v:.6f}" for v in row)
        rows.append([csv_safe(label), csv_safe(group), *cells])
    return rows


def write_matrix(matrix: Correlations, path: Path, kind: str = "spearman") -> Path:
    """The matrix as CSV (``matrix_rows``), written atomically: a symlink planted at ``path`` is
    replaced, never followed."""
    import io

    from chemteb_eval._files import write_text_atomic

    body = io.StringIO()
    csv.writer(body).writerows(matrix_rows(matrix, kind))
    write_text_atomic(path, body.getvalue())
    return path
