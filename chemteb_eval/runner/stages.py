"""One benchmark run in named stages: select → pending → load → requests → encode → evaluate each
task → write the run's record (runs.jsonl).

All texts of all selected tasks are collected first and each unique (prompt, text) is encoded
once; tasks are then scored one by one and each result is written atomically as soon as it is
done. Finished tasks are skipped on a rerun; a failing task is recorded and the run goes on.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import tempfile
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from chemteb_eval import __version__
from chemteb_eval._files import append_json_line, write_text_atomic
from chemteb_eval.data import cache_root, load_task
from chemteb_eval.data.custom import CustomDataError, check_columns
from chemteb_eval.data.fingerprint import data_fingerprint
from chemteb_eval.data.hub_reader import out_of_reach
from chemteb_eval.data.loader import user_copy
from chemteb_eval.data.pipchem import PIPCHEM_NEEDS
from chemteb_eval.data.pipchem import build_needed as pipchem_build_needed
from chemteb_eval.data.shared_sets import check_copies
from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingCache, EmbeddingEngine
from chemteb_eval.engine.cache import text_key
from chemteb_eval.engine.distributed import distributed_state
from chemteb_eval.engine.encode import SPILL_ROWS
from chemteb_eval.errors import ChemtebError, HubUnavailableError, require_extras
from chemteb_eval.models import DEFAULT_RUNTIME
from chemteb_eval.models.backends import (
    backend_of,
    cache_variant,
    check_precision,
    experiment_kwargs,
    framework_of,
)
from chemteb_eval.models.base import (
    DEFAULT_BATCH_SIZE,
    Encoder,
    ModelMeta,
    Role,
    check_batch_size,
    check_device,
)
from chemteb_eval.models.fingerprint import model_fingerprint
from chemteb_eval.models.spec import ModelSpec, parse_model_spec
from chemteb_eval.results.io import (
    EXPERIMENTS,
    NO_REVISION,
    experiment_name,
    model_dir,
    write_json_atomic,
)
from chemteb_eval.results.runs import RUNS_FILE, migrate_run_meta
from chemteb_eval.results.schema import ResultFile, items_path, read_json_object, write_items
from chemteb_eval.scoring._validation import check_beta
from chemteb_eval.scoring.compression import Compression, check_dims, check_precisions
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, get_benchmark
from chemteb_eval.tasks import main_score as benchmark_main_score
from chemteb_eval.tasks.custom import TASK_FILE_SUFFIX

from .costs import sides, storage, transform, truncation, variants
from .kinds import KIND_RUNS, ScoreContext, score_split, split_texts

__all__ = ["Plan", "RunReport", "run", "select"]

Log = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    """What a run evaluates: the tasks, and the benchmark whose protocol (splits, main scores)
    applies, or ``None`` for each task's own defaults."""

    tasks: tuple[Task, ...]
    benchmark: Benchmark | None = None

    def splits(self, task: Task) -> tuple[str, ...]:
        return eval_splits(self.benchmark, task) if self.benchmark else task.eval_splits

    def main_score(self, task: Task) -> str:
        return benchmark_main_score(self.benchmark, task) if self.benchmark else task.main_score


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


@dataclass
class RunReport:
    """What a run did: per-task status, the encoding statistics, where results are.

    ``main_scores`` are the plan's main score of each finished task, averaged over its subsets
    and then over the plan's splits (what ``chemteb rank`` shows for it); for a task skipped
    because its result file exists, the score that file holds.
    """

    results_dir: Path
    # names this run in runs.jsonl and in each result file it writes ("chemteb_run_id")
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    statuses: dict[str, str] = field(default_factory=dict)  # done | skipped | failed
    main_scores: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    encoding: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    # per task: its result file's ``truncation`` record (``costs.truncation``), for the summary
    truncation: dict[str, Any] = field(default_factory=dict)
    # per variant of the model's vectors (``--dims``/``--precisions``): MTEB's experiment name
    # -> that variant's report (its folder, statuses, scores)
    variants: dict[str, RunReport] = field(default_factory=dict)


# -- stages -----------------------------------------------------------------------------------


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


def _writable(folder: Path, what: str, fix: str, *, read_only_ok: bool = False) -> None:
    """Create ``folder`` (and parents) or raise one ``ChemtebError`` line: ``what folder cannot
    be written (reason); fix.`` With ``read_only_ok``, a folder that exists passes (a read-only
    embedding cache can still be read)."""
    if read_only_ok and folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK | os.X_OK):  # an existing folder on a read-only mount
            raise PermissionError(errno.EACCES, "not writable")
    except OSError as exc:
        raise ChemtebError(
            f"{what} {folder} cannot be written ({exc.strerror or exc}); {fix}."
        ) from None


def _cache_folder(cache_dir: str | Path | None) -> Path:
    return Path(cache_dir) if cache_dir is not None else cache_root() / "embeddings"


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
            _skip(plan, task, path, report)
    return todo


def _skip(plan: Plan, task: Task, path: Path, report: RunReport) -> None:
    report.statuses[task.name] = "skipped"
    stored = _recorded(path)  # read once, for its score and its truncation record
    if stored is None:
        return
    score = _stored_score(plan, task, stored)
    if score is not None:
        report.main_scores[task.name] = score
    if "truncation" in stored.extra:
        report.truncation[task.name] = stored.extra["truncation"]


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
    from chemteb_eval.tasks.custom import TaskFileError, read_recorded_task

    try:
        return read_recorded_task(
            path.with_name(f"{task.name}{TASK_FILE_SUFFIX}")
        ).declaration_digest()
    except (TaskFileError, OSError):
        return "unknown"  # nothing tells what it was computed from: scored again


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
            _skip(plan, task, path, report)
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


META = "model_meta.json"


@contextlib.contextmanager
def _no_empty_folder_left(out_dir: Path, existed: set[Path]) -> Iterator[None]:
    """A run that stops before its first task (a damaged cache, a failed load, Ctrl-C) leaves
    no empty results folder behind: the folders ``_open`` made for it (the model's, its
    revision's, the output folder itself when the run made it) go again while they hold nothing
    but the ``model_meta.json`` this run wrote. Never a folder that held anything before."""
    try:
        yield
    except BaseException:
        with contextlib.suppress(OSError):
            if out_dir not in existed and [p.name for p in out_dir.iterdir()] == [META]:
                (out_dir / META).unlink()  # this run's own, and all there is
        for folder in (out_dir, *out_dir.parents):
            if folder in existed:
                break
            with contextlib.suppress(OSError):  # not empty, or not ours to remove: kept
                folder.rmdir()
        raise


def _write_model_meta(encoder: Encoder, weights: str | None, out_dir: Path, precision: str) -> None:
    try:
        meta = recorded_meta(encoder.meta, weights, out_dir, precision)
        write_json_atomic(out_dir / META, meta)
    except OSError as exc:
        raise ChemtebError(
            f"--output-dir: {out_dir / META} cannot be written "
            f"({exc.strerror or exc}); pass a folder you can write to."
        ) from None


def _hub_out_of_reach(plan: Plan) -> None:
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


def load(
    plan: Plan,
    todo: list[Task],
    report: RunReport,
    log: Log,
    data_paths: Mapping[str, Path] | None = None,
    *,
    progress: bool = False,
    identities: dict[str, str] | None = None,
) -> dict[str, TaskData]:
    """Each task's data for the plan's splits; a task whose data fails is recorded, not fatal
    (one ``[failed]`` line, the recorded error). With ``progress``, a bar over the tasks.

    ``identities`` receives each loaded task's data identity, what its result file names as
    ``dataset_revision``: the Hub commit, the fingerprint of the very bytes a task file's
    files were read from (read once: ``data.custom``), else the content fingerprint of the
    data as loaded."""
    from tqdm.auto import tqdm

    if any(t.builder == "pipchem" for t in todo) and pipchem_build_needed():
        log(
            "Building the PipChem suite from its pip-installed sources (once, 10-20 s); "
            "later runs reuse it."
        )
    loaded: dict[str, TaskData] = {}
    for task in tqdm(todo, desc="loading data", unit="task", disable=not progress or not todo):
        try:
            # what a user's files hold that is not scored is said (their tasks only)
            scored: list[str] = []  # a task file's data: the fingerprint of the bytes read
            said: dict[str, Any] = {}
            if task.builder == "custom":
                said = {"log": lambda line: _tell(log, line), "scored": scored.append}
            data = load_task(
                task, splits=plan.splits(task), data_path=(data_paths or {}).get(task.name), **said
            )
            loaded[task.name] = data
            if identities is not None:
                identities[task.name] = (
                    scored[-1] if scored else task.revision or data_fingerprint(data)
                )
        except Exception as exc:  # one task's failure is recorded; the run goes on
            report.statuses[task.name] = "failed"
            report.errors[task.name] = f"{type(exc).__name__}: {exc}"
            # our errors are sentences that say what to do; others keep their type's name
            why = str(exc) if isinstance(exc, ChemtebError) else report.errors[task.name]
            _tell(log, f"[failed] {task.name}: could not load data: {why}")
    return loaded


def _tell(log: Log, message: str) -> None:
    """``log(message)`` with any progress bar cleared first and redrawn after, so the line
    stands on its own instead of breaking the bar."""
    from tqdm.auto import tqdm

    with tqdm.external_write_mode():
        log(message)


def task_prompt(encoder: Encoder, task: Task, role: Role | None) -> str:
    """The prompt of one side of a task: the task's own (a task file's ``prompts``), else the
    model's convention for the type and role (``role`` None: a symmetric task's texts)."""
    if role is not None and role in task.prompts:  # the task's own, even '' (no prompt)
        return task.prompts[role]
    return encoder.prompt(task.type, role)


def requests(
    encoder: Encoder, tasks: dict[str, Task], loaded: dict[str, TaskData]
) -> Iterator[tuple[str, str]]:
    """Every (prompt, text) the loaded tasks need embedded (duplicates included)."""
    for name, data in loaded.items():
        for by_split in data.values():
            for split_data in by_split.values():
                for texts, role in split_texts(split_data).values():
                    prompt = task_prompt(encoder, tasks[name], role)
                    for text in texts:
                        yield prompt, text


def _prefetch(
    engine: EmbeddingEngine, encoder: Encoder, plan: Plan, loaded: dict[str, TaskData]
) -> None:
    """Encode every text the loaded tasks need: all at once where a text's vector does not
    depend on its batch (``engine.batch_invariant``), else task by task in the plan's order, so
    that a task's texts share batches only with each other (what the task alone would do; a
    text another task encoded first is still served from the cache)."""
    tasks = {t.name: t for t in plan.tasks}
    if engine.batch_invariant:
        engine.prefetch(requests(encoder, tasks, loaded))
        return
    for task in plan.tasks:
        if task.name in loaded:
            engine.prefetch(requests(encoder, tasks, {task.name: loaded[task.name]}))


def task_keys(encoder: Encoder, task: Task, data: TaskData) -> set[str]:
    """The cache keys of every (prompt, text) a task has embedded."""
    return {
        text_key(task_prompt(encoder, task, role), text)
        for by_split in data.values()
        for split_data in by_split.values()
        for texts, role in split_texts(split_data).values()
        for text in texts
    }


class _Spill:
    """Vectors of a large group of texts (over ``SPILL_ROWS``: a big retrieval corpus) go to
    a temporary ``.npy`` file, gathered block by block, so the runner never holds a corpus's
    vectors at once; the file goes when the task is scored."""

    def __init__(self) -> None:
        self.folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> _Spill:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.folder is not None:
            self.folder.cleanup()

    def embed(self, engine: EmbeddingEngine, texts: list[str], prompt: str) -> Any:
        if len(texts) <= SPILL_ROWS:
            return engine.embed(texts, prompt)
        if self.folder is None:
            self.folder = tempfile.TemporaryDirectory(prefix="chemteb-vectors-")
        path = Path(self.folder.name) / f"{len(list(Path(self.folder.name).iterdir()))}.npy"
        return engine.embed_to_file(texts, prompt, path)


@dataclass
class _Scored:
    """One variant's scores of a task as they are computed, split by split."""

    scores: dict[str, list[Any]] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    error: BaseException | None = None


def _score_variants(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    wanted: Sequence[Compression],
) -> dict[Compression, _Scored]:
    """Every subset and split of one task scored for each variant in ``wanted`` (the plain
    vectors are ``Compression()``), each split's vectors read from the engine once. A variant
    that fails is recorded and left; the others go on. The plain one's seconds include reading
    the vectors (and re-encoding damaged cache rows is taken out); a variant's are its own
    compression and scoring."""
    encoder = context.encoder
    assert encoder is not None, "a task is scored with the run's encoder in its context"
    out = {v: _Scored() for v in wanted}
    plain_context = replace(context, protocol=task.protocol)
    compressed = replace(plain_context, zero_rows="zero")
    with _Spill() as spill:
        for subset, by_split in data.items():
            for split, split_data in by_split.items():
                t0 = time.perf_counter()
                redo_before = engine.redo_seconds
                emb = {
                    group: spill.embed(engine, texts, task_prompt(encoder, task, role))
                    for group, (texts, role) in split_texts(split_data).items()
                }
                read = time.perf_counter() - t0 - (engine.redo_seconds - redo_before)
                for variant, scored in out.items():
                    if scored.error is not None:
                        continue
                    t1 = time.perf_counter()
                    try:
                        vectors = {g: transform(e, variant) for g, e in emb.items()}
                        metrics = score_split(
                            split_data, vectors, plain_context if variant.plain else compressed
                        )
                    except Exception as exc:  # this variant's failure; the others go on
                        if variant.plain:
                            raise
                        scored.error = exc
                        continue
                    evidence = metrics.pop("items", None)
                    if evidence is not None:
                        scored.items[(split, subset)] = evidence
                    metrics["main_score"] = metrics[task.main_score]
                    metrics["hf_subset"] = subset
                    metrics["languages"] = ["eng-Latn"] if subset == "default" else []
                    scored.scores.setdefault(split, []).append(metrics)
                    scored.seconds += time.perf_counter() - t1 + (read if variant.plain else 0)
    return out


def evaluate_task(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    owners: Mapping[str, int] | None = None,
    items: dict[tuple[str, str], dict[str, Any]] | None = None,
    data_identity: str | None = None,
) -> ResultFile:
    """Score every subset and split of one task into its result file (not yet written);
    ``items``, if given, receives each split's per-item evidence by ``(split, subset)``."""
    scored = _score_variants(task, data, engine, context, [Compression()])[Compression()]
    if items is not None:
        items.update(scored.items)
    files = _result_files(
        task, data, engine, context, owners, data_identity, {Compression(): scored}
    )
    return files[Compression()]


def _result_files(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    owners: Mapping[str, int] | None,
    data_identity: str | None,
    scored: Mapping[Compression, _Scored],
) -> dict[Compression, ResultFile]:
    """Each variant's result file from its scores.

    ``evaluation_time`` is what MTEB's is, encoding included: this task's share of the
    encoding seconds (a text several tasks embed splits its cost between them, ``owners``
    counting them, so the tasks' encode seconds add up to the run's) plus its scoring seconds.
    The cache keeps each vector's cost, so a warm rerun reports the same encode seconds. A
    variant's vectors cost what the model's did: the same encode seconds, its own scoring.
    Each file records the texts the model cut (``truncation``) and what its index weighs
    (``storage``)."""
    encoder = context.encoder
    assert encoder is not None
    keys = task_keys(encoder, task, data)
    costs, hits = engine.costs(keys)
    encode_seconds = sum(costs[k] / (owners or {}).get(k, 1) for k in keys)
    prompt_of = lambda role: task_prompt(encoder, task, role)  # noqa: E731
    texts = sides(data, prompt_of) if keys else {}
    cut = truncation(encoder, texts) if keys else None
    out = {}
    for variant, one in scored.items():
        extra: dict[str, Any] = {
            "mteb_version": None,
            "chemteb_eval_version": __version__,
            "kg_co2_emissions": None,
            # Beside MTEB's keys (its readers ignore them): where the time went.
            "encode_seconds": encode_seconds,
            "score_seconds": one.seconds,
            "n_texts": len(keys),
            "n_cache_hits": hits,
            # what the scores were computed from, beside the data's identity: a rerun of
            # another declaration (a column, a prompt, a split) is scored again
            "task_declaration": task.declaration_digest(),
        }
        if cut is not None:  # NER embeds its words through the model, not the text cache
            extra["truncation"] = cut
            extra["storage"] = storage(variant, encoder.meta.embedding_dim, texts)
        out[variant] = ResultFile(
            task_name=task.name,
            scores=one.scores,
            # a local task (no Hub commit) names its data by content: other data's results differ
            dataset_revision=data_identity or task.revision or data_fingerprint(data),
            evaluation_time=encode_seconds + one.seconds,
            extra=extra,
        )
    return out


def _evaluate_all(
    plan: Plan,
    loaded: dict[str, TaskData],
    engine: EmbeddingEngine,
    context: ScoreContext,
    report: RunReport,
    log: Log,
    identities: Mapping[str, str] | None = None,
    folders: Mapping[Compression, tuple[Path, RunReport]] | None = None,
    metas: Mapping[Compression, dict[str, Any]] | None = None,
) -> None:
    """Score each loaded task for the model (into ``report.results_dir``) and for each variant
    of its vectors in ``folders`` (into its experiment folder, whose ``model_meta.json`` from
    ``metas`` is written with its first result), where that folder has no current result;
    write each result as soon as it is scored."""
    from tqdm.auto import tqdm

    by_name = {t.name: t for t in plan.tasks}
    assert context.encoder is not None
    owners: Counter[str] = Counter()
    for name, data in loaded.items():
        owners.update(task_keys(context.encoder, by_name[name], data))
    every = {Compression(): (report.results_dir, report), **(folders or {})}
    met: set[Compression] = set()  # variant folders whose model_meta.json this run wrote
    through_model = [n for n in loaded if not KIND_RUNS[by_name[n].type].cached]
    if folders and through_model:
        log(
            f"{', '.join(through_model)}: embed(s) words through the model, not from cached "
            "vectors; scored for the model itself only, not for --dims/--precisions."
        )
    for name in tqdm(
        list(loaded), desc="tasks", unit="task", disable=not context.progress or not loaded
    ):
        task = by_name[name]
        wanted = [
            v
            for v, (_, r) in every.items()
            if r.statuses.get(name) != "skipped" and (v.plain or name not in through_model)
        ]
        try:
            scored = _score_variants(task, loaded[name], engine, context, wanted)
            files = _result_files(
                task, loaded[name], engine, context, owners, (identities or {}).get(name), scored
            )
        except Exception as exc:
            for v in wanted:
                _failed(every[v][1], name, exc, log, v)
            continue
        for variant, result in files.items():
            folder, its = every[variant]
            error = scored[variant].error
            if error is not None:
                _failed(its, name, error, log, variant)
                continue
            try:
                if not variant.plain and variant not in met:
                    folder.mkdir(parents=True, exist_ok=True)
                    write_json_atomic(folder / META, (metas or {})[variant])
                    met.add(variant)
                _write_result(plan, task, result, scored[variant].items, folder, its)
            except Exception as exc:
                _failed(its, name, exc, log, variant)


def _failed(
    report: RunReport, name: str, exc: BaseException, log: Log, variant: Compression
) -> None:
    report.statuses[name] = "failed"
    report.errors[name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    label = "" if variant.plain else f" ({_variant_label(variant)})"
    _tell(log, f"[failed] {name}{label}: {report.errors[name]}")


def _variant_label(variant: Compression) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(variant.kwargs().items()))


def _write_result(
    plan: Plan,
    task: Task,
    result: ResultFile,
    items: Mapping[tuple[str, str], dict[str, Any]],
    folder: Path,
    report: RunReport,
) -> None:
    """One result file, its per-item evidence and a task file's declaration, into ``folder``;
    the task done in ``report``, with its summary's main score."""
    # the run (hardware, settings) that timed it, in runs.jsonl beside the file
    result = replace(result, extra={**result.extra, "chemteb_run_id": report.run_id})
    # the per-item evidence beside the MTEB file, for intervals and compare; written first, so
    # that a run killed in between leaves no result without its evidence (the task is pending)
    if items:
        write_items(items_path(folder / f"{task.name}.json"), items)
    path = result.write(folder)
    if task.definition:  # a task file's task: its declaration, for rank and the Space
        recorded = _definition(task, result.dataset_revision)
        write_text_atomic(path.with_name(f"{task.name}{TASK_FILE_SUFFIX}"), recorded)
    report.statuses[task.name] = "done"
    if "truncation" in result.extra:
        report.truncation[task.name] = result.extra["truncation"]
    try:  # the summary's number: the plan's main score, over the plan's splits
        score = result.score(plan.main_score(task), plan.splits(task), task.subset_weight_key)
    except ValueError:
        score = None
    if score is not None:
        report.main_scores[task.name] = score


def _definition(task: Task, scored: str | None) -> str:
    """The declaration recorded beside a result, naming the data its scores came from: a
    local source's fingerprint is the scored bytes' (the files may have changed between
    reading the task file and loading them)."""
    import yaml

    declared = yaml.safe_load(task.definition)
    source = declared.get("source") if isinstance(declared, dict) else None
    if not isinstance(source, dict) or "fingerprint" not in source or scored is None:
        return task.definition
    if source["fingerprint"] == scored:
        return task.definition
    source["fingerprint"] = scored
    text: str = yaml.safe_dump(declared, sort_keys=False, allow_unicode=True)
    return text


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _hardware() -> dict[str, Any]:
    """What the timings were measured on: CPU model and cores, GPUs, library versions."""
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version()}
    info["cpu"] = _cpu_model()
    info["cpus"] = os.cpu_count()
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda_version"] = torch.version.cuda
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        info["gpu_count"] = gpus
        info["cuda"] = torch.cuda.get_device_name(0) if gpus else None
    except ImportError:  # an API model on the core install: no torch, no GPU facts
        pass
    return info


def write_run_record(
    out_dir: Path, plan: Plan, report: RunReport, settings: Mapping[str, Any], log: Log = print
) -> None:
    """Record the run: hardware, settings (batch size, precision, backend), encoding statistics
    and throughput (texts/s, tokens/s), per-task status and errors.

    Every run's record is appended to ``runs.jsonl`` (so an earlier run's GPU and its timings
    are never lost; result files name their run by ``chemteb_run_id``); ``results.runs`` reads
    them back. A folder's legacy ``run_meta.json`` is first moved into it, so that MTEB's
    loaders, which take every ``.json`` there for a task result, read the folder."""
    record = {
        "run_id": report.run_id,
        "chemteb_eval_version": __version__,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "benchmark": plan.benchmark.name if plan.benchmark is not None else None,
        "hardware": _hardware(),
        "settings": dict(settings),
        "seconds": report.seconds,
        "encoding": report.encoding,
        "tasks": report.statuses,
        "errors": report.errors,
    }
    left = migrate_run_meta(out_dir)
    if left is not None:
        log(f"[warning] {left}; remove it to let MTEB read the folder")
    try:
        append_json_line(out_dir / RUNS_FILE, record)
    except (OSError, ValueError) as exc:  # the results are written; say what was not
        log(f"[warning] the run's record (hardware, timings) was not written: {exc}")


# -- the run ----------------------------------------------------------------------------------


def _open(
    model: ModelSpec | Encoder, output_dir: Path, cache: Path | None, **load_options: Any
) -> tuple[Encoder, Path, str | None]:
    """Check the folders (before minutes of model loading), then load the model. A model that
    does not load leaves no empty ``--output-dir`` behind (the check created it)."""
    created = not output_dir.exists()
    _writable(output_dir, "--output-dir:", "pass a folder you can write to")
    if cache is not None:
        fix = "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to"
        _writable(cache, "embedding cache folder", fix, read_only_ok=True)
    if isinstance(model, ModelSpec):
        from chemteb_eval.models import load_encoder

        try:
            with _quiet_loading(not load_options.get("progress", True)):
                model = load_encoder(
                    model, **{k: v for k, v in load_options.items() if k != "progress"}
                )
        except BaseException:
            if created and output_dir.is_dir() and not any(output_dir.iterdir()):
                output_dir.rmdir()
            raise
    log = load_options.get("log", print)
    precision = load_options.get("precision", "float32")
    # an encoder passed in: a dtype its backend never computes in would label float32 vectors
    check_precision(backend_of(model.meta.framework), precision)
    weights = local_weights(model.meta) or api_identity(model, cache, log)
    variant = experiment_kwargs(model.meta.framework, precision)
    # another backend or dtype of the model: MTEB's experiments folder
    experiment = experiment_name(variant) if variant else None
    out_dir = results_folder(output_dir, model.meta, weights, log, experiment)
    _writable(out_dir, "--output-dir:", "pass a folder you can write to")
    return model, out_dir, weights


@contextmanager
def _quiet_loading(quiet: bool) -> Iterator[None]:
    """``--quiet``: transformers' and huggingface_hub's own bars too ("Loading weights"), for
    the load only; both are restored after."""
    if not quiet:
        yield
        return
    from huggingface_hub.utils import (  # type: ignore[attr-defined]
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    hub_was_off = are_progress_bars_disabled()
    disable_progress_bars()
    bars: Any = None
    try:
        from transformers.utils import logging as bars
    except ImportError:  # an API model on the core install
        pass
    was_on = bars is not None and bars.is_progress_bar_enabled()
    if was_on:
        bars.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            bars.enable_progress_bar()
        if not hub_was_off:
            enable_progress_bars()


def local_weights(meta: ModelMeta) -> str | None:
    """The fingerprint of a model loaded from local files with no revision (a folder, a
    vectors file, the bundled copy): what tells two folders named ``final`` apart."""
    if meta.revision is not None or not Path(meta.source).exists():
        return None
    return model_fingerprint(meta.source)


def api_identity(encoder: Encoder, cache: Path | None, log: Log) -> str | None:
    """For a model behind an OpenAI-compatible API, whose name and URL prove nothing: the label
    of the vectors it returns for fixed probe texts (``models.identity``), which keys its cache
    and its results folder, so that another model served under the same name never shares
    them. ``None`` for every other backend.

    The first time a name and URL get a label, an embedding cache written before labels were
    (keyed by the URL) becomes this label's: it was the model that answered then, as the old
    key assumed; nothing is lost."""
    meta = encoder.meta
    if meta.framework != framework_of("openai"):
        return None
    from chemteb_eval.models.identity import ProbeRegistry, probe_of

    folder = cache if cache is not None else _cache_folder(None)
    registry = ProbeRegistry(folder / "api-models.json")
    before = registry.labels_of(meta.name, meta.source)
    label, seen = registry.identify(meta.name, meta.source, probe_of(encoder))
    if not seen and before:
        log(
            f"{meta.name} at {meta.source} returns other vectors than the model that answered "
            f"under this name before ({', '.join(before)}): another model; its embeddings and "
            f"results are kept apart, as {label}."
        )
    if not before and cache is not None:
        variant = cache_variant(meta.framework, "float32")
        old, _ = EmbeddingCache.path_for(cache, meta.name, None, meta.source, None, variant)
        new, _ = EmbeddingCache.path_for(cache, meta.name, None, meta.source, label, variant)
        if old.is_file() and not new.exists():
            for file in EmbeddingCache.files(old):  # the index, its log, its vector files
                os.replace(file, new.parent / f"{new.stem}{file.name[len(old.stem) :]}")
    return label


def results_name(meta: ModelMeta) -> str:
    """The model's name as its results record it: for a model loaded from local files, a path
    becomes its last part (never ``..`` or an absolute path: results shared on the Hub must not
    carry the user's folders). Other names (Hub ids, an API's served model, which vLLM names by
    a path) stay whole, so two of them never share a folder."""
    name = meta.name
    local = Path(meta.source).exists()
    if local and (Path(name).is_absolute() or name in (".", "..") or Path(name).exists()):
        return Path(name).resolve().name or "model"
    return name


def recorded_meta(
    meta: ModelMeta,
    weights: str | None,
    folder: Path | None = None,
    precision: str = "float32",
    compression: Compression | None = None,
) -> dict[str, Any]:
    """``model_meta.json``: the meta with a local source recorded by name, and the weights'
    fingerprint, which ``results_folder`` reads to keep other weights out of the folder. In
    the folder ``results_folder`` chose for other weights of the same name (``final-<fp>``),
    the name is that folder's, so that MTEB's loaders, which key on the name, keep them apart.
    A variant's (another backend or dtype, or its vectors compressed: ``compression``) records
    MTEB's ``experiment_kwargs``."""
    out = meta.to_dict()
    name = results_name(meta)
    out["name"] = name
    variant: dict[str, str | int] = {**experiment_kwargs(meta.framework, precision)}
    if compression is not None:
        variant = {**variant, **compression.kwargs()}
    if variant:
        out["experiment_kwargs"] = variant
    if folder is not None and variant:
        folder = folder.parent.parent  # <revision>/experiments/<name>: the revision folder
    if folder is not None and folder.parent.name != name.replace("/", "__"):
        out["name"] = folder.parent.name
    # MTEB's loaders take the revision from here: a string, as MTEB writes for an unknown one
    out["revision"] = meta.revision or NO_REVISION
    out.update(_openness(meta))
    if Path(meta.source).exists():
        out["source"] = "local:" + Path(meta.source).resolve().name
    if weights is not None:
        out["weights"] = weights
    return out


def _openness(meta: ModelMeta) -> dict[str, Any]:
    """MTEB's ``open_weights`` and ``license`` keys, where the run knows them: a model whose
    weights this run loaded has open weights (an API's are not known: none is said), and the
    licence its card's front matter declares (``license:`` in the folder's README.md) is
    recorded as written. The leaderboard's "Open" column reads them."""
    record = backend_of(meta.framework)
    if record is None or record.name == "openai":  # an API's weights, or an Encoder object's
        return {}
    out: dict[str, Any] = {"open_weights": True}
    card = Path(meta.source) / "README.md"
    import yaml
    from huggingface_hub.repocard import metadata_load  # the front matter as the Hub reads it

    try:  # a card is untrusted: unreadable, not UTF-8, bad YAML or huge gives no licence
        front = metadata_load(card) if card.is_file() and card.stat().st_size < 2**20 else None
    except (OSError, ValueError, yaml.YAMLError):
        front = None
    licence = front.get("license") if isinstance(front, dict) else None
    if isinstance(licence, str) and 0 < len(licence) <= 64 and licence.isprintable():
        out["license"] = licence
    return out


def results_folder(
    output_dir: Path,
    meta: ModelMeta,
    weights: str | None,
    log: Log,
    experiment: str | None = None,
) -> Path:
    """Where the model's results go: ``model_dir`` of its name and revision (and below it
    ``experiments/<experiment>`` for another backend or dtype of the model); for local weights
    or an API model's probe, a folder that holds no other weights' results — neither in the
    revision folder nor in the experiment's. A folder made by other weights of the same name
    (``exp1/final`` then ``exp2/final``, or a retrained ``final``) is left alone and this run
    writes to ``<name>-<fingerprint>`` instead, so two models' scores never mix."""
    name = results_name(meta)
    out = model_dir(output_dir, name, meta.revision)

    def inside(folder: Path) -> Path:
        return folder / EXPERIMENTS / experiment if experiment else folder

    if weights is None:
        return inside(out)
    alternative = model_dir(output_dir, f"{name}-{weights.split(':')[-1][:10]}", meta.revision)
    for candidate in (out, alternative):
        owners = _owners(candidate, meta, weights) | {
            _folder_weights(inside(candidate), meta, weights)
        }
        if owners <= {None, weights}:
            if candidate is alternative:
                other = "another model served" if weights.startswith("probe:") else "other weights"
                log(f"{out} holds results of {other} named {name}; this model's go to {candidate}")
            return inside(candidate)
    raise ChemtebError(  # a fingerprint-prefix collision: not seen, but never mix
        f"--output-dir: {out} and {alternative} both hold other weights' results; pass "
        "another --output-dir."
    )


def _owners(folder: Path, meta: ModelMeta, weights: str) -> set[str | None]:
    """The weights that made a revision folder's results and those of every experiment below
    it (another backend or dtype of a model is still that model: a plain run of other weights
    must not adopt them as its own variants)."""
    inside = folder / EXPERIMENTS
    below = [p for p in inside.iterdir() if p.is_dir()] if inside.is_dir() else []
    return {_folder_weights(f, meta, weights) for f in (folder, *below)}


def _folder_weights(folder: Path, meta: ModelMeta, weights: str) -> str | None:
    """The weights a results folder was made by: its ``model_meta.json``'s fingerprint; for a
    folder written before fingerprints were recorded, ``weights`` (this model's) when it names
    this model's own source; ``None`` for a folder with no results; ``"unknown"`` for results
    whose owner cannot be told (no readable ``model_meta.json``)."""
    path = folder / "model_meta.json"
    if not path.exists():
        held = [p for p in folder.glob("*.json")] if folder.is_dir() else []
        return "unknown" if held else None
    try:
        recorded = read_json_object(path)
    except (OSError, ValueError):
        return "unreadable"  # never write into a folder whose owner cannot be told
    owner = recorded.get("weights")
    if isinstance(owner, str):
        return owner
    if recorded.get("source") == meta.source:
        return weights  # an earlier version's folder of this very model
    return "unknown"


def run(  # noqa: PLR0915 (a stage a line: the batch_size check made 38)
    model: str | Encoder = "sentence-transformers/all-MiniLM-L6-v2",
    *,
    benchmark: str | Benchmark | None = None,
    tasks: Sequence[Task] | None = None,
    output_dir: str | Path = "results",
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
    backend: str = DEFAULT_RUNTIME,
    overwrite: bool = False,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    data_paths: Mapping[str, str | Path] | None = None,
    beta: float | None = None,
    dims: Sequence[int] | str | None = None,
    precisions: Sequence[str] | str | None = None,
    progress: bool = True,
    log: Log = print,
) -> RunReport:
    """Evaluate a model on a benchmark (default PipChem), or on given tasks — scored by the
    benchmark's protocol (splits, main scores) when one is given too, else by their own.

    Args:
        model: a model name or folder (any prefix ``load_encoder`` reads), or an ``Encoder``.
        benchmark: a benchmark name or record.
        tasks: task records to run (with ``benchmark``: some of its tasks).
        output_dir: where result folders go (MTEB layout).
        batch_size: texts per model call.
        device: the torch device for local models.
        precision: float32; float16/bfloat16 on CUDA; bfloat16 on a CPU with native bfloat16.
        api_base: the API root for ``openai:`` models.
        backend: how a plain model name runs (``auto``, ``torch``, ``onnx``, ``onnx-int8``;
            see ``load_encoder``); what ran is recorded in model_meta.json and runs.jsonl.
        overwrite: rerun tasks whose result file exists.
        cache_dir: the embedding cache folder (default ``~/.cache/chemteb/embeddings``).
        use_cache: keep embeddings on disk and reuse them across runs.
        data_paths: ``{task name: folder}``, the user's copies of restricted sets (Clinical
            STS, CoNLL-2003, CHEMDNER), in the format each task's ``obtain`` names.
        beta: the F-beta's beta for the classification and NER probes (classification adds
            ``fbeta`` keys; NER's ``overall_f1`` becomes the F-beta); default F1 only.
        dims: also score the model's vectors cut to these dimensions (Matryoshka), from the
            vectors the run has: no model call.
        precisions: also score its vectors in these precisions (``int8``, ``binary``, ...:
            MTEB's ``CompressionWrapper``); every ``dims`` x ``precisions`` variant goes to
            MTEB's ``experiments/<name>/`` folder beside the model's results.
        progress: show progress bars.
        log: where one-line messages go.

    Returns:
        A ``RunReport``.
    """
    started = time.perf_counter()
    batch_size = check_batch_size(batch_size)  # before a model or a dataset is touched
    device = check_device(device)
    plan = select(benchmark, tasks)
    # Every missing extra in one line, before a model or a dataset is touched.
    # the spec parsed once: the extras check and the load read the same record
    spec = parse_model_spec(model) if isinstance(model, str) else model
    require_extras(requirements(spec, plan.tasks))
    paths = data_paths_for(plan, data_paths)
    _hub_out_of_reach(plan)  # before the model loads: said once
    if beta is not None:
        beta = check_beta(beta)
    sizes = check_dims(dims) if dims is not None else ()
    kinds = check_precisions(precisions) if precisions is not None else ()
    cache_folder = _cache_folder(cache_dir) if use_cache else None
    options = {
        "device": device,
        "precision": precision,
        "api_base": api_base,
        "backend": backend,
        "log": log,
        "progress": progress,
    }
    existed = {p for p in (Path(output_dir), *Path(output_dir).parents) if p.exists()}
    encoder, out_dir, weights = _open(spec, Path(output_dir), cache_folder, **options)
    report = RunReport(results_dir=out_dir)
    state = distributed_state()
    # Under torchrun/accelerate every rank loads the data and encodes its shard; only the main
    # process scores and writes.
    main = state is None or bool(state.is_main_process)
    with _no_empty_folder_left(out_dir, existed):
        # opened first: a damaged cache stops the run before any work
        identity = _identity(encoder, precision, weights)
        cache = EmbeddingCache(cache_folder, **identity) if cache_folder else None
        if main:
            _write_model_meta(encoder, weights, out_dir, precision)
        folders = _variant_reports(encoder, precision, out_dir, report, sizes, kinds)
        identities: dict[str, str] = {}
        todo = _pending_everywhere(plan, out_dir, overwrite, report, log)
        loaded = load(plan, todo, report, log, paths, progress=progress, identities=identities)
        _settle_everywhere(plan, loaded, identities, out_dir, overwrite, report, log)
    engine = EmbeddingEngine(encoder, cache, batch_size=batch_size, progress=progress)
    try:
        _prefetch(engine, encoder, plan, loaded)
        if main:
            context = ScoreContext(encoder, batch_size, progress, beta)
            metas = {
                v: recorded_meta(encoder.meta, weights, f, precision, v)
                for v, (f, _) in folders.items()
            }
            _evaluate_all(plan, loaded, engine, context, report, log, identities, folders, metas)
    finally:
        report.encoding = engine.stats.to_dict()
        report.seconds = time.perf_counter() - started
        try:
            engine.close()  # the block in flight committed (after Ctrl-C too)
        finally:
            if cache is not None:
                cache.close()
        if main:  # also after Ctrl-C or an error: what was done is recorded
            settings = {
                "batch_size": batch_size,
                "precision": precision,
                "device": device,
                "backend": encoder.meta.framework,  # what ran (after any fallback)
                "beta": beta,
                "requested_backend": backend if isinstance(model, str) else None,
            }
            write_run_record(out_dir, plan, report, settings, log)
            for variant, (folder, its) in folders.items():
                its.encoding, its.seconds = report.encoding, report.seconds
                if folder.is_dir():  # the model's speed and hardware beside the variant's files
                    more = {**settings, "compression": variant.kwargs()}
                    write_run_record(folder, _cached_plan(plan), its, more, log)
    return report


def _cached_plan(plan: Plan) -> Plan:
    """The plan's tasks a variant of the model's cached vectors can score (not NER's)."""
    return replace(plan, tasks=tuple(t for t in plan.tasks if KIND_RUNS[t.type].cached))


def _variant_reports(
    encoder: Encoder,
    precision: str,
    out_dir: Path,
    report: RunReport,
    dims: Sequence[int],
    precisions: Sequence[str],
) -> dict[Compression, tuple[Path, RunReport]]:
    """Each variant the run scores (``costs.variants``: a dimension above the model's is
    refused here, once its dimension is known), with its folder — MTEB's
    ``<revision>/experiments/<name>/``, the name from the variant's ``experiment_kwargs`` with
    any of the run's own (its backend, its dtype) — and its report, kept in ``report``."""
    revision = out_dir.parent.parent if out_dir.parent.name == EXPERIMENTS else out_dir
    base = experiment_kwargs(encoder.meta.framework, precision)
    out = {}
    for variant in variants(dims, precisions, encoder.meta.embedding_dim):
        name = experiment_name({**base, **variant.kwargs()})
        its = RunReport(results_dir=revision / EXPERIMENTS / name, run_id=report.run_id)
        report.variants[name] = its
        out[variant] = (its.results_dir, its)
    return out


def _silent(_: str) -> None:
    """A variant folder's skips and stale files are the model's folder's to say."""


def _pending_everywhere(
    plan: Plan, out_dir: Path, overwrite: bool, report: RunReport, log: Log
) -> list[Task]:
    """The plan's tasks that the model's folder or any variant's folder needs scored."""
    needed = {t.name for t in pending(plan, out_dir, overwrite, report, log)}
    for its in report.variants.values():
        needed |= {
            t.name for t in pending(_cached_plan(plan), its.results_dir, overwrite, its, _silent)
        }
    return [t for t in plan.tasks if t.name in needed]


def _settle_everywhere(
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
    cached = _cached_plan(plan)
    for its in report.variants.values():
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


def _identity(encoder: Encoder, precision: str, weights: str | None = None) -> dict[str, Any]:
    """What keys the model's embedding cache file. Vectors that other code computes for the same
    model name — ONNX Runtime (1e-7 away), its int8 export (1e-2), transformers' mean or CLS
    pooling, fp16/bf16 — get a file of their own: the variant is the backend record's
    (``models.backends.cache_variant``); every other cache keeps the key it always had, so
    existing caches stay valid."""
    meta = encoder.meta
    return {
        "model": meta.name,
        "revision": meta.revision,
        "source": meta.source,
        "variant": cache_variant(meta.framework, precision),
        # a text with no known word has no vector (an all-NaN row) for word-vector models only
        "nan_rows": bool(getattr(encoder, "no_vector_rows", False)),
        # computed once per run (``local_weights``): the value the cache would compute itself
        "fingerprint": weights,
    }
