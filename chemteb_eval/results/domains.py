"""ChemTEB against general-domain MTEB, per task type (the ChemTEB paper's Figure 3): does a
model's MTEB rank carry over to chemistry?

Per task type present in both benchmarks (classification, clustering, pair classification,
retrieval), each model's mean over the type's tasks on each side, Spearman's rho between the two
rankings with a bootstrap interval over models, and the models that gain or lose most ranks.
Like is compared with like: the ChemTEB side uses the metric MTEB's English leaderboard shows for
the type (``AXIS_METRICS``: accuracy, V-measure, AP, nDCG@10), not the paper's ranking metric.

A model is plotted for a type only with every ChemTEB task of the type and at least
``min_mteb_coverage`` of the MTEB tasks of the type (default all of them); the others are listed
with what they lack, never plotted with a silently partial mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import Benchmark, benchmark_tasks
from chemteb_eval.tasks.kinds import kind as task_kind

from .board import ModelResults
from .correlations import spearman, spearman_rows
from .mteb_scores import DOMAIN_TYPES, MtebScores

__all__ = [
    "AXIS_METRICS",
    "DOMAIN_TYPES",
    "DomainComparison",
    "compare_domains",
]

# The metric each axis shows, per type: MTEB(eng, v1)'s main scores (its leaderboard's metrics).
AXIS_METRICS: dict[str, str] = {t: str(task_kind(t).mteb_metric) for t in DOMAIN_TYPES}


@dataclass
class DomainComparison:
    """One task type's comparison."""

    kind: str
    metric: str
    points: dict[str, tuple[float, float]]  # model -> (MTEB mean, ChemTEB mean)
    rho: float | None
    interval: tuple[float, float] | None
    rank_changes: list[tuple[str, int, int]]  # (model, MTEB rank, ChemTEB rank), by change
    excluded: dict[str, str]  # model -> what it lacks
    n_mteb_tasks: int
    n_chemteb_tasks: int
    n_mteb_needed: int  # MTEB tasks of the type a model needs to be plotted

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "metric": self.metric,
            "n_mteb_tasks": self.n_mteb_tasks,
            "n_chemteb_tasks": self.n_chemteb_tasks,
            "n_mteb_needed": self.n_mteb_needed,
            "points": {m: {"mteb": a, "chemteb": b} for m, (a, b) in self.points.items()},
            "spearman": self.rho,
            "spearman_interval": list(self.interval) if self.interval else None,
            "rank_changes": [
                {"model": m, "mteb_rank": a, "chemteb_rank": b} for m, a, b in self.rank_changes
            ],
            "excluded": self.excluded,
        }


def compare_domains(
    models: Iterable[ModelResults],
    bench: Benchmark,
    mteb: MtebScores,
    *,
    min_mteb_coverage: float = 1.0,
    resamples: int = 1000,
    seed: int = 0,
    types: Iterable[str] = DOMAIN_TYPES,
) -> list[DomainComparison]:
    """Per type in ``DOMAIN_TYPES`` that ``bench`` has: the points, Spearman's rho with a 95%
    percentile bootstrap interval over models (resampled with replacement; resamples where a
    side is constant are left out), the rank changes (largest first) and the excluded models.
    ``types`` narrows the types computed (the Space draws one at a time)."""
    if not 0 < min_mteb_coverage <= 1:
        raise ValueError(f"min_mteb_coverage: must be in (0, 1], got {min_mteb_coverage}.")
    models = list(models)
    tasks = benchmark_tasks(bench)
    out = []
    chosen = set(types)
    for kind in (k for k in DOMAIN_TYPES if k in chosen):
        chem_tasks = [t.name for t in tasks if t.type == kind]
        mteb_tasks = mteb.tasks_of(kind)
        if not chem_tasks or not mteb_tasks:
            continue
        metric = AXIS_METRICS[kind]
        need = math.ceil(min_mteb_coverage * len(mteb_tasks))
        points, excluded = {}, {}
        for model in models:
            chem = [model.details.get(t, {}).get(metric) for t in chem_tasks]
            general = [mteb.scores.get(model.model, {}).get(t) for t in mteb_tasks]
            have_general = [g for g in general if g is not None]
            if any(c is None for c in chem):
                excluded[model.model] = (
                    f"{sum(c is None for c in chem)} of {len(chem_tasks)} ChemTEB {kind} tasks "
                    f"without {metric}"
                )
            elif len(have_general) < need:
                excluded[model.model] = (
                    f"{len(have_general)} of {len(mteb_tasks)} MTEB {kind} tasks (needs {need})"
                )
            else:
                points[model.model] = (
                    float(np.mean(have_general)),
                    float(np.mean([c for c in chem if c is not None])),
                )
        out.append(
            _one_type(
                kind,
                metric,
                points,
                excluded,
                (len(mteb_tasks), len(chem_tasks), need),
                resamples,
                seed,
            )
        )
    return out


def _one_type(
    kind: str,
    metric: str,
    points: dict[str, tuple[float, float]],
    excluded: dict[str, str],
    counts: tuple[int, int, int],
    resamples: int,
    seed: int,
) -> DomainComparison:
    rho, interval = None, None
    if len(points) >= 3:
        x = np.array([p[0] for p in points.values()])
        y = np.array([p[1] for p in points.values()])
        rho = spearman(x, y)
        idx = np.random.default_rng(seed).integers(0, len(x), (resamples, len(x)))
        draws = spearman_rows(x[idx], y[idx])
        kept = draws[~np.isnan(draws)]
        if kept.size:
            low, high = np.quantile(kept, [0.025, 0.975])
            interval = (float(low), float(high))
    general = competition_ranks({m: p[0] for m, p in points.items()})
    chem = competition_ranks({m: p[1] for m, p in points.items()})
    changes = sorted(
        ((m, general[m], chem[m]) for m in points),
        key=lambda r: (-abs(r[1] - r[2]), r[0]),
    )
    return DomainComparison(kind, metric, points, rho, interval, changes, excluded, *counts)
