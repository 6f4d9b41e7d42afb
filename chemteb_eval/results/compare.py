"""Two models, one benchmark: per-task differences with paired-bootstrap intervals (where both
runs wrote per-item evidence) and an overall verdict (tasks resampled)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chemteb_eval.scoring.uncertainty import (
    PairedResult,
    paired_bootstrap,
    paired_statistic_bootstrap,
    task_statistic,
)
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, main_score

from .ranking import ModelResults, read_results, scan_results, task_evidence

__all__ = ["Comparison", "TaskComparison", "compare_models", "load_model"]


@dataclass(frozen=True)
class TaskComparison:
    """A's main score minus B's on one task; the interval and p-value where both have items."""

    task: str
    a: float
    b: float
    paired: PairedResult | None  # None: no per-item evidence for both (e.g. published files)
    why_no_interval: str = ""

    @property
    def difference(self) -> float:
        return self.a - self.b


@dataclass(frozen=True)
class Comparison:
    model_a: str
    model_b: str
    tasks: tuple[TaskComparison, ...]
    overall: PairedResult  # the mean over shared tasks of A - B, tasks resampled

    @property
    def verdict(self) -> str:
        o = self.overall
        if o.p_value >= 0.05:
            return f"not separable at 5% (p = {o.p_value:.3f})"
        better = self.model_a if o.difference > 0 else self.model_b
        return f"{better} is better (p = {o.p_value:.3f})"


def load_model(path: str | Path, bench: Benchmark) -> ModelResults:
    """One model's results from its folder (``org__model``), a revision folder below it, or a
    results root holding exactly one model."""
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"results: {path} is not a folder.")
    if any(path.glob("*.json")):  # a revision folder
        path = path.parent
    if any(path.glob("*/*.json")):  # a model folder
        scanned = [m for m in scan_results([path.parent]) if m.folder == path]
    else:
        scanned = scan_results([path])
    if len(scanned) != 1:
        raise ValueError(f"results: {path} holds {len(scanned)} models; pass one model's folder.")
    return read_results(scanned, bench)[0]


def _task_interval(
    task: Task, bench: Benchmark, a: ModelResults, b: ModelResults, resamples: int, seed: int
) -> tuple[PairedResult | None, str]:
    if len(eval_splits(bench, task)) * len(task.subsets) != 1:
        return None, "several splits or subsets: no single item set to resample"
    evidence = [task_evidence(m, bench, task) for m in (a, b)]
    if evidence[0] is None or evidence[1] is None:
        return None, "no per-item evidence (files written without it)"
    key = main_score(bench, task)
    try:
        (stat_a, n_a), (stat_b, n_b) = (
            task_statistic(task.type, found, key) for found in evidence if found is not None
        )
    except (KeyError, ValueError) as exc:
        return None, f"no item evidence for {key} ({exc})"
    if n_a != n_b:
        return None, f"different items ({n_a} vs {n_b})"
    return paired_statistic_bootstrap(stat_a, stat_b, n_a, resamples=resamples, seed=seed), ""


def compare_models(
    a: ModelResults,
    b: ModelResults,
    bench: Benchmark,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> Comparison:
    """A minus B on every task of ``bench`` both have, and overall."""
    shared = [t for t in benchmark_tasks(bench) if t.name in a.scores and t.name in b.scores]
    if len(shared) < 2:
        raise ValueError(
            f"results: {a.model} and {b.model} share {len(shared)} task(s) of {bench.name}; "
            "need at least two to compare."
        )
    rows = []
    for task in shared:
        paired, why = _task_interval(task, bench, a, b, resamples, seed)
        rows.append(
            TaskComparison(task.name, a.scores[task.name], b.scores[task.name], paired, why)
        )
    overall = paired_bootstrap(
        [r.a for r in rows], [r.b for r in rows], resamples=resamples, seed=seed
    )
    return Comparison(a.model, b.model, tuple(rows), overall)
