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
    inspector.add_argument(
        "-m",
        "--model",
        help="also how this model's tokenizer cuts the task's strings, per class (CAS, "
        "formula, SMILES, text): tokens per string, unknown-token share, texts cut",
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

    encoder = None
    if args.model:
        from chemteb_eval.models import load_encoder

        encoder = load_encoder(args.model, device="cpu", log=lambda _: None)
    report = inspect_task(task, source, encoder)
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
    lines += _token_lines(report)
    same = quality["same_molecule"]
    lines.append(
        f"molecules written in more than one way: {same:,}"
        if isinstance(same, int)
        else f"molecules written in more than one way: {same}"
    )
    return lines


def _token_lines(report: dict[str, Any]) -> list[str]:
    found = report.get("tokenization")
    if found is None:
        return []
    if not isinstance(found, dict):
        return [f"tokenization by {shown(report['model'])}: {found}"]
    head = f"{'class':<12} {'strings':>8} {'tokens':>7} {'p95':>6} {'unk':>6} {'cut':>6}"
    lines = ["", f"tokenization by {shown(report['model'])} (each string alone):", head]
    rows = [(k, v) for k, v in found.items()]
    rows += [
        (f"  {k} in text", v) for k, v in found.get("text", {}).get("entities_in_text", {}).items()
    ]
    for name, stats in rows:
        if not stats.get("strings"):
            lines.append(f"{name:<12} {0:>8}")
            continue
        lines.append(
            f"{name:<12} {stats['strings']:>8,} {stats['mean_tokens']:>7.1f} "
            f"{stats['p95_tokens']:>6.0f} {stats['unk_share'] or 0:>6.1%} {stats['cut_share']:>6.1%}"
        )
    return lines
