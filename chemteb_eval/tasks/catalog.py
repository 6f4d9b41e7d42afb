"""The tasks a command knows, as a value: the registered ones plus a user's own.

A user's tasks come from task files (``chemteb run --task-file``) or from the declarations
recorded beside results (``rank``, ``compare``, the Space, ``push-results``). They are gathered
into a ``TaskCatalog`` that the command passes on; nothing is registered in module state, so
two scans of two folders in one process never see each other's tasks (as lm-eval's
``TaskManager(include_path=...)`` and lighteval's ``Registry(custom_tasks=...)``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .records import Benchmark, Task
from .registry import (
    BENCHMARKS,
    CUSTOM,
    CUSTOM_BENCHMARK,
    benchmark_tasks,
    check_custom_name,
    custom_benchmark,
    get_benchmark,
    get_task,
    list_tasks,
)

__all__ = ["BUILTIN", "TaskCatalog"]


@dataclass(frozen=True)
class TaskCatalog:
    """The registered tasks and benchmarks, plus ``custom``: a user's own tasks (each in the
    ``custom`` collection, under a name no registered task has, one record a name).

    Raises:
        ValueError: a task not in the ``custom`` collection, a registered task's name, or a
            name given twice.
    """

    custom: tuple[Task, ...] = ()

    def __post_init__(self) -> None:
        seen: dict[str, Task] = {}
        for task in self.custom:
            if task.collection != CUSTOM:
                raise ValueError(f"task: {task.name} is not a custom task (collection {CUSTOM!r}).")
            check_custom_name(task.name)
            if task.name.casefold() in seen:
                raise ValueError(
                    f"task: {task.name!r} is given twice (as {seen[task.name.casefold()].name!r}); "
                    "one name, one task."
                )
            seen[task.name.casefold()] = task

    @classmethod
    def with_tasks(cls, tasks: Iterable[Task]) -> TaskCatalog:
        """The registered tasks and ``tasks``, sorted by name (so no order decides anything)."""
        return cls(tuple(sorted(tasks, key=lambda t: t.name)))

    def list_tasks(self, collection: str | None = None) -> list[Task]:
        """Every task, or one collection's (``custom``: the user's own)."""
        if collection == CUSTOM:
            return list(self.custom)
        return [*list_tasks(collection), *(self.custom if collection is None else ())]

    def get_task(self, name: str, collection: str | None = None) -> Task:
        """A task by name: a user's own, else the registry's (``get_task``)."""
        if collection in (None, CUSTOM):
            for task in self.custom:
                if task.name == name:
                    return task
        if collection == CUSTOM:
            known = ", ".join(t.name for t in self.custom) or "none"
            raise ValueError(f"task: unknown task {name!r} among your own ({known}).")
        return get_task(name, collection)

    def custom_benchmark(self) -> Benchmark | None:
        """The user's own tasks as the ``Custom`` benchmark, or ``None`` without any."""
        return custom_benchmark(self.custom)

    def get_benchmark(self, name: str) -> Benchmark:
        """A benchmark by name; ``Custom`` is this catalog's own tasks."""
        if name == CUSTOM_BENCHMARK and self.custom:
            custom = self.custom_benchmark()
            assert custom is not None
            return custom
        return get_benchmark(name)

    def known_benchmarks(self) -> list[Benchmark]:
        """Every registered benchmark, and ``Custom`` when the catalog holds a user's tasks."""
        custom = self.custom_benchmark()
        return [*BENCHMARKS.values(), *([custom] if custom else [])]

    def benchmark_tasks(self, benchmark: Benchmark | str) -> list[Task]:
        """A benchmark's task records, in its order."""
        bench = self.get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
        return benchmark_tasks(bench)


#: The registered tasks alone.
BUILTIN = TaskCatalog()
