"""The run records beside a model's results: ``runs.jsonl``, one JSON line per ``chemteb run``.

Each record holds the run's hardware, settings, encoding statistics, per-task statuses and
errors; each result file names its run by ``chemteb_run_id``. The file name ends in ``.jsonl``
so that MTEB's loaders, which read every ``*/*/*.json`` of a results folder as a task result,
never see it. This module is the home of ``runs.jsonl``: it alone reads and writes it (the
runner hands it a record, ``append_run``). Folders written before this change kept the latest record in ``run_meta.json``
(which breaks MTEB's loaders); a run into such a folder moves that record into ``runs.jsonl``
(``migrate_run_meta``), and readers still accept it where no ``runs.jsonl`` record exists.
A record whose ``run_id`` is not a string is kept but names no run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from chemteb_eval._files import append_json_line, read_json_lines

from .schema import read_json_object

__all__ = [
    "LEGACY_RUN_META",
    "RUNS_FILE",
    "append_run",
    "latest_run",
    "migrate_run_meta",
    "read_runs",
    "record_files",
    "run_record",
]

RUNS_FILE = "runs.jsonl"  # every run's record, one JSON line each (MTEB's glob skips .jsonl)
LEGACY_RUN_META = "run_meta.json"  # the latest record, in folders written before runs.jsonl


def read_runs(folder: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The run records of one revision folder, oldest first, and a line per unreadable one.

    Records are the objects of ``runs.jsonl`` (a torn or hostile line is reported, not fatal);
    a record moved there from a legacy ``run_meta.json`` counts as the oldest. A folder with
    none gives its legacy ``run_meta.json`` record, if any."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    path = folder / RUNS_FILE
    if path.is_symlink():  # what a planted link points at is not this folder's record
        kind = "a link; not followed" if path.is_file() else "not a regular file (a link)"
        problems.append(f"{path}: {kind}")
    elif path.exists():
        try:
            lines, problems = read_json_lines(path)
        except (OSError, ValueError) as exc:
            lines, problems = [], [f"{path}: {exc}"]
        for n, line in enumerate(lines, start=1):
            if isinstance(line, dict):
                records.append(line)
            else:
                problems.append(f"{path}: record {n} is not a JSON object")
        records.sort(key=lambda r: r.get(_MOVED) != LEGACY_RUN_META)  # stable: moved first
        records = [{k: v for k, v in r.items() if k != _MOVED} for r in records]
    if not records and (folder / LEGACY_RUN_META).exists():
        try:
            records = [_legacy_record(folder)]
        except (OSError, ValueError) as exc:
            problems.append(f"{folder / LEGACY_RUN_META}: {exc}")
    return records, problems


def record_files(dirs: Iterable[Path]) -> list[Path]:
    """The run-record files of ``dirs`` that exist (each folder's ``runs.jsonl``, then its
    legacy ``run_meta.json``)."""
    return [p for d in dirs for p in (d / RUNS_FILE, d / LEGACY_RUN_META) if p.exists()]


def append_run(folder: Path, record: Mapping[str, Any], log: Callable[[str], None]) -> None:
    """Append one run's record to ``folder``'s ``runs.jsonl``, a legacy ``run_meta.json``
    moved in first (``migrate_run_meta``). What could not be done is one ``[warning]`` line on
    ``log``: the run's results are written either way."""
    left = migrate_run_meta(folder)
    if left is not None:
        log(f"[warning] {left}; remove it to let MTEB read the folder")
    try:
        append_json_line(folder / RUNS_FILE, record)
    except (OSError, ValueError) as exc:  # the results are written; say what was not
        log(f"[warning] the run's record (hardware, timings) was not written: {exc}")


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


def migrate_run_meta(folder: Path) -> str | None:
    """Move a folder's legacy ``run_meta.json`` into ``runs.jsonl`` and remove it, so that
    MTEB's loaders can read the folder. The record is appended (never a rewrite, which would
    lose another run's line appended meanwhile), marked as moved, and read back as the oldest;
    it is not added again when ``runs.jsonl`` already holds its run.

    Returns:
        ``None`` when there was nothing to move or it was moved; otherwise why the file was left
        where it is (a link, unreadable, not a JSON object), for the caller to say.
    """
    legacy = folder / LEGACY_RUN_META
    if not (legacy.exists() or legacy.is_symlink()):
        return None
    path = folder / RUNS_FILE
    try:
        record = _legacy_record(folder)
        lines, _ = read_json_lines(path) if path.exists() else ([], [])
        known = {
            r["run_id"] for r in lines if isinstance(r, dict) and isinstance(r.get("run_id"), str)
        }
        run_id = record.get("run_id")
        if not isinstance(run_id, str) or run_id not in known:
            append_json_line(path, {**record, _MOVED: LEGACY_RUN_META})
        legacy.unlink()
    except (OSError, ValueError) as exc:
        return f"{legacy}: left in place ({exc}); MTEB's loaders read it as a task result"
    return None


_MOVED = "chemteb_moved_from"  # marks the record a legacy run_meta.json held


def _legacy_record(folder: Path) -> dict[str, Any]:
    legacy = folder / LEGACY_RUN_META
    if legacy.is_symlink():  # never copy what a planted link points at into the results
        raise ValueError("a link; not followed")
    return read_json_object(legacy)


def _scored(record: Mapping[str, Any]) -> bool:
    tasks = record.get("tasks")
    return isinstance(tasks, Mapping) and any(status == "done" for status in tasks.values())
