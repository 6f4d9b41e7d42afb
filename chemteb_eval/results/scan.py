"""A folder of model folders, scanned: every model (and each of its experiments) read once
(``model_folder``), folders that name one model told apart, and the versions of a custom task
that models recorded under one name split into tasks of their own. No benchmark is chosen and
nothing is ranked here (``board``, ``ranking``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from chemteb_eval.tasks import Task
from chemteb_eval.tasks.catalog import TaskCatalog
from chemteb_eval.tasks.recorded import TASK_FILE_SUFFIX

from .eee_read import record_files
from .inputs import model_table_paths, read_model_table
from .io import EXPERIMENTS
from .model_folder import ScannedModel, read_model_folder, result_dirs

__all__ = ["catalog_of", "scan_results", "split_versions"]


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
    read: set[Path] = set()  # records already read, through another root that holds them
    for root in map(Path, roots):
        # Every Eval Ever records, read beside the model folders
        records = [r for r in record_files(root) if r.resolve() not in read]
        read.update(r.resolve() for r in records)
        if not root.is_dir() and not records:
            raise ValueError(f"results: {root} is not a folder.")
        start = len(scanned)
        problem = ""
        try:
            table = _model_table(root, model_table)
        except ValueError as exc:
            if model_table:  # asked for by name: the caller says so in one line
                raise
            table, problem = {}, f"{exc} Folder names are shown instead."  # found beside: go on
        folders = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        for folder in folders:  # an EEE folder holds no result file: it gives no model
            for experiment, dirs in result_dirs(folder):
                model = read_model_folder(folder, experiment, dirs, table, problem)
                if model is not None:
                    scanned.append(model)
                    problem = ""  # told once, with the first model of the root
        if records:
            _read_records(root, records, scanned, start)
    _tell_apart(scanned)
    if split:
        split_versions(scanned)
    return scanned


def _read_records(root: Path, records: list[Path], scanned: list[ScannedModel], start: int) -> None:
    """The root's Every Eval Ever records as models (``eee_read``), each record skipped said
    with the root's first model; a root where no model could be read says why in one line."""
    from .eee_read import read_eee

    models, skipped = read_eee(root, records)
    scanned += models
    if not skipped:
        return
    if len(scanned) == start:
        more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
        raise ValueError(
            f"results: {root} holds {len(records)} Every Eval Ever record(s) and none could be "
            f"read: {skipped[0]}{more}"
        )
    scanned[start].skipped[:0] = skipped


def _tell_apart(scanned: list[ScannedModel]) -> None:
    """Folders that name the same model keep their own rows, named ``model [folder]``, with a
    notice: merging them silently would mix two runs' scores."""
    by_name: dict[str, list[ScannedModel]] = {}
    for model in scanned:
        by_name.setdefault(model.name, []).append(model)
    for name, same in by_name.items():
        if len(same) < 2:
            continue
        # one model folder's experiments that name the same variant (a copied experiment
        # folder, a model_meta.json edited): told apart by their experiment folders
        for model in same:
            where = str(model.source or model.folder)
            if model.experiment is not None and _shared_folder(model, same):
                where += f", {EXPERIMENTS}/{model.experiment}"
            model.name = f"{name} [{where}]"
        # a note, once per group: nothing is skipped, both are shown
        folders = ", ".join(str(m.source or m.folder) for m in same)
        same[0].notes.append(
            f"{folders}: each names the same model ({name}); shown as '{name} [folder]'"
        )


def _shared_folder(model: ScannedModel, same: list[ScannedModel]) -> bool:
    return sum(m.folder == model.folder for m in same) > 1


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
                    f"{model.folder}: {task.name}{TASK_FILE_SUFFIX} declares another task than its "
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
        renamed = {
            t.name: _versioned(t, model, set(versions))
            for t in model.custom
            if t.name.casefold() in split
        }
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


def _versioned(task: Task, model: ScannedModel, taken: set[str]) -> str:
    """``Name(<8 hex>)`` after the version's content; longer where a task the results recorded
    is itself named so (``taken``, case-folded): a version is never merged with such a task."""
    import hashlib

    digest = hashlib.sha256("\0".join(_version(task, model)).encode()).hexdigest()
    for size in (8, 12, 16, 32):
        name = f"{task.name}({digest[:size]})"
        if name.casefold() not in taken:
            break
    return name


def catalog_of(scanned: list[ScannedModel]) -> TaskCatalog:
    """The tasks ``scanned`` knows: the registered ones and every custom task its models
    recorded (after ``scan_results`` split versions apart: one record a name)."""
    tasks: dict[str, Task] = {}
    for model in scanned:
        for task in model.custom:
            tasks.setdefault(task.name, task)
    return TaskCatalog.with_tasks(tasks.values())
