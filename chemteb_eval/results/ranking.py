"""Read result folders (ours and MTEB's layout) and rank models under a benchmark's protocol."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import (
    Benchmark,
    Task,
    benchmark_tasks,
    eval_splits,
    get_benchmark,
    main_score,
)
from chemteb_eval.tasks.catalog import TaskCatalog
from chemteb_eval.tasks.kinds import KINDS, TASK_TYPES, kind

from .evidence import Evidence
from .inputs import model_name, model_table_paths, read_model_table
from .io import EXPERIMENTS, experiment_label
from .runs import LEGACY_RUN_META, RUNS_FILE, latest_run, read_runs
from .schema import ResultFile, match_task, read_json_object

__all__ = [
    "DEFAULT_BENCHMARK",
    "DETAIL_KEYS",
    "BenchmarkCoverage",
    "ModelResults",
    "RankedModel",
    "ScannedModel",
    "benchmark_coverage",
    "catalog_of",
    "choose_benchmark",
    "rank_models",
    "read_model_table",
    "read_results",
    "scan_results",
    "split_versions",
]

# What `rank` and the Space show when the results say nothing (no file matches any benchmark),
# and the first of equally covered benchmarks.
DEFAULT_BENCHMARK = "ChemTEB(paper)"

# Scores the per-task views show beside the main score, per task type (MTEB's key names).
DETAIL_KEYS: Mapping[str, tuple[str, ...]] = {name: k.detail_keys for name, k in KINDS.items()}


@dataclass
class ScannedModel:
    """One model folder, its JSON files parsed once (so several benchmarks can be scored)."""

    folder: Path
    name: str
    meta: dict[str, Any] = field(default_factory=dict)  # model_meta.json, if any
    run_meta: dict[str, Any] = field(default_factory=dict)  # the newest folder's latest_run
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # runs.jsonl: run id -> record
    files: list[ResultFile] = field(default_factory=list)  # oldest first
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason
    notes: list[str] = field(default_factory=list)  # what a reader should know; nothing skipped
    custom: list[Task] = field(default_factory=list)  # tasks its task-file runs recorded
    # MTEB's experiment folder name (another backend or dtype of the model), None for the model
    experiment: str | None = None


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


def _model_table(root: Path, given: str | Path | None) -> dict[str, str]:
    """Result folder name -> model id, from the model table named, else one in or beside the
    results folder (``inputs.model_table_paths``: the one rule), if any."""
    if given is not None and not Path(given).is_file():
        raise ValueError(f"model_table: {given} is not a file; pass a paper_models.csv.")
    names: dict[str, str] = {}
    for path in model_table_paths([root], given):
        if path.is_file():
            names.update(
                {
                    row["results_dir"]: row["model_id"]
                    for row in read_model_table(path).values()
                    if row.get("results_dir")
                }
            )
    return names


def _by_mtime(files: Iterable[Path], skipped: list[str]) -> list[Path]:
    """``files`` oldest first; a file that cannot be stat-ed is skipped with the reason."""
    dated = []
    for path in files:
        try:
            dated.append((path.stat().st_mtime, str(path), path))
        except OSError as exc:
            skipped.append(f"{path}: {exc.strerror or exc}")
    return [path for *_, path in sorted(dated)]


def scan_results(
    roots: Iterable[str | Path],
    *,
    model_table: str | Path | None = None,
    split: bool = True,
) -> list[ScannedModel]:
    """Parse every result file under ``roots`` once.

    Layout: ``root/<model>/<revision>/<Task>.json`` (ours and MTEB's). Unreadable files are
    listed in ``skipped``, never fatal.

    Args:
        roots: result folders.
        model_table: a CSV with ``results_dir`` and ``model_id`` columns naming the folders (the
            paper's ``paper_models.csv``); default one in or beside a root (``inputs``).
        split: tell apart the versions of a custom task the models recorded
            (``split_versions``); ``False`` where the caller splits among fewer models.

    Returns:
        One ``ScannedModel`` per model folder that holds JSON files.
    """
    scanned: list[ScannedModel] = []
    for root in map(Path, roots):
        if not root.is_dir():
            raise ValueError(f"results: {root} is not a folder.")
        problem = ""
        try:
            table = _model_table(root, model_table)
        except ValueError as exc:
            if model_table:  # asked for by name: the caller says so in one line
                raise
            table, problem = {}, f"{exc} Folder names are shown instead."  # found beside: go on
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            for experiment, dirs in _result_dirs(folder):
                model = _scan_model(folder, experiment, dirs, table, problem)
                if model is not None:
                    scanned.append(model)
                    problem = ""  # told once, with the first model of the root
    _tell_apart(scanned)
    if split:
        split_versions(scanned)
    return scanned


def _result_dirs(folder: Path) -> list[tuple[str | None, list[Path]]]:
    """A model folder's result folders: its revision folders (``None``: the model as it is),
    then each experiment's (MTEB's ``<revision>/experiments/<name>/``: another backend or
    compute dtype of the model, which is another row, never mixed into the model's)."""
    revisions = sorted(p for p in folder.iterdir() if p.is_dir())
    out: list[tuple[str | None, list[Path]]] = [(None, revisions)]
    names = sorted({e.name for r in revisions for e in (r / EXPERIMENTS).glob("*") if e.is_dir()})
    out += [(name, [r / EXPERIMENTS / name for r in revisions]) for name in names]
    return out


def _scan_model(
    folder: Path,
    experiment: str | None,
    dirs: list[Path],
    table: Mapping[str, str],
    problem: str,
) -> ScannedModel | None:
    """One model's (or one experiment's) files, parsed once; ``None`` when it has none."""
    unreadable: list[str] = []
    # run records (a legacy run_meta.json too) are _read_runs's
    found = (p for d in dirs for p in d.glob("*.json") if p.name != LEGACY_RUN_META)
    files = _by_mtime(found, unreadable)
    if not files and not unreadable:
        return None
    if problem:
        unreadable.insert(0, problem)
    model = ScannedModel(folder=folder, name=model_name(folder, None, table), skipped=unreadable)
    model.experiment = experiment
    for path in files:
        try:
            payload = read_json_object(path)
            if path.name == "model_meta.json":
                model.meta = payload
                model.name = model_name(folder, payload, table)
            else:
                model.files.append(ResultFile.from_dict(payload, path))
        except (OSError, ValueError) as exc:
            model.skipped.append(f"{path}: {exc}")
    if experiment is not None:  # MTEB's own way to name it: "model (backend=onnx-int8)"
        model.name = f"{model.name} ({experiment_label(model.meta, experiment)})"
    _read_runs(dirs, model)
    model.custom = _recorded_tasks(dirs, model.skipped)
    return model


def _recorded_tasks(dirs: list[Path], skipped: list[str]) -> list[Task]:
    """The tasks a model's task-file runs recorded beside their results (untrusted: a file that
    is not a declaration the run writes is skipped with the reason)."""
    from chemteb_eval.tasks.custom import TASK_FILE_SUFFIX, TaskFileError, read_recorded_task

    found = []
    for path in sorted(p for d in dirs for p in d.glob(f"*{TASK_FILE_SUFFIX}")):
        try:
            task = read_recorded_task(path)
        except TaskFileError as exc:  # its message names the file
            skipped.append(str(exc))
            continue
        except OSError as exc:
            skipped.append(f"{path}: {exc.strerror or exc}")
            continue
        if task.name != path.name.removesuffix(TASK_FILE_SUFFIX):
            skipped.append(
                f"{path}: declares a task named {task.name!r}, not the one its file is named "
                "after; left out (the run writes each task's declaration under its own name)."
            )
            continue
        found.append(task)
    return found


def split_versions(scanned: list[ScannedModel]) -> None:
    """The custom tasks the results recorded, one task a declaration: where models scored
    different declarations or data under one name, each version becomes a task of its own,
    named ``Name(<8 hex>)`` after its content (its declaration digest and data), and each
    model's file is read as the version it recorded, with a note saying so. No order (of
    folders, of models) decides which version "is the task". A name a registered task has is
    refused for every model that recorded it."""
    from chemteb_eval.tasks.registry import check_custom_name, list_tasks_builtin

    builtin = {n.casefold() for t in list_tasks_builtin() for n in (t.name, *t.aliases)}
    versions: dict[str, set[tuple[str, str, str]]] = {}  # name -> {(spelling, declaration, data)}
    for model in scanned:
        kept = []
        for task in model.custom:
            if task.name.casefold() in builtin:
                model.skipped.append(
                    f"{model.folder}: a task file's task is named {task.name!r}, as a registered "
                    "task is; its results are read as that task's."
                )
                continue
            try:  # a name MTEB knows, or a results file's stem: recorded before it was refused
                check_custom_name(task.name)
            except ValueError as exc:
                model.skipped.append(f"{model.folder}: a recorded task file's {exc}; left out.")
                continue
            digest = _result_declaration(task, model)
            if digest is not None and digest != task.declaration_digest():
                model.skipped.append(
                    f"{model.folder}: {task.name}.task.yaml declares another task than its "
                    f"result was computed from ({task.declaration_digest()}, the result "
                    f"{digest}); left out: edited after the run?"
                )
                continue
            kept.append(task)
            versions.setdefault(task.name.casefold(), set()).add(_version(task, model))
        model.custom = kept
    # one name in any letter case is one name (the folders of two OSes fold case)
    split = {name for name, seen in versions.items() if len(seen) > 1}
    for model in scanned:
        renamed = {t.name: _versioned(t, model) for t in model.custom if t.name.casefold() in split}
        if not renamed:
            continue
        model.custom = [replace(t, name=renamed.get(t.name, t.name)) for t in model.custom]
        model.files = [
            replace(f, task_name=renamed[f.task_name]) if f.task_name in renamed else f
            for f in model.files
        ]
        for old, new in sorted(renamed.items()):
            model.notes.append(
                f"{old}: models recorded {len(versions[old.casefold()])} different declarations "
                f"or data under this name; {model.name}'s is shown as {new}, apart from the others."
            )


def _result_declaration(task: Task, model: ScannedModel) -> str | None:
    """The declaration digest the model's result of ``task`` records, if it records one."""
    for file in model.files:
        if file.task_name == task.name and isinstance(file.extra.get("task_declaration"), str):
            return str(file.extra["task_declaration"])
    return None


def _version(task: Task, model: ScannedModel) -> tuple[str, str, str]:
    """What a model's result of a custom task was computed from: its spelling of the name, and
    the declaration digest and data its result file records (else its recorded task's)."""
    declaration, data = task.declaration_digest(), task.revision or ""
    for file in model.files:
        if file.task_name == task.name:
            recorded = file.extra.get("task_declaration")
            declaration = recorded if isinstance(recorded, str) else declaration
            data = file.dataset_revision or data
    return task.name, declaration, data


def _versioned(task: Task, model: ScannedModel) -> str:
    import hashlib

    key = "\0".join(_version(task, model)).encode()
    return f"{task.name}({hashlib.sha256(key).hexdigest()[:8]})"


def catalog_of(scanned: list[ScannedModel]) -> TaskCatalog:
    """The tasks ``scanned`` knows: the registered ones and every custom task its models
    recorded (after ``scan_results`` split versions apart: one record a name)."""
    tasks: dict[str, Task] = {}
    for model in scanned:
        for task in model.custom:
            tasks.setdefault(task.name, task)
    return TaskCatalog.with_tasks(tasks.values())


def _read_runs(dirs: list[Path], model: ScannedModel) -> None:
    """Every run's record (``runs.jsonl`` in each revision folder, or a legacy
    ``run_meta.json``), by run id; ``run_meta``, the newest folder's ``latest_run``."""
    logs = [p for d in dirs for p in (d / RUNS_FILE, d / LEGACY_RUN_META) if p.exists()]
    seen: set[Path] = set()
    for path in _by_mtime(logs, model.skipped):
        if path.parent in seen:
            continue
        seen.add(path.parent)
        records, problems = read_runs(path.parent)
        model.skipped.extend(problems)
        for record in records:
            if isinstance(record.get("run_id"), str):
                model.runs[record["run_id"]] = record
        if records:
            model.run_meta = latest_run(records)


def _tell_apart(scanned: list[ScannedModel]) -> None:
    """Folders that name the same model keep their own rows, named ``model [folder]``, with a
    notice: merging them silently would mix two runs' scores."""
    by_name: dict[str, list[ScannedModel]] = {}
    for model in scanned:
        by_name.setdefault(model.name, []).append(model)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        for model in same:
            model.name = f"{name} [{model.folder}]"
        # a note, once per group: nothing is skipped, both are shown
        folders = ", ".join(str(m.folder) for m in same)
        same[0].notes.append(
            f"{folders}: each names the same model ({name}); shown as '{name} [folder]'"
        )


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
    _note_other_data(models, tasks)
    return models


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


@dataclass(frozen=True)
class RankedModel:
    """One model's row of a benchmark's ranking (``rank_models``).

    ``row["rank"]`` reads a field as the dict rows of earlier versions did; ``to_dict()`` gives
    that dict.
    """

    # in the order of the --json keys
    model: str
    means: Mapping[str, float]  # per task type, over the tasks the model has
    complete: bool
    coverage: str  # "tasks scored/tasks"
    revision_mismatches: int  # task files at another dataset revision than the registry's
    mean: float | None  # over every task score the model has
    ranks: Mapping[str, int]  # per task type, among the complete models
    rrf: float
    borda: int
    rank: int | None  # None: the model lacks some of the benchmark's tasks

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

    Per task type: the mean of the model's task scores; the rank among complete models (1 =
    best, ties share the lowest rank). RRF = sum over types of 1 / (k + rank) with the
    benchmark's k (10 if it has none). Borda: for every task, one point per model with a lower
    score. Complete models are ranked by RRF (``rrf`` benchmarks) or mean over tasks (``mean``);
    incomplete ones get ``rank: None`` and come after, their type ranks showing where they would
    stand among the complete models.

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
            rrf=rrf[i],
            borda=borda[i],
            rank=overall.get(i),
            complete=complete[i],
            coverage=f"{sum(x.name in m.scores for x in tasks)}/{len(tasks)}",
            revision_mismatches=m.revision_mismatches,
            mean=mean[i],
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
    means = {}
    for t in types:
        scores = [m.scores[x.name] for x in tasks if x.type == t and x.name in m.scores]
        if scores:
            means[t] = float(np.mean(scores))
    return means


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
    path = items_path(file.path)
    if not path.exists() and not path.is_symlink():
        return None  # no items written: nothing to say (a folder, FIFO or link: read_items says)
    try:
        score = file.score(key, splits, task.subset_weight_key)
        if score is None:
            raise ValueError(f"the result file has no {key} to check them against")
        found = read_items(path).get((splits[0], task.subsets[0]))
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
