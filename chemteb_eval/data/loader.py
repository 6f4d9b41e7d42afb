"""Load a task's evaluation data from where its record says it lives: the Hub at its pinned
revision or a Hub-layout folder (``hub_reader``), a task file's files (``custom``), a locally
built suite (PipChem) or a copy in ``../shared/data``, or a restricted set's copy a user holds.
Each task type gets the inputs its scoring function needs (see ``types``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from chemteb_eval.errors import ChemtebError, MissingDataError
from chemteb_eval.tasks.records import Task

from .custom import read_custom
from .hub_reader import HUB_LOADERS, quiet_datasets, stratified_subsample
from .types import ClassificationData, TaskData

__all__ = ["HUB_LOADERS", "load_task", "stratified_subsample", "user_copy"]


def load_task(
    task: Task,
    *,
    splits: Sequence[str] | None = None,
    data_path: str | Path | None = None,
    log: Callable[[str], None] | None = None,
    scored: Callable[[str], None] | None = None,
) -> TaskData:
    """Load a task's evaluation data, transformed and normalised for its type.

    Args:
        task: the task record.
        splits: the splits to load; default the task's ``eval_splits``.
        data_path: a local folder in Hub layout to read instead of the Hub (fixtures, or a
            dataset this project built); default the task's Hub id at its pinned revision, or
            the locally built dataset for tasks with a builder. For a restricted set
            (``builder="local"``) the folder holding the user's copy, in the format its
            ``obtain`` names. For a task declared by a task file (``builder="custom"``), its
            files (the task file's ``source.path``).
        log: where a line goes about what a user's files hold that is not scored (queries
            without a relevant document).
        scored: for a task file's task, receives the fingerprint of the very bytes its data
            was read from (read once, so what is scored is what is named).

    Returns:
        ``{subset: {split: data}}``.
    """
    splits = tuple(splits or task.eval_splits)
    with quiet_datasets():
        data = _load_task(task, splits, data_path, log, scored)
    if task.probe:  # the task's probe options travel with its classification data
        for by_split in data.values():
            for split, split_data in by_split.items():
                if isinstance(split_data, ClassificationData):
                    by_split[split] = dataclasses.replace(split_data, probe=task.probe)
    return data


def _load_task(
    task: Task,
    splits: tuple[str, ...],
    data_path: str | Path | None,
    log: Callable[[str], None] | None = None,
    scored: Callable[[str], None] | None = None,
) -> TaskData:
    if task.builder == "local":
        return _local_copy(task, splits, data_path)
    if task.builder == "custom":  # a user's own files, declared by a task file
        return read_custom(task, splits, data_path, log=log, scored=scored)
    built = _BUILDERS[task.builder](task, splits) if task.builder and data_path is None else None
    if built is not None and not isinstance(built, str):
        return built
    loader = HUB_LOADERS.get(task.type)
    if loader is None:
        raise ValueError(f"task: {task.name} ({task.type}) loads only from its local copy.")
    if task.builder is None and task.revision is None and data_path is None:
        raise ChemtebError(
            f"{task.name}: {task.hf_path} has no pinned revision in the registry (none is "
            "invented), so it is not loaded from the Hub. Pin a commit in its task record, or "
            "pass data_path= to a local copy."
        )
    if data_path is not None:
        path = str(data_path)
        if not Path(path).is_dir():
            raise ValueError(f"data_path: {path} is not a folder.")
    elif built is not None:
        path = built
    else:
        assert task.hf_path is not None
        path = task.hf_path
    return loader(task, path, splits)


def _pipchem_folder(task: Task, splits: tuple[str, ...]) -> str:
    from . import pipchem  # builds the suite on first use (~12 s), then reads the cache

    return str(pipchem.dataset_path(task.name))


def _shared_copy(task: Task, splits: tuple[str, ...]) -> TaskData:
    from .shared_sets import SHARED_READERS

    if task.name not in SHARED_READERS:
        raise ValueError(f"task: {task.name} has no reader of a local copy in ../shared/data.")
    reader = SHARED_READERS[task.name]
    out: TaskData = {}
    for split in splits:
        data = reader(split)
        by_subset = data if isinstance(data, Mapping) else {"default": data}
        for subset, split_data in by_subset.items():
            out.setdefault(subset, {})[split] = split_data
    return out


def user_copy(task: Task, data_path: str | Path | None) -> Path:
    """The folder of the user's copy of a restricted set (``builder="local"``), checked; else
    ``MissingDataError`` saying where to obtain it and in what format."""
    if data_path is None:
        raise MissingDataError(
            f"{task.name} is not redistributable, so it runs on a copy you hold: pass "
            f"--data-path {task.name}=DIR (Python: data_paths={{{task.name!r}: DIR}}). "
            f"Obtain: {task.obtain}"
        )
    folder = Path(data_path).expanduser()
    if not folder.is_dir():
        raise MissingDataError(f"--data-path {task.name}={data_path}: not a folder.")
    return folder


def _local_copy(task: Task, splits: tuple[str, ...], data_path: str | Path | None) -> TaskData:
    from .shared_sets import LOCAL_READERS

    folder = user_copy(task, data_path)
    if task.name not in LOCAL_READERS:
        raise ValueError(f"task: {task.name} has no reader of a user's copy.")
    return {"default": {split: LOCAL_READERS[task.name](folder, split) for split in splits}}


# What each local builder (``Task.builder``) gives: a Hub-layout folder to load like any
# dataset, or the task's data itself.
_BUILDERS: Mapping[str, Callable[[Task, tuple[str, ...]], str | TaskData]] = {
    "pipchem": _pipchem_folder,
    "shared": _shared_copy,
}
