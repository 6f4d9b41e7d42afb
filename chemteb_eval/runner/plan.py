"""The plan stage: what a run evaluates (``select``), what it needs installed
(``requirements``) and given (``data_paths_for``), and which of its tasks are pending — those
without a current result file, or whose file was computed from another declaration or other
data (``pending`` before loading, ``settle`` once a local task's data is fingerprinted), in the
model's folder and in each variant's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from chemteb_eval.data.custom import CustomDataError, check_columns
from chemteb_eval.data.hub_reader import out_of_reach
from chemteb_eval.data.loader import user_copy
from chemteb_eval.data.pipchem import PIPCHEM_NEEDS
from chemteb_eval.data.shared_sets import check_copies
from chemteb_eval.data.types import TaskData
from chemteb_eval.errors import HubUnavailableError
from chemteb_eval.models.base import Encoder
from chemteb_eval.models.spec import ModelSpec, parse_model_spec
from chemteb_eval.results.schema import ResultFile, read_json_object
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, get_benchmark
from chemteb_eval.tasks.recorded import recorded_digest, write_recorded_task

from .kinds import KIND_RUNS
from .values import Log, Plan, RunReport

__all__ = [
    "cached_plan",
    "data_paths_for",
    "hub_out_of_reach",
    "pending",
    "pending_everywhere",
    "requirements",
    "select",
    "settle",
    "settle_everywhere",
]


def requirements(
    model: str | ModelSpec | Encoder, tasks: Sequence[Task]
) -> list[tuple[str, tuple[str, ...], str]]:
    """The extras a run needs beyond the core install, as ``require_extras`` reads them: the
    model backend's (none for an API model or an ``Encoder`` object) and ``pipchem`` for tasks
    built from pip-installed data. The Jobs use it too, to pick what the Job installs."""
    if isinstance(model, str):
        model = parse_model_spec(model)
    needs = model.needs if isinstance(model, ModelSpec) else []
    if any(task.builder == "pipchem" for task in tasks):
        needs.append(PIPCHEM_NEEDS)
    return needs


def select(benchmark: str | Benchmark | None, tasks: Sequence[Task] | None) -> Plan:
    """The plan: a benchmark's tasks (default PipChem); or given tasks, scored by the benchmark's
    protocol when one is named too (``-b B -t T``: T must be one of B's tasks), else by their
    own defaults."""
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    if tasks is None:
        bench = bench or get_benchmark("PipChem")
        return Plan(tuple(benchmark_tasks(bench)), bench)
    if not tasks:
        raise ValueError("tasks: nothing to run.")
    if bench is not None:
        names = {t.name for t in benchmark_tasks(bench)}
        outside = [t.name for t in tasks if t.name not in names or t.collection != bench.collection]
        if outside:
            raise ValueError(
                f"tasks: {', '.join(outside)} not in benchmark {bench.name}; see "
                f"`chemteb list -b '{bench.name}'`."
            )
    return Plan(tuple(tasks), bench)


def pending(plan: Plan, out_dir: Path, overwrite: bool, report: RunReport, log: Log) -> list[Task]:
    """The plan's tasks to score: those without a result file (all of them with ``overwrite``),
    and those whose result file was computed from another declaration or other data than the
    task has now (``_stale``: scored again, said). A skipped task's score in the report is its
    stored file's, by the plan's main score and splits. A task whose data is named only once it
    is loaded (a local build: no revision) is kept to be checked after loading (``settle``)."""
    todo = []
    for task in plan.tasks:
        path = out_dir / f"{task.name}.json"
        if overwrite or not path.is_file() or _stale(task, path, log):
            todo.append(task)
        elif task.revision is None:
            todo.append(task)  # its data's fingerprint is known once loaded: settle() decides
        else:
            _skip(plan, task, path, report, log)
    return todo


def _skip(plan: Plan, task: Task, path: Path, report: RunReport, log: Log) -> None:
    report.statuses[task.name] = "skipped"
    stored = _recorded(path)  # read once, for its score and its truncation record
    if stored is None:
        return
    _restore_declaration(task, path, stored, log)
    score = _stored_score(plan, task, stored)
    if score is not None:
        report.main_scores[task.name] = score
    if "truncation" in stored.extra:
        report.truncation[task.name] = stored.extra["truncation"]


def _restore_declaration(task: Task, path: Path, stored: ResultFile, log: Log) -> None:
    """A task file's current result whose recorded declaration beside it was edited or lost:
    rewritten from the task run now (the one its result records), else rank and the Space leave
    the result out for good (issue 46)."""
    if not task.definition or stored.extra.get("task_declaration") != task.declaration_digest():
        return
    if recorded_digest(path.parent, task.name) == task.declaration_digest():
        return
    try:
        write_recorded_task(path.parent, task, stored.dataset_revision)
    except OSError:
        return  # a folder that cannot be written: rank says why it leaves the result out
    log(f"{task.name}: its declaration beside {path.name} was edited or lost; restored.")


def _said_skipped(report: RunReport, out_dir: Path, log: Log) -> None:
    skipped = [n for n, s in report.statuses.items() if s == "skipped"]
    if skipped:
        log(
            f"{len(skipped)} task(s) already have results in {out_dir}; skipped "
            "(use --overwrite to rerun)."
        )


def _recorded(path: Path) -> ResultFile | None:
    try:
        return ResultFile.from_dict(read_json_object(path), path)
    except (OSError, ValueError):
        return None  # an unreadable file is the skip's (and rank's) to report


def _recorded_declaration(task: Task, path: Path, stored: ResultFile) -> str | None:
    """The declaration digest a result file was computed from: recorded in the file; for a file
    written before digests were, a task file's declaration recorded beside it; else ``None``
    (a registered task's older file: its record is the code's, nothing to compare)."""
    digest = stored.extra.get("task_declaration")
    if isinstance(digest, str):
        return digest
    if task.builder != "custom":
        return None
    # "unknown" when nothing tells what it was computed from: scored again
    return recorded_digest(path.parent, task.name)


def _stale(task: Task, path: Path, log: Log, data: str | None = None) -> bool:
    """Whether a result file was computed from another declaration of the task, or from other
    data (``data``: the identity of the data loaded now, else the task's revision), than the
    task has now: then it is scored again and its result replaced, with a line saying why.
    The data's identity is a Hub commit, or the fingerprint of the bytes scored."""
    stored = _recorded(path)
    if stored is None:
        return False
    was = _recorded_declaration(task, path, stored)
    now = task.declaration_digest()
    if was is not None and was != now:
        log(
            f"{task.name}: its declaration changed since {path.name} was written ({was} -> "
            f"{now}); it is scored again and its result replaced."
        )
        return True
    data = data or task.revision
    recorded = stored.dataset_revision
    if data is None or recorded == data or recorded in task.known_revisions:
        return False
    if task.builder != "custom" and recorded is None:
        return False  # written before local data was fingerprinted: nothing to compare
    what = "files" if task.builder == "custom" else "data"
    log(
        f"{task.name}: its {what} changed since {path.name} was written ({recorded} -> "
        f"{data}); it is scored again and its result replaced."
    )
    return True


def settle(
    plan: Plan,
    loaded: dict[str, TaskData],
    identities: Mapping[str, str],
    out_dir: Path,
    overwrite: bool,
    report: RunReport,
    log: Log,
    *,
    quiet: bool = False,
) -> set[str]:
    """After loading: a task whose result file in ``out_dir`` was computed from the very data
    just loaded (its fingerprint) and the same declaration is skipped there; any other is
    scored (again). Says once how many tasks were skipped (``quiet``: not). Returns the names
    skipped: the caller drops the data of a task every folder skips."""
    skipped = set()
    for task in plan.tasks:
        path = out_dir / f"{task.name}.json"
        if overwrite or task.name not in loaded or not path.is_file() or task.revision:
            continue
        if not _stale(task, path, log, data=identities.get(task.name)):
            skipped.add(task.name)
            _skip(plan, task, path, report, log)
    if not quiet:
        _said_skipped(report, out_dir, log)
    return skipped


def _stored_score(plan: Plan, task: Task, stored: ResultFile) -> float | None:
    """The plan's main score in a result file written earlier; ``None`` when it has none (the
    summary then shows no number, as for a task that failed)."""
    try:
        return stored.score(plan.main_score(task), plan.splits(task), task.subset_weight_key)
    except ValueError:
        return None


def data_paths_for(plan: Plan, data_paths: Mapping[str, str | Path] | None) -> dict[str, Path]:
    """Check the user's copies of restricted sets (``builder="local"``) before anything loads:
    every such task in the plan needs one (``MissingDataError`` saying where to obtain it and in
    what format), and each path names a task of the plan (``ValueError``). The copies of the
    scientific-text sets (``builder="shared"``) are checked here too: a missing one is said
    before minutes of model loading, not once per task after them."""
    paths = dict(data_paths or {})
    local = {t.name: t for t in plan.tasks if t.builder == "local"}
    custom = {t.name for t in plan.tasks if t.builder == "custom"}
    missing = sorted(custom - set(paths))
    if missing:
        raise ValueError(
            f"data_paths: {', '.join(missing)} declared by a task file need their files; pass "
            "them with --task-file (or data_paths={task: its source folder})."
        )
    stray = sorted(set(paths) - set(local) - custom)
    if stray:
        raise ValueError(
            f"data_paths: {', '.join(stray)} is not a restricted task of this run; the run's "
            f"restricted tasks: {', '.join(local) or 'none'}."
        )
    # the arguments first (exit 2), then what the machine holds (exit 1): a stray --data-path is
    # named whether or not the copies of the scientific-text sets are here
    check_copies([t.name for t in plan.tasks if t.builder == "shared"])
    found = {name: user_copy(task, paths.get(name)) for name, task in local.items()}
    _check_task_file_columns([t for t in plan.tasks if t.builder == "custom"], plan, paths)
    return {**found, **{name: Path(paths[name]) for name in custom}}


def hub_out_of_reach(plan: Plan) -> None:
    """When none of the plan's tasks can be had — every one is read from the Hub, and the Hub
    cannot be used now nor are their datasets cached (``hub_reader.out_of_reach``) — one
    ``HubUnavailableError`` naming them, before the model loads (an offline ``-b ChemTEB``
    said 27 near-identical paragraphs after it). Where some can run, each of the others fails
    at its load in its own line, as any task's data does."""
    missing = out_of_reach(plan.tasks)
    if not missing or len(missing) < len(plan.tasks):
        return
    raise HubUnavailableError(
        f"{len(missing)} task(s) need the Hub: the Hugging Face Hub cannot be reached (or "
        "HF_HUB_OFFLINE is set) and their datasets are not in the local cache: "
        f"{', '.join(t.name for t in missing)}. Run once with network access to cache them "
        "(later runs work offline), or run the offline suite: chemteb run -b PipChem."
    )


def _check_task_file_columns(
    tasks: Sequence[Task], plan: Plan, paths: Mapping[str, str | Path]
) -> None:
    """Every task file's row files have the columns their type needs, said for all of them at
    once, before the model loads (a missing column was found one per run, each after the
    30-odd seconds of a model load)."""
    problems = []
    for task in tasks:
        try:
            check_columns(task, paths[task.name], plan.splits(task))
        except CustomDataError as exc:
            problems.append(str(exc))
    if problems:
        raise CustomDataError(" ".join(problems))  # one line: the CLI prints one


def cached_plan(plan: Plan, types: tuple[str, ...] | None = None) -> Plan:
    """The plan's tasks a variant of the model's cached vectors can score (not NER's), of
    ``types`` only where given (a hybrid's: retrieval)."""
    return replace(
        plan,
        tasks=tuple(
            t for t in plan.tasks if KIND_RUNS[t.type].cached and (types is None or t.type in types)
        ),
    )


def _silent(_: str) -> None:
    """A variant folder's skips and stale files are the model's folder's to say."""


def pending_everywhere(
    plan: Plan, out_dir: Path, overwrite: bool, report: RunReport, log: Log
) -> list[Task]:
    """The plan's tasks that the model's folder or any variant's folder needs scored."""
    needed = {t.name for t in pending(plan, out_dir, overwrite, report, log)}
    for its in report.variants.values():
        needed |= {
            t.name
            for t in pending(
                cached_plan(plan, its.task_types), its.results_dir, overwrite, its, _silent
            )
        }
    return [t for t in plan.tasks if t.name in needed]


def settle_everywhere(
    plan: Plan,
    loaded: dict[str, TaskData],
    identities: Mapping[str, str],
    out_dir: Path,
    overwrite: bool,
    report: RunReport,
    log: Log,
) -> None:
    """``settle`` in the model's folder and each variant's; a task's data is dropped where
    every folder skips it. Variants' skips are said in one line."""
    drop = settle(plan, loaded, identities, out_dir, overwrite, report, log)
    for its in report.variants.values():
        cached = cached_plan(plan, its.task_types)
        skipped_there = settle(
            cached, loaded, identities, its.results_dir, overwrite, its, _silent, quiet=True
        )
        drop &= skipped_there | {t.name for t in plan.tasks if t not in cached.tasks}
    for name in drop:
        del loaded[name]
    skipped = sum(s == "skipped" for its in report.variants.values() for s in its.statuses.values())
    if skipped:
        log(
            f"{skipped} variant result(s) already in their experiment folders; skipped (use "
            "--overwrite to rerun)."
        )
