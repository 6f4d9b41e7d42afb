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

from .ranking import ModelResults

__all__ = [
    "Correlations",
    "model_correlations",
    "pearson",
    "spearman",
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
    """Pearson's r; ``None`` when either side is constant (scipy would warn and give NaN)."""
    su, sv = u.std(), v.std()
    if su == 0 or sv == 0:
        return None
    value = float(((u - u.mean()) * (v - v.mean())).mean() / (su * sv))
    return max(-1.0, min(1.0, value))  # rounding can land 2e-16 outside


def spearman(u: np.ndarray, v: np.ndarray) -> float | None:
    """Spearman's rho: Pearson of the average ranks (ties as scipy's ``spearmanr``)."""
    from scipy.stats import rankdata

    return pearson(rankdata(u), rankdata(v))


def _pair(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    keep = ~(np.isnan(a) | np.isnan(b))
    if keep.sum() < MIN_PAIRS:
        return None, None
    x, y = a[keep], b[keep]
    return spearman(x, y), pearson(x, y)


def _matrix(columns: np.ndarray, labels: list[str], groups: list[str]) -> Correlations:
    n = columns.shape[1]
    rho: list[list[float | None]] = [[None] * n for _ in range(n)]
    r: list[list[float | None]] = [[None] * n for _ in range(n)]
    for i in range(n):
        for j in range(i, n):
            rho[i][j], r[i][j] = _pair(columns[:, i], columns[:, j])
            rho[j][i], r[j][i] = rho[i][j], r[i][j]
    return Correlations(labels, groups, rho, r)


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


def write_matrix(matrix: Correlations, path: Path, kind: str = "spearman") -> Path:
    """The matrix as CSV: a header of labels, one row per label (group in the second column)."""
    values = matrix.spearman if kind == "spearman" else matrix.pearson
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["", "group", *matrix.labels])
        for label, group, row in zip(matrix.labels, matrix.groups, values, strict=True):
            out.writerow([label, group, *("" if v is None else f"{v:.6f}" for v in row)])
    return path
