"""Rank the models of a board (``board.read_results``) under a benchmark's protocol: per-type
means and ranks, RRF, Borda; rank intervals and per-task intervals from the runs' evidence."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, main_score
from chemteb_eval.tasks.kinds import TASK_TYPES, kind

from .board import ModelResults
from .evidence import Evidence

__all__ = [
    "RankedModel",
    "competition_ranks_among",
    "rank_models",
    "rank_uncertainty",
    "task_evidence",
    "task_interval",
]


@dataclass(frozen=True)
class RankedModel:
    """One model's row of a benchmark's ranking (``rank_models``).

    ``row["rank"]`` reads a field as the dict rows of earlier versions did; ``to_dict()`` gives
    that dict.
    """

    # in the order of the --json keys
    model: str
    # per task type, only where the model has every one of the benchmark's tasks of the type: a
    # mean over some of them is no mean of the type (1 of 2 retrieval tasks ranked first)
    means: Mapping[str, float]
    complete: bool
    coverage: str  # "tasks scored/tasks"
    revision_mismatches: int  # task files at another dataset revision than the registry's
    mean: float | None  # over every task score the model has
    ranks: Mapping[str, int]  # per task type, among the complete models
    # None for an incomplete model: fused over some types, or points over some tasks, it is no
    # figure beside the complete models' (2 of 3 tasks showed Borda 2 against #1's 1)
    rrf: float | None
    borda: int | None
    rank: int | None  # None: the model lacks some of the benchmark's tasks
    type_coverage: Mapping[str, str] = dataclasses.field(default_factory=dict)  # "n/N" a type

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        return getattr(self, key) if key in self.__dataclass_fields__ else default

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def rank_models(models: list[ModelResults], bench: Benchmark) -> list[RankedModel]:
    """Per-type means, per-type ranks, RRF, Borda, overall rank and coverage.

    Per task type: the mean of the model's task scores where it has every task of the type
    (else none: its ``type_coverage`` says n/N), ranked among the models complete in that type
    (1 = best, ties share the lowest rank). RRF = sum over types of 1 / (k + rank) with the
    benchmark's k (10 if it has none). Borda: for every task, one point per model with a lower
    score. Complete models are ranked by RRF (``rrf`` benchmarks) or mean over tasks (``mean``);
    incomplete ones get ``rank: None``, no RRF and no Borda (``None``: over some of the tasks
    they are no figure beside the complete models') and come after, their type ranks showing
    where they would stand among the complete models.

    Returns:
        One ``RankedModel`` per model, best first.
    """
    tasks = benchmark_tasks(bench)
    types = [t for t in TASK_TYPES if any(task.type == t for task in tasks)]
    k = bench.aggregation.rrf_k or 10
    means = [_type_means(m, tasks, types) for m in models]
    complete = [all(x.name in m.scores for x in tasks) for m in models]
    # a complete model has every type; each model's type means rank among theirs
    reference: dict[str, Sequence[float]] = {
        t: [ms[t] for ms, c in zip(means, complete, strict=True) if c] for t in types
    }
    type_ranks = [competition_ranks_among(ms, reference) for ms in means]
    borda = [0] * len(models)
    for task in tasks:
        have = {i: m.scores[task.name] for i, m in enumerate(models) if task.name in m.scores}
        for i, value in have.items():
            borda[i] += sum(1 for v in have.values() if v < value)
    rrf = [float(sum(1.0 / (k + rank) for rank in r.values())) for r in type_ranks]
    mean = [float(np.mean(list(m.scores.values()))) if m.scores else None for m in models]
    by_mean = bench.aggregation.kind != "rrf"
    aggregate = mean if by_mean else rrf
    # a complete model has every task, so a mean
    overall = competition_ranks(
        {i: float(aggregate[i] or 0.0) for i, c in enumerate(complete) if c}
    )
    rows = [
        RankedModel(
            model=m.model,
            means=means[i],
            ranks=type_ranks[i],
            rrf=rrf[i] if complete[i] else None,
            borda=borda[i] if complete[i] else None,
            rank=overall.get(i),
            complete=complete[i],
            coverage=f"{sum(x.name in m.scores for x in tasks)}/{len(tasks)}",
            revision_mismatches=m.revision_mismatches,
            mean=mean[i],
            type_coverage=_type_coverage(m, tasks, types),
        )
        for i, m in enumerate(models)
    ]
    order = sorted(
        range(len(rows)),
        key=lambda i: (rows[i].rank is None, rows[i].rank or 0, -(aggregate[i] or 0.0)),
    )
    return [rows[i] for i in order]


def competition_ranks_among(
    values: Mapping[str, float], reference: Mapping[str, Sequence[float]]
) -> dict[str, int]:
    """Each ``values[t]`` ranked among ``reference[t]`` (1 + how many are higher)."""
    return {t: competition_ranks({t: v}, reference[t])[t] for t, v in values.items()}


def _type_means(m: ModelResults, tasks: list[Task], types: Sequence[str]) -> dict[str, float]:
    """The mean of each type of which the model has every task (issue 46: a mean over 1 of 2
    retrieval tasks was ranked first and shown as the best)."""
    means = {}
    for t in types:
        of_type = [x.name for x in tasks if x.type == t]
        if all(name in m.scores for name in of_type):
            means[t] = float(np.mean([m.scores[name] for name in of_type]))
    return means


def _type_coverage(m: ModelResults, tasks: list[Task], types: Sequence[str]) -> dict[str, str]:
    """Each type's tasks the model has, as ``n/N``."""
    out = {}
    for t in types:
        of_type = [x.name for x in tasks if x.type == t]
        out[t] = f"{sum(name in m.scores for name in of_type)}/{len(of_type)}"
    return out


def rank_uncertainty(
    models: list[ModelResults],
    bench: Benchmark,
    *,
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Each complete model's 95% rank interval under the benchmark's aggregate (tasks
    resampled within their type; ``scoring.uncertainty.rank_intervals``), and whether it is
    tied with the top. Incomplete models get none.

    Returns:
        ``{model: {rank, rank_low, rank_high, top_share, tied_with_top}}``.
    """
    from chemteb_eval.scoring.uncertainty import rank_intervals

    tasks = benchmark_tasks(bench)
    complete = [m for m in models if all(t.name in m.scores for t in tasks)]
    if len(complete) < 2:
        return {}
    kind: Literal["rrf", "mean"] = "rrf" if bench.aggregation.kind == "rrf" else "mean"
    intervals = rank_intervals(
        {m.model: {t.name: m.scores[t.name] for t in tasks} for m in complete},
        {t.name: t.type for t in tasks},
        aggregation=kind,
        rrf_k=bench.aggregation.rrf_k or 10,
        resamples=resamples,
        confidence=confidence,
        seed=seed,
        item_resampler=_item_resampler(complete, bench, tasks),
    )
    return intervals.as_dict()


def _mean_of_items(task_type: str, key: str) -> bool:
    """Two-level resampling recomputes every model's score on every resample: affordable for
    scores that are means of items (``TaskKind.mean_of_items``: retrieval's per-query metrics,
    the probe's accuracy), not for threshold sweeps, weighted F1 or k-means metrics."""
    return key in kind(task_type).mean_of_items


def task_evidence(
    model: ModelResults, bench: Benchmark, task: Task, key: str | None = None
) -> Evidence | None:
    """The checked per-item evidence behind a model's ``key`` (default the benchmark's main
    score) on a task (``<Task>.items.npz``), when the benchmark scores the task on one split and
    subset and the run wrote items; else ``None``.

    The file is untrusted (``evidence.check_evidence``): one that fails a check — unreadable,
    mis-shaped, NaN, out of range, or items that do not reproduce the JSON's score — is left
    out with a notice in ``model.skipped``, and the task falls back to task-level resampling.
    """
    key = key or main_score(bench, task)
    if (task.name, key) not in model.evidence:
        model.evidence[(task.name, key)] = _checked_evidence(model, bench, task, key)
    found: Evidence | None = model.evidence[(task.name, key)]
    return found


def _checked_evidence(
    model: ModelResults, bench: Benchmark, task: Task, key: str
) -> Evidence | None:
    from .evidence import check_evidence, read_items
    from .schema import items_path

    splits = eval_splits(bench, task)
    file = model.files.get(task.name)
    if len(splits) * len(task.subsets) != 1 or file is None or file.path is None:
        return None
    source = file.items  # an EEE record's sidecar; else the items file beside the result
    path = source.path if source is not None else items_path(file.path)
    if source is None and not path.exists() and not path.is_symlink():
        return None  # no items written: nothing to say (a folder, FIFO or link: read_items says)
    try:
        score = file.score(key, splits, task.subset_weight_key)
        if score is None:
            raise ValueError(f"the result file has no {key} to check them against")
        items = source.read(task.type, key) if source is not None else read_items(path)
        found = items.get((splits[0], task.subsets[0]))
        if found is None:
            raise ValueError(f"no items for split {splits[0]!r}, subset {task.subsets[0]!r}")
        return check_evidence(task.type, found, key, score)
    except (KeyError, ValueError) as exc:
        reason = str(exc).removeprefix(f"{path}: ")
        model.skipped.append(
            f"{path}: evidence left out ({reason}); {task.name}'s interval resamples tasks"
        )
        return None


def _item_resampler(models: list[ModelResults], bench: Benchmark, tasks: list[Task]) -> Any:
    """Where every model's run wrote items for a task whose score is a mean of items, a
    callable that redraws those tasks' items (the same items for every model) and returns the
    models' recomputed scores; ``None`` when no task qualifies (e.g. published files)."""
    per_task: dict[str, tuple[int, dict[str, Any]]] = {}
    for task in tasks:
        key = main_score(bench, task)
        if not _mean_of_items(task.type, key):
            continue
        stats: dict[str, Any] = {}
        first: Evidence | None = None
        for m in models:
            evidence = task_evidence(m, bench, task, key)
            if evidence is None:
                break
            first = first or evidence
            statistic = evidence.aligned_to(first)  # every model's items in one order
            if statistic is None:
                break
            stats[m.model] = statistic
        if first is not None and len(stats) == len(models):
            per_task[task.name] = (first.n, stats)
    if not per_task:
        return None

    def redraw(rng: Any) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {m.model: {} for m in models}
        for name, (n, stats) in per_task.items():
            idx = rng.integers(0, n, size=n)
            for model, stat in stats.items():
                out[model][name] = stat(idx)
        return out

    return redraw


def task_interval(
    model: ModelResults, bench: Benchmark, task: Task, *, resamples: int = 1000, seed: int = 0
) -> tuple[float, float] | None:
    """The 95% interval of a model's main score on a task, resampling the task's items, where
    its run wrote them and the score is a mean of items (cheap enough for every table); else
    ``None``."""
    from chemteb_eval.scoring.uncertainty import bootstrap_ci

    key = main_score(bench, task)
    evidence = task_evidence(model, bench, task, key) if _mean_of_items(task.type, key) else None
    if evidence is None:
        return None
    try:
        _, low, high = bootstrap_ci(evidence.statistic, evidence.n, resamples=resamples, seed=seed)
    except (KeyError, ValueError):
        return None
    return low, high
