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
    inspector.add_argument(
        "-b",
        "--benchmark",
        help="the benchmark whose declaration of TASK to inspect, for a task that several "
        "collections hold at other revisions (ChemNQRetrieval: ChemTEB's and MTEB's)",
    )
    inspector.add_argument("--json", action="store_true", help="the report as JSON")
    # Ctrl-C's line: inspect writes nothing, so there is nothing to keep or resume
    inspector.set_defaults(func=_cmd_inspect, writes=False)


def _task(args: argparse.Namespace) -> tuple[Any, str | None]:
    """The task to inspect and its data's folder (a task file's)."""
    if bool(args.task) == bool(args.task_file):
        raise ValueError("inspect: name one task, or one --task-file (not both).")
    if args.task_file and args.benchmark:
        raise ValueError(
            "inspect: -b names the benchmark that declares a registered task; a task file "
            "declares its own task: drop -b."
        )
    if args.task_file:
        from chemteb_eval.tasks.custom import read_task_file

        declared = read_task_file(args.task_file)
        return declared.to_task(), str(declared.source) if declared.source else None
    from chemteb_eval import tasks

    holders = [b.name for b in tasks.BENCHMARKS.values() if args.task in b.tasks]
    if args.benchmark:
        bench = tasks.get_benchmark(args.benchmark)
        if holders and args.task not in bench.tasks:
            raise ValueError(
                f"inspect: {args.task!r} is not a task of {bench.name}; "
                f"{', '.join(holders)} declare it: pass -b {holders[0]!r}."
            )
        return tasks.get_task(args.task, bench.collection), None
    try:
        return tasks.get_task(args.task), None
    except ValueError as exc:
        if "several collections" not in str(exc):
            raise
        raise ValueError(
            f"inspect: {args.task!r} is declared by several benchmarks at other revisions "
            f"({', '.join(holders)}): name one with -b, e.g. -b {holders[0]!r}."
        ) from None


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
        # a retrieval corpus is shared by its splits and queries, subsets by each other
        why = "" if pair in quality["leaks"] else " (not a fault: a corpus, or two subsets)"
        lines.append(f"texts in both {shown(pair.replace('&', ' and '))}: {n:,}{why}")
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
    words = any(isinstance(v, dict) and "oov_share" in v for v in found.values())
    if words:  # a word model: the share of its words the vectors do not hold
        head = f"{'class':<12} {'strings':>8} {'OOV words':>10}"
        lines = ["", f"words of {shown(report['model'])} (out of vocabulary):", head]
    else:
        head = f"{'class':<12} {'strings':>8} {'tokens':>7} {'p95':>6} {'unk':>6} {'cut':>6}"
        lines = ["", f"tokenization by {shown(report['model'])} (each string alone):", head]
    inside = (
        found.get("text", {}).get("entities_in_text", {})
        if isinstance(found.get("text"), dict)
        else {}
    )
    rows = [*found.items(), *((f"  {k} in text", v) for k, v in inside.items())]
    for name, stats in rows:
        lines.append(_token_line(name, stats))
    return lines


def _token_line(name: str, stats: Any) -> str:
    """One class's line: its figures, a word model's OOV share, or what it says instead (a
    class RDKit decides, without RDKit)."""
    if not isinstance(stats, dict):
        return f"{name:<12} {stats}"
    if not stats.get("strings"):
        return f"{name:<12} {0:>8}"
    if "oov_share" in stats:
        oov = stats["oov_share"]
        return f"{name:<12} {stats['strings']:>8,} {'-' if oov is None else f'{oov:.1%}':>10}"
    return (
        f"{name:<12} {stats['strings']:>8,} {stats['mean_tokens']:>7.1f} "
        f"{stats['p95_tokens']:>6.0f} {stats['unk_share'] or 0:>6.1%} {stats['cut_share']:>6.1%}"
    )
