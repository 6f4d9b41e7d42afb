"""The declarations recorded beside a task file's results: ``{Task}.task.yaml``.

A run that scores a task of a task file records its declaration beside the result file (not
.json: MTEB's result loaders read every ``*/*/*.json``, and ours every JSON beside the
results), naming the data its scores came from; ``rank``, ``compare``, the model card and the
Space read the task back from it. This module is that file's home: it alone names, writes,
finds and reads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from chemteb_eval._files import write_text_atomic

from .custom import FORMATS, read_task_file
from .declaration import TaskFileError, parse_declaration
from .records import Task

__all__ = [
    "TASK_FILE_SUFFIX",
    "read_recorded_task",
    "recorded_digest",
    "recorded_path",
    "recorded_tasks",
    "write_recorded_task",
]

# Beside a task file's results: ``{Task}.task.yaml``, its declaration.
TASK_FILE_SUFFIX = ".task.yaml"
_FINGERPRINT = re.compile(r"sha256:[0-9a-f]{16}")


def recorded_path(folder: Path, name: str) -> Path:
    """Where task ``name``'s declaration is recorded in a results folder."""
    return folder / f"{name}{TASK_FILE_SUFFIX}"


def write_recorded_task(folder: Path, task: Task, scored: str | None) -> Path:
    """Record a task file's task beside its result in ``folder`` (atomically): its declaration,
    naming the data its scores came from (``scored``: a local source's fingerprint is the scored
    bytes', as the files may have changed between reading the task file and loading them)."""
    path = recorded_path(folder, task.name)
    write_text_atomic(path, task.declared.naming(scored))
    return path


def recorded_digest(folder: Path, name: str) -> str:
    """The declaration digest of the task recorded in ``folder`` as ``name``; ``"unknown"``
    when no readable declaration is recorded there."""
    try:
        return read_recorded_task(recorded_path(folder, name)).declaration_digest()
    except (TaskFileError, OSError):
        return "unknown"


def read_recorded_task(path: str | Path) -> Task:
    """The task a results folder recorded (``{Task}.task.yaml``, written by the run): checked as
    a task file is, but its files are not needed — the recorded fingerprint names the data.

    Raises:
        TaskFileError: the file is unreadable, or not a declaration the run writes.
    """
    path = Path(path)
    data = parse_declaration(path, None)
    src = data.get("source")
    if not isinstance(src, dict):
        raise TaskFileError(f"{path}: source is missing.")
    where = str(path)
    if "hub" in src:
        return read_task_file(path, data=data).to_task()
    fingerprint = src.get("fingerprint")
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        raise TaskFileError(f"{where}: source.fingerprint {fingerprint!r} is not sha256:<16 hex>.")
    fmt = src.get("format")
    if fmt not in FORMATS:
        raise TaskFileError(f"{where}: source.format {fmt!r}; use one of {list(FORMATS)}.")
    # checked as a task file whose source is this very folder (it exists), then re-pointed
    checked = dict(data, source={"path": ".", "format": fmt})
    declared = read_task_file(path, data=checked, fingerprint=fingerprint)
    return replace(
        declared, written=src.get("path") if isinstance(src.get("path"), str) else None
    ).to_task()


def recorded_tasks(dirs: Iterable[Path], skipped: list[str]) -> list[Task]:
    """The tasks a model's task-file runs recorded beside their results in ``dirs`` (untrusted:
    a file that is not a declaration the run writes is skipped with the reason)."""
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
