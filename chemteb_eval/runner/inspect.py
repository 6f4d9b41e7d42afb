"""A task inspected (issue 48, ``chemteb inspect``): its data loaded as a run loads it and its
quality counted (``data.quality``); the CLI only prints the record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chemteb_eval.data import load_task
from chemteb_eval.data.quality import data_quality
from chemteb_eval.tasks import Task

__all__ = ["inspect_task"]


def inspect_task(task: Task, data_path: str | Path | None = None) -> dict[str, Any]:
    """``{"task", "type", "data_quality"}`` of ``task`` (a task file's with ``data_path``)."""
    data = load_task(task, data_path=data_path)
    return {"task": task.name, "type": task.type, "data_quality": data_quality(data)}
