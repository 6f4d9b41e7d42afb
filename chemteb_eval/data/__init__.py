"""The data room's front door: load a task's data, typed per task type.

``load_task(task)`` calls ``datasets.load_dataset(hf_id, config, revision=pinned)`` (or reads a
locally built dataset) and returns ``{subset: {split: data}}`` with one data class per task type
(``chemteb_eval.data.types``). Importing this package imports no ``datasets`` yet.
"""

from chemteb_eval._env import cache_root

from .loader import load_task, stratified_subsample
from .types import DATA_CLASSES, SplitData, TaskData

__all__ = [
    "DATA_CLASSES",
    "SplitData",
    "TaskData",
    "cache_root",
    "load_task",
    "stratified_subsample",
]
