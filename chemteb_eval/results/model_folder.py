"""One model's result folder, read once: MTEB's ``<model>/<revision>/<Task>.json`` layout (ours
too), its experiments (``<revision>/experiments/<name>/``: another backend or dtype of the model),
its ``model_meta.json``, its run records and the tasks its task-file runs recorded.

The middle layer of three, as MTEB's ``task_result -> model_result -> benchmark_results``: a
result file is ``schema.ResultFile``'s; a folder of model folders is ``scan``'s; a benchmark's
board is ``board``'s. ``hub.model_card`` reads a model's folder with the same pieces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval.errors import short_repr
from chemteb_eval.tasks import Task

from .io import EXPERIMENTS, experiment_label
from .runs import LEGACY_RUN_META, RUNS_FILE, latest_run, read_runs
from .schema import ResultFile, read_json, read_json_object

__all__ = [
    "NOT_RESULTS",
    "ScannedModel",
    "meta_name",
    "model_name",
    "read_model_folder",
    "recorded_tasks",
    "result_dirs",
    "result_paths",
]

# The JSON files of a results folder that are not a task's result.
NOT_RESULTS = frozenset({"model_meta.json", LEGACY_RUN_META})


def result_paths(folder: Path) -> list[Path]:
    """The task result files directly in ``folder`` (one revision's or experiment's), by name."""
    return sorted(p for p in folder.glob("*.json") if p.name not in NOT_RESULTS)


def model_name(folder: Path, meta: Mapping[str, Any] | None, table: Mapping[str, str]) -> str:
    """A model folder's model id: ``model_meta.json``'s ``name``, else the model table's id
    for the folder, else the folder name with ``__`` read as ``/``. (What prints it makes it
    safe to show; a model card, where it heads the card, also wants one line: ``meta_name``.)"""
    name = (meta or {}).get("name")
    if isinstance(name, str) and name:
        return name
    return table.get(folder.name) or folder.name.replace("__", "/")


def meta_name(meta_path: Path) -> str | None:
    """``model_meta.json``'s ``name``, checked to be one line of text (it names a model card's
    ``model-index`` entry and heads a new card); ``None`` when the file has none. ``ValueError``
    naming the file otherwise."""
    try:
        meta = read_json(meta_path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"results: {meta_path} is not valid JSON ({exc}).") from None
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is None:
        return None
    if not isinstance(name, str) or not name.strip() or len(name.splitlines()) != 1:
        raise ValueError(
            f"results: {meta_path}: 'name' is {short_repr(name)}, not a model id on one line; "
            "fix it (or delete the key to use the repo id)."
        )
    return name


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


def _by_mtime(files: Iterable[Path], skipped: list[str]) -> list[Path]:
    """``files`` oldest first; a file that cannot be stat-ed is skipped with the reason."""
    dated = []
    for path in files:
        try:
            dated.append((path.stat().st_mtime, str(path), path))
        except OSError as exc:
            skipped.append(f"{path}: {exc.strerror or exc}")
    return [path for *_, path in sorted(dated)]


def result_dirs(folder: Path) -> list[tuple[str | None, list[Path]]]:
    """A model folder's result folders: its revision folders (``None``: the model as it is),
    then each experiment's (MTEB's ``<revision>/experiments/<name>/``: another backend or
    compute dtype of the model, which is another row, never mixed into the model's)."""
    revisions = sorted(p for p in folder.iterdir() if p.is_dir())
    out: list[tuple[str | None, list[Path]]] = [(None, revisions)]
    names = sorted({e.name for r in revisions for e in (r / EXPERIMENTS).glob("*") if e.is_dir()})
    out += [(name, [r / EXPERIMENTS / name for r in revisions]) for name in names]
    return out


def read_model_folder(
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
    model.custom = recorded_tasks(dirs, model.skipped)
    return model


def recorded_tasks(dirs: list[Path], skipped: list[str]) -> list[Task]:
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
