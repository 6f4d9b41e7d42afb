"""Task and benchmark records (the registry). Imports nothing heavy."""

from .records import TASK_TYPES, Aggregation, Benchmark, Task, TaskType
from .registry import (
    BENCHMARKS,
    COLLECTIONS,
    benchmark_tasks,
    eval_splits,
    get_benchmark,
    get_task,
    list_tasks,
    main_score,
)

__all__ = [
    "BENCHMARKS",
    "COLLECTIONS",
    "TASK_TYPES",
    "Aggregation",
    "Benchmark",
    "Task",
    "TaskType",
    "benchmark_tasks",
    "eval_splits",
    "get_benchmark",
    "get_task",
    "list_tasks",
    "main_score",
]
