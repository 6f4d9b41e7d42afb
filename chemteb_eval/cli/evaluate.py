"""``chemteb metrics``, ``list``, ``export``, ``compare`` and ``compare-domains``: each
command's arguments beside its handler (``run`` and ``rank`` have modules of their own)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from chemteb_eval.metric_docs import METRICS
from chemteb_eval.results.markup import shown
from chemteb_eval.tasks import BENCHMARKS, COLLECTIONS, benchmark_spelling

from .rank import rank_benchmark

__all__ = [
    "add_compare",
    "add_compare_domains",
    "add_export",
    "add_list",
    "add_metrics",
    "shown",
]

Subparsers = Any  # argparse's _SubParsersAction
MIN_RESAMPLES = 100  # fewer leave a 2.5% tail of under 3 draws: an interval of noise


def add_metrics(sub: Subparsers) -> None:
    metrics = sub.add_parser(
        "metrics", help=f"list the {len(METRICS)} metric modules and their protocol defaults"
    )
    metrics.set_defaults(func=_cmd_metrics)


def _cmd_metrics(_: argparse.Namespace) -> int:
    from chemteb_eval.metric_docs import protocol_defaults

    print(f"{'metric':<21} {'evaluate.load(...)':<30} protocol defaults")
    for metric in METRICS:
        defaults = protocol_defaults(metric.load_function())
        shown = ", ".join(f"{k}={v!r}" for k, v in defaults.items())
        print(f"{metric.name:<21} {'chemteb/' + metric.name:<30} {shown}")
    return 0


def add_list(sub: Subparsers) -> None:
    lister = sub.add_parser("list", help="list benchmarks and tasks (Hub ids, pinned revisions)")
    lister.add_argument(
        "--benchmark",
        "-b",
        type=benchmark_spelling,
        help="only this benchmark's tasks, with its main scores and splits",
    )
    lister.add_argument("--collection", choices=list(COLLECTIONS), help="only one collection")
    lister.add_argument("--json", action="store_true", help="print JSON records")
    lister.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    import json

    from chemteb_eval import tasks

    if args.benchmark:
        records = tasks.benchmark_tasks(args.benchmark)
        bench = tasks.get_benchmark(args.benchmark)
    else:
        records, bench = tasks.list_tasks(args.collection), None
    if args.json:
        rows = []
        for t in records:
            row = t.to_dict()
            if bench is not None:
                row["main_score"] = tasks.main_score(bench, t)
                row["eval_splits"] = list(tasks.eval_splits(bench, t))
            rows.append(row)
        print(json.dumps(rows, indent=1))
        return 0
    if bench is None:
        print("Benchmarks: " + ", ".join(tasks.BENCHMARKS) + "  (chemteb list --benchmark NAME)\n")
    else:
        print(
            f"{bench.name}: {len(records)} tasks, ranked by {bench.aggregation.kind}. {bench.description}\n"
        )
    table: list[tuple[str, ...]] = [
        (
            t.name,
            str(t.type),
            t.collection,
            tasks.main_score(bench, t) if bench else t.main_score,
            ",".join(tasks.eval_splits(bench, t) if bench else t.eval_splits),
            (t.revision or "local")[:8],
            t.source or "",
        )
        for t in records
    ]
    heads = ("task", "type", "collection", "main score", "splits", "revision", "source")
    # each column as wide as its longest cell: a long task name never pushes a row out of line
    widths = [max([len(h), *(len(r[i]) for r in table)]) for i, h in enumerate(heads[:-1])]
    header = " ".join(f"{h:<{w}}" for h, w in zip(heads, widths, strict=False)) + " source"
    print(header)
    print("-" * len(header))
    for r in table:
        print(" ".join(f"{c:<{w}}" for c, w in zip(r, widths, strict=False)) + f" {r[-1]}")
    return 0


def add_export(sub: Subparsers) -> None:
    exporter = sub.add_parser(
        "export",
        help="write results as Every Eval Ever records (eval.schema.json 0.3.0), with each "
        "task's bootstrap interval (docs/costs.md)",
    )
    exporter.add_argument(
        "results", nargs="+", help="folders holding <model>/<revision>/<Task>.json"
    )
    exporter.add_argument(
        "--output-dir",
        required=True,
        help="where the records go: an EEE datastore's data/ folder (the sidecars' paths are "
        "written relative to it, as data/<benchmark>/<developer>/<model>/<uuid>_samples.jsonl)",
    )
    exporter.add_argument(
        "-b",
        "--benchmark",
        type=benchmark_spelling,
        help="the benchmark whose tasks and protocol the records hold (default: the one the "
        "results cover best)",
    )
    exporter.add_argument(
        "--organization", default="unknown", help="who ran the evaluation (EEE's source org)"
    )
    exporter.add_argument(
        "--relationship",
        default="third_party",
        choices=("first_party", "third_party", "collaborative", "other"),
        help="the evaluator's relationship to the model (default: third_party)",
    )
    exporter.add_argument("--model-table", help="as for rank")
    exporter.set_defaults(func=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.eee import REFUSED, write_eee
    from chemteb_eval.results.scan import catalog_of, scan_results

    scanned = scan_results(args.results, model_table=args.model_table)
    bench, chosen = rank_benchmark(args.results, args.benchmark, scanned, catalog_of(scanned))
    if chosen:
        print(chosen)
    models = read_results(scanned, bench)
    written = write_eee(
        models,
        bench,
        Path(args.output_dir),
        organization=args.organization,
        relationship=args.relationship,
    )
    for path in dict.fromkeys(written):
        print(shown(path))
    # files, not writes: the same results in two folders given make one record, written twice
    records = len({p for p in written if p.suffix == ".json"})
    sidecars = len(set(written)) - records
    renamed = sum(REFUSED in n for m in models for n in m.notes)
    submit = (
        f"rename the {renamed} folder(s) the notes below name, then submit it"
        if renamed
        else "submit it"
    )
    print(
        f"{records} Every Eval Ever record(s) on {bench.name} in {shown(args.output_dir)}, "
        f"{sidecars} with its per-item sidecar (<uuid>_samples.jsonl); the folder is a "
        f"datastore's data/: {submit} to evaleval/EEE_datastore (a pull request), or validate "
        "with `python -m every_eval_ever validate`; `chemteb rank` reads it back."
    )
    for line in dict.fromkeys(s for m in models for s in m.skipped):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    for line in dict.fromkeys(n for m in models for n in m.notes):
        print(f"[note] {shown(line)}", file=sys.stderr)
    return 0


def add_compare_domains(sub: Subparsers) -> None:
    comp = sub.add_parser(
        "compare-domains",
        help="ChemTEB against general-domain MTEB per task type: does the MTEB rank carry over?",
    )
    comp.add_argument("results", nargs="+", help="ChemTEB result folders (as for chemteb rank)")
    comp.add_argument("-b", "--benchmark", default="ChemTEB(paper)", type=benchmark_spelling)
    comp.add_argument("--model-table", help="CSV with results_dir,model_id (as for rank)")
    comp.add_argument(
        "--mteb-scores",
        help="MTEB(eng, v1) scores CSV: model_id, task, task_type, split, main_score (default: "
        "the developers' reference copy, where there is one)",
    )
    comp.add_argument(
        "--mteb-results",
        action="append",
        metavar="DIR",
        help="your models' MTEB results folder(s) (MTEB's layout), added to the CSV's models",
    )
    comp.add_argument(
        "--min-mteb-coverage",
        type=float,
        default=1.0,
        help="share of a type's MTEB tasks a model needs to be plotted (default 1: all)",
    )
    comp.add_argument("--json", action="store_true")
    comp.set_defaults(func=_cmd_compare_domains)


def _cmd_compare_domains(args: argparse.Namespace) -> int:
    import json

    from chemteb_eval import tasks
    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.domains import compare_domains
    from chemteb_eval.results.mteb_scores import MTEB_SCORES_FILE, resolve_mteb_scores

    if not 0 < args.min_mteb_coverage <= 1:  # before any file is read
        raise ValueError(f"--min-mteb-coverage: must be in (0, 1], got {args.min_mteb_coverage}.")
    found = resolve_mteb_scores(args.results, args.mteb_scores, args.mteb_results or ())
    if found.scores is None:
        named = f"{found.path} is not readable ({found.problem})" if found.problem else "not given"
        raise ChemtebError(
            f"--mteb-scores: {named}; pass the MTEB(eng, v1) scores CSV (model_id, task, "
            f"task_type, split, main_score; chemteb-eval does not ship one), or put it in or "
            f"beside the results folder as {MTEB_SCORES_FILE}."
        )
    mteb = found.scores
    bench = tasks.get_benchmark(args.benchmark)
    models = read_results(args.results, bench, model_table=args.model_table)
    out = compare_domains(models, bench, mteb, min_mteb_coverage=args.min_mteb_coverage)
    if args.json:
        print(json.dumps([c.to_dict() for c in out], indent=1))
        return 0
    for c in out:
        rho = "-" if c.rho is None else f"{c.rho:+.3f}"
        ci = "" if c.interval is None else f" (95% {c.interval[0]:+.2f} to {c.interval[1]:+.2f})"
        gaps = [chem - general for general, chem in c.points.values()]
        higher = sum(g > 0 for g in gaps)
        print(
            f"\n{c.kind} ({c.metric} on both axes; {c.n_mteb_tasks} MTEB, {c.n_chemteb_tasks} "
            f"ChemTEB tasks): {len(c.points)} models, Spearman {rho}{ci}; ChemTEB higher for "
            f"{higher}, mean ChemTEB - MTEB {sum(gaps) / len(gaps) if gaps else 0:+.3f}"
        )
        changes = c.rank_changes[:3]
        width = max([44, *(len(shown(model)) for model, _, _ in changes)])
        for model, general, chem in changes:
            print(f"  {shown(model):<{width}} MTEB rank {general:>2} -> ChemTEB rank {chem:>2}")
        for model, why in sorted(c.excluded.items()):
            print(f"  [not plotted] {shown(model)}: {why}")
    for line in dict.fromkeys([*mteb.skipped, *(s for m in models for s in m.skipped)]):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    return 0


def add_compare(sub: Subparsers) -> None:
    comparer = sub.add_parser(
        "compare", help="two models: per-task differences with intervals, and a verdict"
    )
    comparer.add_argument("a", help="model A's results folder (org__model)")
    comparer.add_argument("b", help="model B's results folder")
    comparer.add_argument(
        "-b",
        "--benchmark",
        default="PipChem",
        type=benchmark_spelling,
        help=f"{', '.join(BENCHMARKS)}, or Custom",
    )
    comparer.add_argument("--resamples", type=int, default=1000)
    comparer.add_argument("--seed", type=int, default=0)
    comparer.set_defaults(func=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    from chemteb_eval.results.compare import compare_models, format_p, load_models

    if args.resamples < MIN_RESAMPLES:  # a 95% percentile interval needs both tails populated
        raise ValueError(f"--resamples: at least {MIN_RESAMPLES}, got {args.resamples}.")
    if args.seed < 0:
        raise ValueError(f"--seed: a non-negative integer, got {args.seed}.")
    # the folders first: their recorded task files make Custom's tasks known
    (a, b), bench = load_models([args.a, args.b], args.benchmark)
    if Path(args.a).resolve() == Path(args.b).resolve():
        print(
            f"compare: A and B are the same folder ({args.a}): every difference is 0 and no "
            "task can separate them; pass two models' folders.",
            file=sys.stderr,
        )
    # the bootstraps take seconds per task: say what is running (stderr: stdout is the table)
    print(
        f"comparing on {bench.name}: per-task paired bootstraps ({args.resamples:,} resamples "
        "each, from the runs' items files) and a sign-flip test over tasks...",
        file=sys.stderr,
    )
    result = compare_models(
        a, b, bench, resamples=args.resamples, seed=args.seed, progress=sys.stderr.isatty()
    )
    print(
        f"{bench.name}: A = {shown(result.model_a)}, B = {shown(result.model_b)} "
        "(A - B, 95% paired bootstrap)"
    )
    task_width = max([40, *(len(row.task) for row in result.tasks)])
    head = f"{'task':<{task_width}} {'A':>8} {'B':>8} {'A - B':>8} {'95% interval':>19} {'p':>6}"
    print(f"{head}\n{'-' * len(head)}")
    for row in result.tasks:
        if row.paired is None:
            tail = f"{'-':>19} {'-':>6}  {row.why_no_interval}"
        else:
            interval = f"[{row.paired.low:+.4f}, {row.paired.high:+.4f}]"
            tail = f"{interval:>19} {format_p(row.paired.p_value, args.resamples):>6}"
        print(
            f"{shown(row.task):<{task_width}} {row.a:>8.4f} {row.b:>8.4f} "
            f"{row.difference:>+8.4f} {tail}"
        )
    o = result.overall
    print(
        f"\nMean over {len(result.tasks)} tasks: A - B = {o.difference:+.4f} "
        f"[{o.low:+.4f}, {o.high:+.4f}] (tasks resampled). Verdict: {shown(result.verdict)}."
    )
    for line in result.left_out:
        print(f"[left out] {shown(line)}", file=sys.stderr)
    for line in dict.fromkeys([*a.skipped, *b.skipped]):  # incl. evidence left out, and why
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    for line in dict.fromkeys([*a.notes, *b.notes]):  # e.g. other library versions
        print(f"[note] {shown(line)}", file=sys.stderr)
    return 0
