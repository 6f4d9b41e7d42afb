"""The run records beside a model's results: ``runs.jsonl``, one JSON line per ``chemteb run``.

Each record holds the run's hardware, settings, encoding statistics, per-task statuses and
errors; each result file names its run by ``chemteb_run_id``. The file name ends in ``.jsonl``
so that MTEB's loaders, which read every ``*/*/*.json`` of a results folder as a task result,
never see it. Folders written before this change kept the latest record in ``run_meta.json``
(which breaks MTEB's loaders); a run into such a folder moves that record into ``runs.jsonl``
(``migrate_run_meta``), and readers still accept it where no ``runs.jsonl`` record exists.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chemteb_eval._files import read_json_lines, write_text_atomic

from .schema import read_json_object

__all__ = [
    "LEGACY_RUN_META",
    "RUNS_FILE",
    "latest_run",
    "migrate_run_meta",
    "read_runs",
    "run_record",
]

RUNS_FILE = "runs.jsonl"  # every run's record, one JSON line each (MTEB's glob skips .jsonl)
LEGACY_RUN_META = "run_meta.json"  # the latest record, in folders written before runs.jsonl


def read_runs(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The run records of one revision folder, oldest first, and a line per unreadable one.

    Records are the objects of ``runs.jsonl`` (a torn or hostile line is reported, not fatal);
    a folder with none gives its legacy ``run_meta.json`` record, if any."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    path = folder / RUNS_FILE
    if path.exists():
        try:
            lines, problems = read_json_lines(path)
        except (OSError, ValueError) as exc:
            lines, problems = [], [f"{path}: {exc}"]
        records = [r for r in lines if isinstance(r, dict)]
    if not records and (folder / LEGACY_RUN_META).exists():
        try:
            records = [read_json_object(folder / LEGACY_RUN_META)]
        except (OSError, ValueError) as exc:
            problems.append(f"{folder / LEGACY_RUN_META}: {exc}")
    return records, problems


def latest_run(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The record that describes a folder's results as a whole: the last run that scored a
    task (a rerun that only found finished results changes nothing); with none, the first run.
    This is exactly what ``run_meta.json`` used to hold. ``{}`` for no records."""
    records = list(records)
    scored = [r for r in records if _scored(r)]
    chosen = scored[-1] if scored else (records[0] if records else {})
    return dict(chosen)


def run_record(folder: Path) -> dict[str, Any]:
    """``latest_run`` of a revision folder's records (``{}`` when it has none)."""
    return latest_run(read_runs(folder)[0])


def migrate_run_meta(folder: Path) -> bool:
    """Move a folder's legacy ``run_meta.json`` into ``runs.jsonl`` (first, as the oldest
    record, unless ``runs.jsonl`` already holds its run) and remove it, so that MTEB's loaders
    can read the folder. An unreadable ``run_meta.json`` is left where it is.

    Returns:
        Whether the file was moved.
    """
    legacy = folder / LEGACY_RUN_META
    if not legacy.is_file():
        return False
    path = folder / RUNS_FILE
    try:
        record = read_json_object(legacy)
        lines, _ = read_json_lines(path) if path.exists() else ([], [])
        known = {r.get("run_id") for r in lines if isinstance(r, dict)}
        if record.get("run_id") is None or record.get("run_id") not in known:
            old = path.read_text(encoding="utf-8") if path.exists() else ""
            line = json.dumps(record, allow_nan=False, separators=(",", ":"))
            write_text_atomic(path, line + "\n" + old)
        legacy.unlink()
    except (OSError, ValueError):
        return False
    return True


def _scored(record: Mapping[str, Any]) -> bool:
    tasks = record.get("tasks")
    return isinstance(tasks, Mapping) and any(status == "done" for status in tasks.values())
