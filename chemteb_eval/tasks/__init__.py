"""Task and benchmark records (the registry). Imports nothing heavy."""

from .kinds import CHEMTEB_TYPES, KINDS, TASK_TYPES, TaskKind, TaskType, kind
from .records import Aggregation, Benchmark, Task
from .registry import (
    BENCHMARKS,
    COLLECTIONS,
    benchmark_spelling,
    benchmark_tasks,
    eval_splits,
    get_benchmark,
    get_task,
    list_tasks,
    main_score,
)

__all__ = [
    "BENCHMARKS",
    "CHEMTEB_TYPES",
    "COLLECTIONS",
    "KINDS",
    "TASK_TYPES",
    "Aggregation",
    "Benchmark",
    "Task",
    "TaskKind",
    "TaskType",
    "benchmark_spelling",
    "benchmark_tasks",
    "eval_splits",
    "get_benchmark",
    "get_task",
    "kind",
    "list_tasks",
    "main_score",
]
