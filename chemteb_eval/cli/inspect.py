"""``chemteb inspect``: a task's data quality (``data.quality``) printed, or as JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chemteb_eval.results.markup import shown

__all__ = ["add_inspect"]

Subparsers = Any  # argparse's _SubParsersAction


def add_inspect(sub: Subparsers) -> None:
    inspector = sub.add_parser(
        "inspect",
        help="a task's data quality: duplicates, conflicting labels, texts shared between "
        "splits, one molecule written two ways (docs/inspect.md)",
    )
    inspector.add_argument("task", nargs="?", help="a registered or PipChem task")
    inspector.add_argument(
        "--task-file", metavar="FILE", help="your own task, declared in a YAML or JSON file"
    )
    inspector.add_argument("--json", action="store_true", help="the report as JSON")
    inspector.set_defaults(func=_cmd_inspect)


def _task(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The task to inspect and its data's folder (a task file's)."""
    if bool(args.task) == bool(args.task_file):
        raise ValueError("inspect: name one task, or one --task-file (not both).")
    if args.task_file:
        from chemteb_eval.tasks.custom import read_task_file

        declared = read_task_file(args.task_file)
        return declared.to_task(), str(declared.source) if declared.source else None
    from chemteb_eval import tasks

    return tasks.get_task(args.task), None


def _cmd_inspect(args: argparse.Namespace) -> int:
    task, source = _task(args)
    from chemteb_eval.runner.inspect import inspect_task

    report = inspect_task(task, source)
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    for line in _lines(report):
        print(line)
    return 0


def _lines(report: dict[str, Any]) -> list[str]:
    quality = report["data_quality"]
    lines = [f"{shown(report['task'])} ({report['type']}): data quality", ""]
    width = max([5, *(len(shown(s)) for s in quality["splits"])])
    lines.append(f"{'split':<{width}} {'rows':>8} {'duplicates':>10} {'conflicting':>11}")
    for split, counts in quality["splits"].items():
        lines.append(
            f"{shown(split):<{width}} {counts['rows']:>8,} {counts['duplicate_texts']:>10,} "
            f"{counts['conflicting_labels']:>11,}"
        )
        if "judgements_on_duplicates" in counts:
            lines.append(
                f"  judgements on a duplicate document: {counts['judgements_on_duplicates']:,}"
            )
    for pair, n in quality["overlap"].items():
        lines.append(f"texts in both {shown(pair.replace('&', ' and '))}: {n:,}")
    same = quality["same_molecule"]
    lines.append(
        f"molecules written in more than one way: {same:,}"
        if isinstance(same, int)
        else f"molecules written in more than one way: {same}"
    )
    return lines
