"""Two models, one benchmark: per-task differences with paired-bootstrap intervals (where both
runs wrote per-item evidence) and an overall verdict: the mean difference over tasks with a
bootstrap interval (tasks resampled) and an exact paired sign-flip test for its p-value (a
bootstrap over a handful of tasks is overconfident: two tasks 0.0001 apart gave "p = 0.000",
where the exact test says 0.5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chemteb_eval.scoring.uncertainty import (
    PairedResult,
    min_tasks_for,
    paired_bootstrap,
    paired_statistic_bootstrap,
    sign_flip_test,
)
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits

from .board import ModelResults, read_results
from .io import EXPERIMENTS
from .model_folder import ScannedModel
from .ranking import task_evidence
from .scan import catalog_of, scan_results, split_versions
from .schema import is_record

__all__ = [
    "Comparison",
    "TaskComparison",
    "compare_models",
    "format_p",
    "load_model",
    "load_models",
    "paired_task_interval",
]

ALPHA = 0.05


def format_p(p: float, resamples: int | None = None) -> str:
    """A p-value as printed: never "0.000" — below what the test can resolve it reads
    "<0.001" (or "<1/R" for R bootstrap resamples)."""
    floor = 0.001 if resamples is None else max(0.001, 1 / resamples)
    if p < floor:
        return f"<{floor:.3g}"
    return f"{p:.3f}"


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
    # the mean over shared tasks of A - B: interval with tasks resampled, p from the sign-flip test
    overall: PairedResult
    # tasks both have but on different data (a local task's content fingerprints differ), why
    left_out: tuple[str, ...] = ()

    @property
    def verdict(self) -> str:
        o, n, needed = self.overall, len(self.tasks), min_tasks_for(ALPHA)
        p = format_p(o.p_value)
        if n < needed:
            return (
                f"none: {n} shared tasks cannot separate two models at 5% (an exact sign-flip "
                f"test needs at least {needed}; here p = {p})"
            )
        if o.p_value >= ALPHA:
            return f"not separable at 5% (p = {p}, sign-flip test over {n} tasks)"
        better = self.model_a if o.difference > 0 else self.model_b
        return f"{better} is better (p = {p}, sign-flip test over {n} tasks)"


def _scan_one(path: str | Path) -> list[ScannedModel]:
    """The one model of a folder (``org__model``), a revision folder below it, or a results
    root holding exactly one model."""
    path = Path(path)
    if is_record(path) or (path.is_dir() and any(map(is_record, path.glob("*.json")))):
        scanned = scan_results([path], split=False)  # an EEE record, or a folder of them
        if len(scanned) != 1:
            raise ValueError(
                f"results: {path} holds {len(scanned)} models' Every Eval Ever records; pass "
                "one record (<uuid>.json)."
            )
        return scanned
    if not path.is_dir():
        raise ValueError(f"results: {path} is not a folder.")
    experiment = None
    if path.parent.name == EXPERIMENTS:  # <model>/<revision>/experiments/<name>: a variant
        experiment, path = path.name, path.parent.parent.parent
    elif any(path.glob("*.json")):  # a revision folder
        path = path.parent
    if any(path.glob("*/*.json")) or experiment:  # a model folder (or one of its experiments)
        scanned = [
            m
            for m in scan_results([path.parent], split=False)  # versions: among A and B only
            if m.folder == path and m.experiment == experiment
        ]
    else:
        scanned = scan_results([path], split=False)
    if len(scanned) != 1:
        raise ValueError(f"results: {path} holds {len(scanned)} models; pass one model's folder.")
    return scanned


def load_models(
    paths: Sequence[str | Path], bench: Benchmark | str
) -> tuple[list[ModelResults], Benchmark]:
    """Each folder's model (see ``_scan_one``) and the benchmark, read together: ``bench`` may
    be a name, looked up in the tasks the folders recorded too (``Custom``), and a task file's
    task that the folders recorded in different versions (declaration or data) is split into
    one task a version, so two versions are never compared as one task."""
    scanned = [m for path in paths for m in _scan_one(path)]
    split_versions(scanned)
    if isinstance(bench, str):
        bench = catalog_of(scanned).get_benchmark(bench)
    return read_results(scanned, bench), bench


def load_model(path: str | Path, bench: Benchmark | str) -> ModelResults:
    """One model's results (``load_models`` for one folder)."""
    return load_models([path], bench)[0][0]


def paired_task_interval(
    task: Task, bench: Benchmark, a: ModelResults, b: ModelResults, resamples: int, seed: int
) -> tuple[PairedResult | None, str]:
    """A's main score minus B's on one task with its 95% paired-bootstrap interval over the
    task's items (both runs' per-item evidence, aligned: retrieval by query id); ``None`` and
    why where there is no single item set to resample."""
    if len(eval_splits(bench, task)) * len(task.subsets) != 1:
        return None, "several splits or subsets: no single item set to resample"
    ev_a, ev_b = (task_evidence(m, bench, task) for m in (a, b))
    if ev_a is None or ev_b is None:
        return (
            None,
            "no per-item evidence for both (files written without it, or left out: see the notices)",
        )
    if ev_a.n != ev_b.n:
        return None, f"different items ({ev_a.n} vs {ev_b.n})"
    stat_b = ev_b.aligned_to(ev_a)  # B's items in A's order (retrieval: by query id)
    if stat_b is None:
        return None, "different items (the query ids differ)"
    return (
        paired_statistic_bootstrap(ev_a.statistic, stat_b, ev_a.n, resamples=resamples, seed=seed),
        "",
    )


def compare_models(
    a: ModelResults,
    b: ModelResults,
    bench: Benchmark,
    *,
    resamples: int = 1000,
    seed: int = 0,
    progress: bool = False,
) -> Comparison:
    """A minus B on every task of ``bench`` both have, and overall; ``progress``: a bar over
    the tasks on stderr (each task's bootstrap takes seconds)."""
    shared, left_out = [], []
    for t in benchmark_tasks(bench):
        if t.name not in a.scores or t.name not in b.scores:
            continue
        data = [m.files[t.name].dataset_revision if t.name in m.files else None for m in (a, b)]
        if t.revision is None and None not in data and data[0] != data[1]:
            # a local task built twice (PipChem's small and full builds): not a paired comparison
            left_out.append(f"{t.name}: A and B scored different data ({data[0]} vs {data[1]})")
            continue
        shared.append(t)
    if not shared:  # one shared task is compared on its items (a dense model against BM25's
        # one retrieval task of PipChem); the overall verdict then says it needs more tasks
        raise ValueError(
            f"results: {a.model} and {b.model} share 0 tasks of {bench.name}; nothing to compare."
        )
    from tqdm.auto import tqdm

    rows = []
    for task in tqdm(shared, desc="comparing", unit="task", disable=not progress):
        paired, why = paired_task_interval(task, bench, a, b, resamples, seed)
        rows.append(
            TaskComparison(task.name, a.scores[task.name], b.scores[task.name], paired, why)
        )
    a_scores, b_scores = [r.a for r in rows], [r.b for r in rows]
    interval = paired_bootstrap(a_scores, b_scores, resamples=resamples, seed=seed)
    p_value = sign_flip_test(a_scores, b_scores, seed=seed)
    overall = PairedResult(interval.difference, interval.low, interval.high, p_value)
    return Comparison(a.model, b.model, tuple(rows), overall, tuple(left_out))
