"""Scores into a model's card: ``model-index`` entries the way MTEB writes them, merged into the
card's existing metadata, and the Hub's newer per-result files (``.eval_results/<Task>.yaml``).

Re-running is idempotent: when nothing changed, nothing is committed. Entries of other tasks,
other tools and every other card field stay as they were.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemteb_eval import __version__
from chemteb_eval.errors import HubUnavailableError
from chemteb_eval.results.board import DETAIL_KEYS
from chemteb_eval.results.io import EXPERIMENTS
from chemteb_eval.results.markup import md
from chemteb_eval.results.model_folder import (
    folder_meta_name,
    folder_variant,
    recorded_tasks,
    result_paths,
)
from chemteb_eval.results.runs import read_runs
from chemteb_eval.results.schema import ResultFile, check_score, match_task
from chemteb_eval.tasks import (
    BENCHMARKS,
    KINDS,
    Benchmark,
    Task,
    benchmark_tasks,
    eval_splits,
    main_score,
)
from chemteb_eval.tasks.catalog import BUILTIN, TaskCatalog

from ._errors import hub_errors, require_token
from ._repo import check_repo_id
from .card_merge import CardMergeError, card_with_results

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

__all__ = [
    "HF_TASK_TYPES",
    "CardMergeError",
    "PushReport",
    "TaskResult",
    "benchmark_means",
    "card_with_results",
    "eval_result_files",
    "eval_results",
    "find_task_results",
    "project_url",
    "push_results",
]

# MTEB's map from its task types to the Hub's task categories (TaskMetadata._hf_task_type).
HF_TASK_TYPES = {name: k.hf_task for name, k in KINDS.items()}


@dataclass(frozen=True)
class TaskResult:
    """One result file matched to its task record."""

    task: Task
    file: ResultFile

    @property
    def revision(self) -> str | None:
        return self.file.dataset_revision or self.task.revision


def _result_files(path: Path) -> list[Path]:
    """The result files of the one model under ``path``: a revision folder, a model folder with
    one revision, or a results root with one model (``model_folder.result_paths`` reads each)."""
    if not path.is_dir():
        raise ValueError(f"results: {path} is not a folder.")
    try:
        return _result_files_in(path, result_paths)
    except OSError as exc:  # an unreadable folder inside (permissions, a dangling mount)
        raise ValueError(f"results: cannot read {exc.filename or path} ({exc.strerror}).") from None


def _result_files_in(path: Path, tasks_in: Callable[[Path], list[Path]]) -> list[Path]:
    direct = tasks_in(path)
    if direct:
        return direct
    revisions = [d for d in sorted(path.iterdir()) if d.is_dir() and tasks_in(d)]
    if len(revisions) == 1:
        return tasks_in(revisions[0])
    if len(revisions) > 1:
        names = ", ".join(d.name for d in revisions)
        raise ValueError(f"results: {path} holds several revisions ({names}); pass one of them.")
    models = [d for d in sorted(path.iterdir()) if d.is_dir() and any(d.glob("*/*.json"))]
    if len(models) == 1:
        return _result_files(models[0])
    if models:
        names = ", ".join(d.name for d in models)
        raise ValueError(
            f"results: {path} holds several models ({names}); pass one model's folder."
        )
    raise ValueError(f"results: no result files under {path}.")


def _recorded_catalog(folder: Path, log: Callable[[str], None]) -> TaskCatalog:
    """The registered tasks and those a task-file run recorded beside these results, so that
    their files match (a Hub-sourced one goes on the card under its dataset and commit)."""
    problems: list[str] = []
    found = recorded_tasks([folder], problems)  # the reader ``rank`` and the Space use
    for problem in problems:
        log(f"skipped {problem}")
    try:
        return TaskCatalog.with_tasks(found)
    except ValueError as exc:  # a recorded name that a registered task has
        log(f"skipped the recorded tasks of {folder}: {exc}")
        return BUILTIN


def find_task_results(
    path: str | Path, *, log: Callable[[str], None] = print
) -> tuple[str | None, list[TaskResult]]:
    """The result files of one model under ``path`` (a results root holding one model, a model
    folder, or a revision folder), with the model id from ``model_meta.json`` if present.

    Files of tasks whose data is not on the Hub (PipChem) or unknown to the registry are skipped
    with a line on ``log``.
    """
    if Path(path).name == EXPERIMENTS:  # the folder of a model's variants, not the model
        raise ValueError(
            _VARIANT.format(folder=path, what=f"the model's variants ({EXPERIMENTS}/)")
        )
    files = _result_files(Path(path))
    _not_a_variant(files[0].parent)
    catalog = _recorded_catalog(files[0].parent, log)
    model = folder_meta_name(files[0].parent)
    found = []
    for path in files:
        try:
            file = ResultFile.read(path)
        except (OSError, ValueError, RecursionError) as exc:
            raise ValueError(f"results: {path} is not a result file ({exc}).") from exc
        task = match_task(file.task_name, file.dataset_revision, catalog.list_tasks())
        if task is None:
            log(f"skipped {path.name}: no task named {file.task_name} in the registry")
        elif task.hf_path is None and task.builder == "custom":
            log(
                f"skipped {path.name}: {task.name} was scored on your own files, not a Hub "
                "dataset; publish them (chemteb publish-dataset --task-file ...) and run the "
                "task from its Hub source to put its score on a card"
            )
        elif task.hf_path is None:
            log(f"skipped {path.name}: {task.name}'s dataset is built locally, not on the Hub")
        else:
            _check_scores(path, file, task)
            found.append(TaskResult(task=task, file=file))
    return model, found


def _not_a_variant(folder: Path) -> None:
    """A card carries the model's own scores: never those of a variant of it (MTEB's
    ``experiments/<name>/``: its vectors compressed, another backend or dtype), which would be
    published under the model's name with nothing saying so."""
    kwargs = folder_variant(folder)
    if folder.parent.name == EXPERIMENTS or kwargs:
        what = f"a variant of the model ({EXPERIMENTS}/{folder.name})"
        raise ValueError(_VARIANT.format(folder=folder, what=what))


_VARIANT = (
    "results: {folder} holds {what}, not the model itself; a card carries the model's own "
    "scores: pass its revision folder (the results beside experiments/), which a plain run "
    "writes."
)


def _check_scores(path: Path, file: ResultFile, task: Task) -> None:
    """Every score a card would carry is a real number in ``SCORE_RANGE`` (``rank`` skips a
    file that is not; a card must not publish ``.nan``, ``true`` as 100 or 42 as 4200)."""
    for split, subset, entry in file.entries():
        for key in ("main_score", *DETAIL_KEYS[task.type]):
            if key in entry:
                try:
                    check_score(key, entry[key])
                except ValueError as exc:
                    raise ValueError(
                        f"results: {path}: {exc} (split {split}, subset {subset}); fix or "
                        "remove the file"
                    ) from None


def eval_results(results: Iterable[TaskResult]) -> list[EvalResult]:
    """``model-index`` entries, as MTEB's ``TaskResult.get_hf_eval_results`` writes them: per
    split and subset, the main score (raw, 0-1), then the type's other scores present."""
    from huggingface_hub import EvalResult

    out = []
    for result in results:
        task = result.task
        revision = result.revision
        for split, subset, entry in result.file.entries():
            keys = [task.main_score, *(k for k in DETAIL_KEYS[task.type] if k != task.main_score)]
            for key in keys:
                value = entry["main_score"] if key == task.main_score else entry.get(key)
                if not isinstance(value, (int, float)):
                    continue
                out.append(
                    EvalResult(
                        task_type=HF_TASK_TYPES[task.type],
                        task_name=task.type,
                        dataset_type=str(task.hf_path),
                        dataset_name=f"{task.name} ({subset})",
                        dataset_config=subset,
                        dataset_split=split,
                        dataset_revision=revision,
                        metric_type=key,
                        metric_name=key,
                        metric_value=float(value),
                    )
                )
    return out


def eval_result_files(
    results: Iterable[TaskResult],
    *,
    benchmark_repos: Mapping[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """``.eval_results/<Task>.yaml`` files (huggingface_hub's ``EvalResultEntry`` format), as
    MTEB pushes them: one entry per split and subset (main score x 100, 5 decimals) and the
    task's overall score (their mean) when every split of the file has a subset. Each entry
    names its ``source`` (chemteb-eval, with a link) and its ``date`` (when the run that wrote
    the file finished, from ``runs.jsonl``; an MTEB file's own ``date``; none when unknown, so
    the Hub shows the commit's time). A benchmark with every one of its tasks here gets
    ``.eval_results/<benchmark>.yaml``, its mean over tasks, as MTEB's ``push_eval_results``
    writes one — when it has a Hub dataset (``benchmark_repos``: name -> repo) to file it under.
    """
    import yaml
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    results = list(results)
    files = {}
    notes = f"Obtained using chemteb-eval v{__version__}"
    source = {"source_url": project_url(), "source_name": f"chemteb-eval v{__version__}"}
    dates = _RunDates()
    for result in results:
        task = result.task
        revision = result.revision
        date = dates.of(result.file)
        entries, scores = [], []
        for split, subset, entry in result.file.entries():
            scores.append(float(entry["main_score"]))
            entries.append(
                EvalResultEntry(
                    dataset_id=str(task.hf_path),
                    task_id=f"{task.name}_{subset}_{split}",
                    value=round(float(entry["main_score"]) * 100, 5),
                    dataset_revision=revision,
                    date=date,
                    notes=notes,
                    **source,
                )
            )
        if not entries:
            continue
        entries.append(
            EvalResultEntry(
                dataset_id=str(task.hf_path),
                task_id=task.name,
                value=round(sum(scores) / len(scores) * 100, 5),
                dataset_revision=revision,
                date=date,
                notes=notes,
                **source,
            )
        )
        files[f".eval_results/{task.name}.yaml"] = yaml.safe_dump(
            eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True
        )
    means = {
        bench.name: (bench, mean, date) for bench, mean, date in benchmark_means(results, dates)
    }
    for name in sorted(set(benchmark_repos or {}) - set(means)):
        log(
            f"{name}: --benchmark-repo given, but not every task of it is here at the "
            "benchmark's revisions; no benchmark mean written"
        )
    for bench, mean, date in means.values():
        repo = (benchmark_repos or {}).get(bench.name) or bench.hub_repo
        if repo is None:
            log(
                f"{bench.name}: all {len(bench.tasks)} tasks are here, but the benchmark has no "
                f"dataset on the Hub to file its mean under; pass --benchmark-repo "
                f"'{bench.name}=ORG/NAME' to add .eval_results/{bench.name}.yaml (one already "
                "on the repo is left as it is)"
            )
            continue
        overall = EvalResultEntry(
            dataset_id=repo,
            task_id=bench.name,
            value=round(mean * 100, 5),
            date=date,
            notes=f"Mean over the {len(bench.tasks)} tasks of the scores {bench.name} ranks "
            f"by; {notes}",
            **source,
        )
        files[f".eval_results/{bench.name}.yaml"] = yaml.safe_dump(
            eval_result_entries_to_yaml([overall]), sort_keys=False, allow_unicode=True
        )
    return files


def benchmark_means(
    results: Iterable[TaskResult], dates: _RunDates | None = None
) -> list[tuple[Benchmark, float, str | None]]:
    """Each registered benchmark all of whose tasks are among ``results`` at the revision it
    pins (a file of another revision is other data), on every split the benchmark scores: its
    mean over tasks of the scores the benchmark ranks by (``main_score``: ChemTEB(paper) ranks
    classification by F1, which the files' MTEB ``main_score`` is not), and the newest of the
    files' dates (``None`` if any is unknown)."""
    by_name = {r.task.name: r for r in results}
    dates = dates or _RunDates()  # the caller's: each folder's runs.jsonl read once
    out = []
    for bench in BENCHMARKS.values():
        if not all(name in by_name for name in bench.tasks):
            continue
        values, when = [], []
        for task in benchmark_tasks(bench):
            file = by_name[task.name].file
            if task.revision_status(file.dataset_revision) != "pinned":
                break
            try:
                value = file.score(
                    main_score(bench, task), eval_splits(bench, task), task.subset_weight_key
                )
            except ValueError:
                value = None
            if value is None:
                break
            values.append(value)
            when.append(dates.of(file))
        else:
            newest = None if None in when else max(w for w in when if w is not None)
            out.append((bench, sum(values) / len(values), newest))
    return out


def project_url() -> str:
    """chemteb-eval's home page, as the installed package's metadata names it (pyproject's
    ``[project.urls] Homepage``)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        for entry in metadata("chemteb-eval").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() == "homepage" and url.strip():
                return str(url.strip())
    except PackageNotFoundError:  # run from a source tree that was never installed
        pass
    return _HOMEPAGE


_HOMEPAGE = "https://huggingface.co/chemteb"  # the same as pyproject's, for uninstalled trees


class _RunDates:
    """When each result file was made, as an ISO-8601 UTC time (``2026-12-01T12:00:00Z``): the
    ``finished`` of the run that wrote it (``chemteb_run_id`` in ``runs.jsonl`` beside it), or
    the file's own ``date`` (MTEB 2's files: a POSIX time or an ISO string). Untrusted values
    that are not a time are dropped, never passed on."""

    def __init__(self) -> None:
        self._runs: dict[Path, dict[Any, dict[str, Any]]] = {}

    def of(self, file: ResultFile) -> str | None:
        run_id = file.extra.get("chemteb_run_id")
        if isinstance(run_id, str) and file.path is not None:
            folder = file.path.parent
            if folder not in self._runs:
                records, _ = read_runs(folder)
                self._runs[folder] = {
                    r["run_id"]: r for r in records if isinstance(r.get("run_id"), str)
                }
            found = _iso_time(self._runs[folder].get(run_id, {}).get("finished"))
            if found is not None:
                return found
        return _iso_time(file.extra.get("date"))


def _iso_time(value: Any) -> str | None:
    from datetime import datetime, timezone

    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, tz=timezone.utc)
        elif isinstance(value, str) and len(value) <= 64:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        else:
            return None
        if moment.tzinfo is None:  # a naive time: the writer's clock, zone unknown; read as UTC
            moment = moment.replace(tzinfo=timezone.utc)
        moment = moment.astimezone(timezone.utc)  # year 1 at +14:00 is out of range: dropped
    except (ValueError, OverflowError, OSError):
        return None
    # isoformat pads the year to four digits (strftime's %Y gives "999"), so these sort as times
    return moment.replace(microsecond=0, tzinfo=None).isoformat() + "Z"


@dataclass
class PushReport:
    """What push-results did (or would do in a dry run)."""

    repo_id: str
    card_diff: str = ""
    changed_files: list[str] = field(default_factory=list)
    unchanged_files: list[str] = field(default_factory=list)
    commit: str | None = None
    pr_url: str | None = None


def _operations(
    report: PushReport,
    old_card: str | None,
    new_card: str | None,
    files: dict[str, str],
    remote: dict[str, bytes | None],
    *,
    old_label: str = "Hub",
) -> list[Any]:
    """The commit's file operations (changed files only), noted in ``report`` with the card's
    diff."""
    from huggingface_hub import CommitOperationAdd

    operations = []
    if new_card is not None:
        report.card_diff = "".join(
            difflib.unified_diff(
                (old_card or "").splitlines(keepends=True),
                new_card.splitlines(keepends=True),
                fromfile=f"{report.repo_id}/README.md ({old_label})",
                tofile=f"{report.repo_id}/README.md (with ChemTEB results)",
            )
        )
        report.changed_files.append("README.md")
        operations.append(CommitOperationAdd("README.md", new_card.encode("utf-8")))
    else:
        report.unchanged_files.append("README.md")
    for path, text in files.items():
        if remote.get(path) == text.encode("utf-8"):
            report.unchanged_files.append(path)
        else:
            report.changed_files.append(path)
            operations.append(CommitOperationAdd(path, text.encode("utf-8")))
    return operations


def _remote_bytes(repo_id: str, path: str) -> bytes | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    try:
        local = hf_hub_download(repo_id, path)
    except RemoteEntryNotFoundError:
        return None
    return Path(local).read_bytes()


def _card_text(repo_id: str, data: bytes | None) -> str | None:
    """The card's text (a BOM kept: the merge writes it back); a card that is not UTF-8 cannot
    be merged into without guessing, so it is named, with the place."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CardMergeError(
            f"{repo_id}/README.md is not UTF-8 text (byte {exc.start}, line {line}); the Hub "
            "shows it garbled: save it as UTF-8 on the Hub, then retry."
        ) from None


def _read_remote(
    repo_id: str, paths: Iterable[str], *, dry_run: bool, log: Callable[[str], None]
) -> tuple[str | None, dict[str, bytes | None], bool]:
    """The card's text and our other files' bytes on the Hub, and whether they could be read.

    A dry run that cannot reach the Hub (offline, network down) says so in one line and goes
    on as for a repo without a card, so that it still shows what we would write.
    """
    try:
        with hub_errors(f"read the card of {repo_id}", repo_id):
            card = _remote_bytes(repo_id, "README.md")
            remote = {path: _remote_bytes(repo_id, path) for path in paths}
    except HubUnavailableError as exc:
        if not dry_run:
            raise
        log(f"[dry run] {exc} Shown below: what a repo without a card would get.")
        return None, {}, False
    return _card_text(repo_id, card), remote, True


def push_results(
    results: str | Path,
    repo_id: str,
    *,
    create_pr: bool = False,
    dry_run: bool = False,
    benchmark_repos: Mapping[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> PushReport:
    """Add a model's ChemTEB scores to its model card (and ``.eval_results/``) on the Hub.

    Args:
        results: the model's results (a results root with one model, its folder, or a
            revision folder).
        repo_id: the model repository (``org/name``).
        create_pr: open a pull request instead of committing to ``main``.
        dry_run: print the card diff and the files that would change; change nothing. With the
            Hub unreachable it shows the card a repo without one would get.
        benchmark_repos: benchmark name -> the Hub dataset its overall score is filed under
            (``.eval_results/<benchmark>.yaml``, written when all its tasks are present);
            default the registry's (none of ChemTEB's benchmarks has one yet).
        log: where progress lines go.

    Returns:
        The ``PushReport``.
    """
    from huggingface_hub import HfApi

    check_repo_id(repo_id)
    model, found = find_task_results(results, log=log)
    if not found:
        raise ValueError(f"results: no result file under {results} has a task on the Hub.")
    report = PushReport(repo_id=repo_id)
    for name, repo in (benchmark_repos or {}).items():
        if name not in BENCHMARKS:
            raise ValueError(
                f"--benchmark-repo: {name!r} is not a benchmark; use one of {', '.join(BENCHMARKS)}."
            )
        check_repo_id(repo, "--benchmark-repo")
    files = eval_result_files(found, benchmark_repos=benchmark_repos, log=log)
    old_card, remote, read = _read_remote(repo_id, files, dry_run=dry_run, log=log)
    try:
        new_card = card_with_results(
            old_card, model or repo_id, eval_results(found), aliases=[repo_id]
        )
    except CardMergeError as exc:
        raise CardMergeError(f"{repo_id}/README.md: {exc}") from None
    label = "Hub" if read else "not read: Hub unreachable"
    operations = _operations(report, old_card, new_card, files, remote, old_label=label)
    tasks = sorted({r.task.name for r in found})
    if dry_run:
        log(report.card_diff or f"{repo_id}/README.md: unchanged")
        log(f"[dry run] would change: {', '.join(report.changed_files) or 'nothing'}")
        return report
    if not operations:
        log(
            f"{repo_id}: the card already holds these {len(tasks)} tasks' scores; nothing to commit."
        )
        return report
    require_token(f"push results to {repo_id}")
    with hub_errors(f"push results to {repo_id}", repo_id):
        info = HfApi().create_commit(
            repo_id,
            operations=operations,
            commit_message=f"Add ChemTEB results ({len(tasks)} tasks, chemteb-eval {__version__})",
            commit_description="Tasks: " + ", ".join(md(t) for t in tasks),  # Markdown
            create_pr=create_pr,
        )
    report.commit = info.oid
    report.pr_url = info.pr_url
    log(
        f"{repo_id}: {len(report.changed_files)} file(s) committed at {info.oid}"
        + (f"; pull request {info.pr_url}" if info.pr_url else "")
    )
    return report
