"""A benchmark's board: each scanned model's main scores (and detail scores, times, the file
scored) on the benchmark's tasks under its protocol, which benchmark a set of results covers
best, and notes where models scored different data. The top layer of ``schema`` (a result file)
-> ``model_folder`` (a model) -> ``scan`` (a folder of models) -> ``board``; ``ranking`` ranks
what it holds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval.tasks import (
    Benchmark,
    Task,
    benchmark_tasks,
    eval_splits,
    get_benchmark,
    main_score,
)
from chemteb_eval.tasks.catalog import TaskCatalog
from chemteb_eval.tasks.kinds import KINDS

from .model_folder import ScannedModel
from .scan import catalog_of, scan_results
from .schema import ResultFile, match_task
from .software import software_notes

__all__ = [
    "DEFAULT_BENCHMARK",
    "DERIVED_KEYS",
    "DETAIL_KEYS",
    "BenchmarkCoverage",
    "ModelResults",
    "benchmark_coverage",
    "choose_benchmark",
    "experiment_kwargs_of",
    "read_results",
    "variant_base",
]


# What `rank` and the Space show when the results say nothing (no file matches any benchmark),
# and the first of equally covered benchmarks.
DEFAULT_BENCHMARK = "ChemTEB(paper)"


# Scores the per-task views show beside the main score, per task type (MTEB's key names).
DETAIL_KEYS: Mapping[str, tuple[str, ...]] = {name: k.detail_keys for name, k in KINDS.items()}


@dataclass
class ModelResults:
    """One model's main scores on a benchmark's tasks."""

    model: str
    folder: Path
    scores: dict[str, float] = field(default_factory=dict)  # task name -> main score
    revision_mismatches: int = 0
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason
    notes: list[str] = field(default_factory=list)  # e.g. two folders naming one model
    seconds: dict[str, float] = field(default_factory=dict)  # task -> evaluation_time
    details: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> DETAIL_KEYS
    files: dict[str, ResultFile] = field(default_factory=dict)  # task -> the file scored
    meta: dict[str, Any] = field(default_factory=dict)
    run_meta: dict[str, Any] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (task, score key) -> its checked evidence or None: each items file is read once per board
    evidence: dict[tuple[str, str], Any] = field(default_factory=dict, repr=False)


def read_results(
    roots: Iterable[str | Path] | list[ScannedModel],
    bench: Benchmark,
    *,
    model_table: str | Path | None = None,
) -> list[ModelResults]:
    """Every model folder under ``roots`` with its scores on ``bench``'s tasks.

    A task file is matched to the benchmark by task name or alias; a dataset revision other than
    the pinned one counts as a mismatch. Malformed files are skipped and listed, never fatal.

    Args:
        roots: result folders, or what ``scan_results`` returned for them.
        bench: the benchmark.
        model_table: see ``scan_results``.

    Returns:
        One ``ModelResults`` per model folder (several revisions merge; the newest file wins).
    """
    items = list(roots)
    if items and all(isinstance(i, ScannedModel) for i in items):
        scanned = [i for i in items if isinstance(i, ScannedModel)]
    else:
        scanned = scan_results(
            [i for i in items if not isinstance(i, ScannedModel)], model_table=model_table
        )
    tasks = benchmark_tasks(bench)
    models = [_model_results(source, bench, tasks) for source in scanned]
    _leave_out_stale_variants(models)
    _note_other_data(models, tasks)
    _note_software(models)
    return models


# The experiment_kwargs a variant scored from its model's own vectors adds to its model's
# (scoring.compression.Compression.kwargs): its dimensions cut, its precision, a hybrid's.
DERIVED_KEYS = ("truncate_dim", "output_dtypes", "hybrid", "fusion", "rrf_k")


def experiment_kwargs_of(m: ModelResults) -> dict[str, Any]:
    """The row's ``experiment_kwargs`` (its model_meta.json's; empty for the model itself)."""
    found = m.meta.get("experiment_kwargs") if isinstance(m.meta, dict) else None
    return dict(found) if isinstance(found, dict) else {}


def variant_base(m: ModelResults, models: Iterable[ModelResults]) -> ModelResults | None:
    """The row whose vectors a variant row was scored from: the same model folder, the same
    experiment less the variant's own keys (``DERIVED_KEYS``). ``None`` for a row that is no
    such variant, or whose model row is not among ``models``."""
    kwargs = experiment_kwargs_of(m)
    if not any(k in kwargs for k in DERIVED_KEYS):
        return None
    want = {k: v for k, v in kwargs.items() if k not in DERIVED_KEYS}
    for other in models:
        if other is not m and other.folder == m.folder and experiment_kwargs_of(other) == want:
            return other
    return None


def _leave_out_stale_variants(models: list[ModelResults]) -> None:
    """A variant's task scored from other vectors than its model's current result of the task
    (both files record their vectors' digest: the model changed under its name and revision,
    and its folder was rescored without the variant) is left out of the variant's row, said."""
    for m in models:
        base = variant_base(m, models)
        if base is None:
            continue
        for task, file in list(m.files.items()):
            theirs = base.files.get(task)
            ours = file.extra.get("vectors")
            if theirs is None or not isinstance(ours, str):
                continue
            if theirs.extra.get("vectors", ours) == ours:
                continue
            for table in (m.scores, m.files, m.details, m.seconds):
                table.pop(task, None)
            m.skipped.append(
                f"{file.path}: scored from other vectors than {base.model}'s current {task} "
                "result (the model changed under its name and revision); rerun with the "
                "variant's flags and --overwrite."
            )


@dataclass(frozen=True)
class BenchmarkCoverage:
    """How much of one benchmark a set of result folders holds."""

    benchmark: Benchmark
    tasks: int  # the benchmark's tasks
    models: int  # models with a score on at least one of them
    complete: int  # models with a score on every one
    scores: int  # (model, task) scores found

    def describe(self) -> str:
        """``1 of 2 model(s) complete on its 7 tasks``; ``3 score(s) on its 35 tasks, no model
        complete``; ``none of its 35 tasks``."""
        if self.complete:
            return f"{self.complete} of {self.models} model(s) complete on its {self.tasks} tasks"
        if self.scores:
            return f"{self.scores} score(s) on its {self.tasks} tasks, no model complete"
        return f"none of its {self.tasks} tasks"


def benchmark_coverage(
    scanned: list[ScannedModel], catalog: TaskCatalog | None = None
) -> list[BenchmarkCoverage]:
    """Every benchmark's coverage by ``scanned`` (the registered ones, and ``Custom`` when the
    catalog — by default ``catalog_of(scanned)`` — holds a user's tasks), best covered first:
    most complete models, then most scores per task, then ``DEFAULT_BENCHMARK``, then the most
    tasks (a benchmark covered as fully as a smaller one says more), then registry order."""
    known = (catalog or catalog_of(scanned)).known_benchmarks()
    found = []
    for bench in known:
        tasks = len(benchmark_tasks(bench))
        counts = [len(m.scores) for m in read_results(scanned, bench)]
        found.append(
            BenchmarkCoverage(
                benchmark=bench,
                tasks=tasks,
                models=sum(1 for n in counts if n),
                complete=sum(1 for n in counts if n == tasks),
                scores=sum(counts),
            )
        )
    order = [b.name for b in known]
    return sorted(
        found,
        key=lambda c: (
            -c.complete,
            -c.scores / c.tasks,
            c.benchmark.name != DEFAULT_BENCHMARK,
            -c.tasks,
            order.index(c.benchmark.name),
        ),
    )


def choose_benchmark(
    scanned: list[ScannedModel], catalog: TaskCatalog | None = None
) -> tuple[Benchmark, str]:
    """The registered benchmark ``scanned`` covers best (``benchmark_coverage``), and why, as a
    clause for a sentence that names it: ``the benchmark these results cover best (1 of 1
    model(s) complete on its 7 tasks; no other benchmark has any of their tasks)``. With no
    score on any benchmark, ``DEFAULT_BENCHMARK``, saying so."""
    ranked = benchmark_coverage(scanned, catalog)
    best = ranked[0]
    if not best.scores:
        return get_benchmark(DEFAULT_BENCHMARK), (
            "the default: no result file here is a task of any registered benchmark"
        )
    why = f"the benchmark these results cover best ({best.describe()}"
    runner_up = ranked[1] if len(ranked) > 1 else None
    if runner_up is not None and runner_up.scores:
        why += f"; next best {runner_up.benchmark.name}: {runner_up.describe()}"
    elif runner_up is not None:
        why += "; no other benchmark has any of their tasks"
    return best.benchmark, why + ")"


def _note_other_data(models: list[ModelResults], tasks: list[Task]) -> None:
    """A task built locally names its data by fingerprint: when models scored different data
    (PipChem's small build and its full one, an edited copy), the models whose data is not the
    most common get a note. Their scores stay on the board: a rebuilt suite is still a result,
    but it is not comparable, and the reader should know."""
    for task in tasks:
        if task.revision is not None:
            continue
        data = {
            m.model: f.dataset_revision
            for m in models
            if (f := m.files.get(task.name)) is not None and f.dataset_revision is not None
        }
        counts = Counter(data.values())
        if len(counts) < 2:
            continue
        (common, n), (_, runner_up) = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
        for m in models:
            if m.model not in data:
                continue
            if n == runner_up:  # no data most models share: every model is told
                m.notes.append(
                    f"{task.name}: models were scored on {len(counts)} different versions of its "
                    f"data; {m.model}'s ({data[m.model]}) is comparable only with those on the same."
                )
            elif data[m.model] != common:
                m.notes.append(
                    f"{task.name}: {m.model} was scored on other data ({data[m.model]}) than "
                    f"{n} other model(s) ({common}); its score is not comparable with theirs."
                )


def _note_software(models: list[ModelResults]) -> None:
    """Where the results on the board were computed under different versions of a library
    (``results.software``), every model involved gets the note (``rank`` prints it once)."""
    files = [(m.model, f.extra) for m in models for f in m.files.values()]
    for note, concerned in software_notes(files):
        for m in models:
            if m.model in concerned and note not in m.notes:
                m.notes.append(note)


def _model_results(source: ScannedModel, bench: Benchmark, tasks: list[Task]) -> ModelResults:
    result = ModelResults(
        model=source.name,
        folder=source.folder,
        skipped=list(source.skipped),
        notes=list(source.notes),
        meta=source.meta,
        run_meta=source.run_meta,
        runs=source.runs,
    )
    for file in source.files:
        task = match_task(file.task_name, file.dataset_revision, tasks)
        if task is None:
            continue
        splits = eval_splits(bench, task)
        try:
            score = file.score(main_score(bench, task), splits, task.subset_weight_key)
        except ValueError as exc:
            result.skipped.append(f"{file.path}: {exc}")
            continue
        if score is None:
            result.skipped.append(
                f"{file.path}: no {main_score(bench, task)} for the benchmark's splits"
            )
            continue
        result.scores[task.name] = score
        result.files[task.name] = file
        details = {}
        for key in DETAIL_KEYS[task.type]:
            try:
                value = file.score(key, splits, task.subset_weight_key)
            except ValueError:
                value = None
            if value is not None:
                details[key] = value
        result.details[task.name] = details
        if _timed_with_encoding(file) and file.evaluation_time and file.evaluation_time > 0:
            result.seconds[task.name] = file.evaluation_time
        if task.revision_status(file.dataset_revision) != "pinned":
            result.revision_mismatches += 1
    return result


def _timed_with_encoding(file: ResultFile) -> bool:
    """Whether ``evaluation_time`` includes encoding, as MTEB's does. Earlier chemteb-eval
    runs timed scoring alone (their files have ``chemteb_eval_version`` but no
    ``encode_seconds``): such a time is not a speed and is left out."""
    return "chemteb_eval_version" not in file.extra or "encode_seconds" in file.extra
