"""``chemteb metrics``, ``list``, ``run`` and ``rank``: each command's arguments beside its handler."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemteb_eval.metric_docs import METRICS
from chemteb_eval.models import DEFAULT_BATCH_SIZE, DEFAULT_MODEL, model_help
from chemteb_eval.tasks import BENCHMARKS, COLLECTIONS, benchmark_spelling

Subparsers = Any  # argparse's _SubParsersAction
_RUNTIMES = ("auto", "torch", "onnx", "onnx-int8")
MIN_RESAMPLES = 100  # fewer leave a 2.5% tail of under 3 draws: an interval of noise
_DEFAULT_RUNTIME = "torch"
# scoring.compression.PRECISIONS, written out so that the help imports no numpy (tests check)
_PRECISIONS = ("float32", "float16", "bfloat16", "int8", "uint8", "int4", "uint4", "binary")

if TYPE_CHECKING:
    from chemteb_eval.results.ranking import RankedModel


def shown(text: object) -> str:
    """Untrusted text (a model name, a file path) as a terminal line shows it: control
    characters — an escape sequence recolouring the screen or setting the title, a newline
    breaking a table row — become "?"."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


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


def add_run(sub: Subparsers) -> None:
    runner = sub.add_parser(
        "run",
        help="evaluate a model (default: the bundled all-MiniLM-L6-v2 on the offline PipChem suite)",
    )
    runner.add_argument(
        "-m",
        "--model",
        default=DEFAULT_MODEL,
        # from the backend table (chemteb_eval.models.backends): every embedding backend
        help=f"{model_help('encoder')}. Default: {DEFAULT_MODEL}, bundled (offline)",
    )
    runner.add_argument("--api-base", help="API root for openai: models (default $OPENAI_BASE_URL)")
    runner.add_argument(
        "-b",
        "--benchmark",
        type=benchmark_spelling,
        help=f"{', '.join(BENCHMARKS)} (default PipChem)",
    )
    runner.add_argument(
        "-t",
        "--task",
        nargs="+",
        help="only these tasks (with -b: some of its tasks, scored by its protocol)",
    )
    runner.add_argument(
        "--task-file",
        nargs="+",
        metavar="FILE",
        help="your own tasks, each declared in a YAML or JSON file (or a folder of them): run "
        "alone, ranked apart as the Custom benchmark (docs/custom_tasks.md)",
    )
    runner.add_argument(
        "--output-dir", default="results", help="where result folders go (default: results)"
    )
    runner.add_argument(
        "--batch-size",
        type=int,
        default=DEFAULT_BATCH_SIZE,
        help=f"texts per model call (default: {DEFAULT_BATCH_SIZE})",
    )
    runner.add_argument(
        "--device", help="torch device, e.g. cpu or cuda:0 (default: a GPU if there is one)"
    )
    runner.add_argument(
        "--precision",
        "--dtype",
        dest="precision",
        default="float32",
        choices=["float32", "float16", "bfloat16"],
        help="the dtype the model computes in: float32 (default, exact), bfloat16 on a CPU with "
        "native bfloat16 (AVX512-BF16/AMX) or CUDA, float16 on CUDA; its vectors are cached and "
        "ranked apart (MTEB's experiments/dtype_<dtype>/)",
    )
    runner.add_argument(
        "--backend",
        # models.spec.RUNTIMES and DEFAULT_RUNTIME, written out so that `chemteb list` does not
        # import numpy through chemteb_eval.models (tests/test_cli.py checks they agree)
        default=_DEFAULT_RUNTIME,
        choices=_RUNTIMES,
        help="how a plain model name runs: torch, onnx (ONNX Runtime, CPU), onnx-int8, or auto "
        f"(ONNX on a CPU float32 run, else torch); default {_DEFAULT_RUNTIME}",
    )
    runner.add_argument(
        "--overwrite", action="store_true", help="rerun tasks that already have results"
    )
    runner.add_argument(
        "--no-cache", action="store_true", help="do not read or write the embedding cache"
    )
    runner.add_argument(
        "--data-path",
        action="append",
        metavar="[TASK=]DIR",
        help="your copy of a restricted set (ClinicalSTS2018/2019, CoNLL2003NER, CHEMDNERNER); "
        "TASK= may be left out when the run has one such task; repeat for several "
        "(formats: `chemteb list --json` 'obtain')",
    )
    runner.add_argument(
        "--beta",
        type=float,
        help="F-beta's beta for the classification and NER probes (default: F1 only)",
    )
    runner.add_argument(
        "--pipchem-scale",
        choices=("full", "small"),
        help="the PipChem build to score on: full (default; the figures of docs/pipchem.md) or small (a "
        "quick check; other data, not comparable); the same as CHEMTEB_PIPCHEM_SCALE",
    )
    runner.add_argument(
        "--dims",
        metavar="D[,D...]",
        help="also score the model's vectors cut to these dimensions (Matryoshka, as "
        "sentence-transformers' truncate_dim), from the vectors the run has: no model call",
    )
    runner.add_argument(
        "--precisions",
        metavar="P[,P...]",
        help="also score its vectors in these precisions, as MTEB's CompressionWrapper: "
        f"{', '.join(_PRECISIONS)}; each dims x precisions variant is one more row "
        "(docs/costs.md)",
    )
    runner.add_argument("--quiet", action="store_true", help="no progress bars")
    runner.set_defaults(func=_cmd_run)


def _data_paths(values: list[str] | None, selected: list[Any] | None) -> dict[str, str]:
    """``--data-path [TASK=]DIR`` values as ``{task: DIR}``; a bare DIR is the one restricted
    task's among the run's ``-t`` tasks."""
    out: dict[str, str] = {}
    for value in values or []:
        name, sep, folder = value.partition("=")
        if not sep:
            local = [t.name for t in selected or [] if t.builder == "local"]
            if len(local) != 1:
                raise ValueError(
                    f"--data-path {value}: say which task it is for (--data-path TASK=DIR); "
                    f"the run's restricted tasks: {', '.join(local) or 'none (use -t)'}."
                )
            name, folder = local[0], value
        if name in out:
            raise ValueError(f"--data-path: {name} is given twice.")
        if not folder.strip():  # "TASK=" would read the current folder
            raise ValueError(f"--data-path {value}: no folder after '='; pass TASK=DIR.")
        out[name] = folder
    return out


def _custom_tasks(files: list[str]) -> tuple[list[Any], dict[str, str]]:
    """The tasks the task files declare (checked as a catalog's: names no registered task
    has, one task a name) and their sources."""
    from chemteb_eval.tasks.catalog import TaskCatalog
    from chemteb_eval.tasks.custom import read_task_file, task_files_in

    declared = [read_task_file(path) for path in task_files_in(files)]
    seen: dict[str, Any] = {}
    for one in declared:
        if one.name in seen:
            raise ValueError(
                f"--task-file: {one.path} and {seen[one.name].path} both declare {one.name!r}."
            )
        seen[one.name] = one
    records = list(TaskCatalog(tuple(one.to_task() for one in declared)).custom)
    paths = {one.name: str(one.source) for one in declared if one.source is not None}
    return records, paths


def _cmd_run(args: argparse.Namespace) -> int:
    from chemteb_eval import tasks

    if args.pipchem_scale:  # the one setting the PipChem builder reads, for this run
        os.environ["CHEMTEB_PIPCHEM_SCALE"] = args.pipchem_scale

    selected = None
    if args.task_file:
        if args.task or args.benchmark:
            raise ValueError(
                "--task-file: your tasks run alone (they rank apart, as the Custom benchmark); "
                "drop -t/-b, or run those in a second run into the same --output-dir."
            )
        selected, own_paths = _custom_tasks(args.task_file)
        paths = {**_data_paths(args.data_path, None), **own_paths}
    else:
        # a typo in -b or -t is refused here, in a second, before the runner's imports (numpy,
        # datasets, torch: 13 s on a loaded machine)
        bench = tasks.get_benchmark(args.benchmark) if args.benchmark else None
        if args.task:
            collection = bench.collection if bench else None
            selected = [tasks.get_task(name, collection) for name in args.task]
        paths = _data_paths(args.data_path, selected)
    from chemteb_eval.runner import run

    report = run(
        args.model,
        # -b with -t: those tasks, scored by the benchmark's protocol (its splits, main scores)
        benchmark=args.benchmark or (None if selected else "PipChem"),
        tasks=selected,
        output_dir=args.output_dir,
        batch_size=args.batch_size,
        device=args.device,
        precision=args.precision,
        api_base=args.api_base,
        backend=args.backend,
        overwrite=args.overwrite,
        use_cache=not args.no_cache,
        data_paths=paths,
        beta=args.beta,
        dims=args.dims,
        precisions=args.precisions,
        progress=not args.quiet,
    )
    _print_tasks(report)
    enc = report.encoding
    tokens = enc.get("tokens_per_second")
    speed = f"{enc['texts_per_second']:.0f} texts/s" + (
        f", {tokens:.0f} tokens/s" if tokens else ""
    )
    print(
        f"\n{int(enc['requested']):,} texts requested, {int(enc['unique']):,} unique, "
        f"{int(enc['cache_hits']):,} from the cache, {int(enc['encoded']):,} encoded "
        f"({speed}). {report.seconds:.1f} s in all. Results: {report.results_dir}"
    )
    failed = len(report.errors) + sum(len(v.errors) for v in report.variants.values())
    if report.variants:
        print(f"\nThe frontier (chemteb rank {args.output_dir} --frontier):")
        try:
            _print_frontier_of([args.output_dir], None if args.task_file else args.benchmark)
        except Exception as exc:  # a damaged folder beside ours: the run's results stand
            print(f"[warning] the frontier was not drawn: {shown(exc)}", file=sys.stderr)
    if failed:  # each failure was one [failed] line as it happened
        print(
            f"{failed} task(s) failed, each said above as it failed; a rerun retries them.",
            file=sys.stderr,
        )
    return 1 if failed else 0


def _print_tasks(report: Any) -> None:
    """The run's task table: status, main score and the largest share of one side's texts
    the model cut; then a note for each task where that share is over a tenth."""
    from chemteb_eval.results.frontier import cut_cell, truncation_note, truncation_share

    # skipped tasks show the score their stored file holds; failed ones said why as they failed
    width = max([44, *map(len, report.statuses)])
    shares = {n: truncation_share(report.truncation.get(n)) for n in report.statuses}
    # the column where it says something: a share measured for some task
    measured = any(isinstance(share, tuple) for share in shares.values())
    print(f"\n{'task':<{width}} {'status':<8} main score" + (f" {'cut':>7}" if measured else ""))
    for name, status in report.statuses.items():
        score = report.main_scores.get(name)
        share = shares[name]
        number = "" if score is None else f"{score:.4f}"
        cut = f" {cut_cell(share[0] if isinstance(share, tuple) else share):>7}"
        print(f"{name:<{width}} {status:<8} {number:>10}{cut if measured else ''}".rstrip())
    if not measured and any(share == "unknown" for share in shares.values()):
        print("\nTexts cut at the model's max tokens: unknown (its backend cannot count tokens).")
    for name in report.statuses:
        note = truncation_note(name, report.truncation.get(name))
        if note:
            print(f"[note] {shown(note)}")


def _print_frontier_of(folders: list[str], benchmark: str | None) -> None:
    """``rank FOLDERS --frontier`` (with ``-b`` when given), for the run's summary."""
    args = argparse.Namespace(
        results=folders,
        benchmark=benchmark,
        model_table=None,
        json=False,
        ci=False,
        correlations=None,
        frontier=True,
    )
    _cmd_rank(args)


def add_rank(sub: Subparsers) -> None:
    ranker = sub.add_parser("rank", help="rank models from result folders (ours or MTEB's layout)")
    ranker.add_argument("results", nargs="+", help="folders holding <model>/<revision>/<Task>.json")
    ranker.add_argument(
        "-b",
        "--benchmark",
        type=benchmark_spelling,
        help=f"{', '.join(BENCHMARKS)}, or Custom (the tasks of your task files, recorded "
        "beside their results); default: the one the results cover best, said in a line",
    )
    ranker.add_argument(
        "--model-table",
        help="CSV with results_dir,model_id columns (default: paper_models.csv beside a folder)",
    )
    ranker.add_argument("--json", action="store_true")
    ranker.add_argument(
        "--ci",
        action="store_true",
        help="add 95%% rank intervals (tasks resampled, 1,000 times) and the group tied with #1",
    )
    ranker.add_argument(
        "--frontier",
        action="store_true",
        help="quality against cost: per model and variant (--dims/--precisions runs) its mean "
        "with a 95%% interval, bytes per vector, index size, texts/s, texts cut, and the Pareto "
        "sets (docs/costs.md)",
    )
    ranker.add_argument(
        "--correlations",
        metavar="DIR",
        help="also write the task x task and model x model Spearman and Pearson matrices as CSV",
    )
    ranker.set_defaults(func=_cmd_rank)


def add_export(sub: Subparsers) -> None:
    exporter = sub.add_parser(
        "export",
        help="write results as Every Eval Ever records (eval.schema.json 0.2.2), with each "
        "task's bootstrap interval (docs/costs.md)",
    )
    exporter.add_argument(
        "results", nargs="+", help="folders holding <model>/<revision>/<Task>.json"
    )
    exporter.add_argument("--output-dir", required=True, help="where the records go")
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
    from chemteb_eval.results.eee import write_eee
    from chemteb_eval.results.scan import catalog_of, scan_results

    scanned = scan_results(args.results, model_table=args.model_table)
    bench, chosen = _rank_benchmark(args, scanned, catalog_of(scanned))
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
    for path in written:
        print(shown(path))
    print(
        f"{len(written)} Every Eval Ever record(s) on {bench.name} in {shown(args.output_dir)}; "
        "submit them to evaleval/EEE_datastore (a pull request), or validate with "
        "`python -m every_eval_ever validate`."
    )
    for line in dict.fromkeys(s for m in models for s in m.skipped):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
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
    return 0


def _cmd_rank(args: argparse.Namespace) -> int:
    import json

    from chemteb_eval.results.board import benchmark_coverage, read_results
    from chemteb_eval.results.ranking import rank_models, rank_uncertainty
    from chemteb_eval.results.scan import catalog_of, scan_results

    scanned = scan_results(args.results, model_table=args.model_table)
    catalog = catalog_of(scanned)  # the registered tasks and the ones these results recorded
    bench, chosen = _rank_benchmark(args, scanned, catalog)
    models = read_results(scanned, bench)
    if getattr(args, "frontier", False):
        return _frontier(args, models, bench, chosen)
    rows = rank_models(models, bench)
    intervals = rank_uncertainty(models, bench) if args.ci else {}
    skipped = [s for m in models for s in m.skipped]  # after the intervals: evidence notices
    by_mean = bench.aggregation.kind == "mean"
    cut = _cut_shares(models, bench)
    if args.json:
        if chosen:  # stdout holds the JSON alone
            print(chosen, file=sys.stderr)
        print(json.dumps(_rank_json(rows, by_mean, intervals if args.ci else None, cut), indent=1))
    else:
        if chosen:
            print(chosen)
        _print_ranking(bench, rows, intervals, cut)
    if args.ci and not args.json:
        tied = [m for m, ci in intervals.items() if ci["tied_with_top"]]
        print(
            f"\nNot separable from #1 (ranked first in >= 2.5% of 1,000 task resamples): "
            f"{', '.join(map(shown, tied)) or '-'}. Rank intervals: tasks resampled within their type "
            "(docs/uncertainty.md)."
        )
    for line in dict.fromkeys(skipped):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    for line in dict.fromkeys(n for m in models for n in m.notes):
        print(f"[note] {shown(line)}", file=sys.stderr)
    if args.benchmark is not None and models and not any(m.scores for m in models):
        best = benchmark_coverage(scanned, catalog)[0]
        if best.scores:  # -b named a benchmark these results have nothing of
            print(
                f"[hint] no model here has a score on {bench.name}'s tasks; these results cover "
                f"{best.benchmark.name} best ({best.describe()}): -b '{best.benchmark.name}'",
                file=sys.stderr,
            )
    custom = catalog.custom_benchmark()
    if custom is not None and bench.name != custom.name:  # never mixed in: said, and how
        print(
            f"[note] {len(custom.tasks)} task(s) of your own (task files) rank apart: "
            f"-b {custom.name}",
            file=sys.stderr,
        )
    if args.correlations:  # after the ranking is printed: a bad folder must not cost it
        _write_correlations(models, bench, args, args.correlations)
    return 0


def _frontier(args: argparse.Namespace, models: list[Any], bench: Any, chosen: str) -> int:
    """``rank --frontier``: one row per model and variant, best mean first."""
    import json

    from chemteb_eval.results.frontier import frontier
    from chemteb_eval.results.ranking import rank_uncertainty

    rows = frontier(models, bench, rank_uncertainty(models, bench))
    if args.json:
        if chosen:
            print(chosen, file=sys.stderr)
        print(json.dumps([r.to_dict() for r in rows], indent=1))
    else:
        if chosen:
            print(chosen)
        _print_frontier(bench, rows)
    for line in dict.fromkeys(s for m in models for s in m.skipped):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    return 0


def _print_frontier(bench: Any, rows: list[Any]) -> None:
    from chemteb_eval import tasks
    from chemteb_eval.results.frontier import cut_cell

    n = len(tasks.benchmark_tasks(bench))
    names = [shown(r.model) for r in rows]
    width = max([5, *map(len, names)])
    head = (
        f"   {'model':<{width}} {'mean':>7} {'95% interval':>13} {'rank':>5} "
        f"{'bytes/vec':>9} {'index':>9} {'texts/s':>8} {'cut':>7}"
    )
    print(
        f"{bench.name}: quality (mean main score over its {n} tasks; interval: the items of "
        "each task whose score is a mean of items resampled) against cost. Pareto: S = no row "
        f"is as good and smaller, F = none as good and faster.\n{head}\n{'-' * len(head)}"
    )
    for r, name in zip(rows, names, strict=True):
        mark = ("S" if r.pareto_size else " ") + ("F" if r.pareto_speed else " ") + " "
        mean = f"{r.score:.4f}" if r.score is not None else "-"
        ci = f"{r.interval[0]:.4f}-{r.interval[1]:.4f}" if r.interval else "-"
        rank = f"{r.rank_interval[0]}-{r.rank_interval[1]}" if r.rank_interval else "-"
        size = f"{r.bytes_per_vector:,}" if r.bytes_per_vector else "-"
        index = _bytes(r.index_bytes) if r.index_bytes is not None else "-"
        speed = f"{r.texts_per_second:,.0f}" if r.texts_per_second else "-"
        cut = cut_cell(r.truncated) or "-"
        print(
            f"{mark}{name:<{width}} {mean:>7} {ci:>13} {rank:>5} {size:>9} {index:>9} "
            f"{speed:>8} {cut:>7}"
        )
    held: dict[tuple[str, ...], list[str]] = {}
    for r, name in zip(rows, names, strict=True):
        if r.score is not None and r.fixed_tasks:
            held.setdefault(r.fixed_tasks, []).append(name)
    for fixed, who in held.items():
        whom = "every row" if len(who) == len(rows) else ", ".join(who)
        print(
            f"[note] the interval of {whom} holds {', '.join(map(shown, fixed))} at its score "
            "(not a mean of items, or no items recorded)."
        )


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _rank_benchmark(args: argparse.Namespace, scanned: list[Any], catalog: Any) -> tuple[Any, str]:
    """The benchmark to rank on (``-b``, else the one the results cover best) and the line
    that says why it was chosen ("" with ``-b``); a notice when there is nothing to rank."""
    from chemteb_eval.results.board import choose_benchmark

    if not scanned:  # the newcomer's first try, before any run
        where = ", ".join(map(str, args.results))
        print(
            f"[notice] no result files under {where}: `chemteb run` writes them (to results/).",
            file=sys.stderr,
        )
    if args.benchmark is not None:
        return catalog.get_benchmark(args.benchmark), ""
    bench, why = choose_benchmark(scanned, catalog)
    if not scanned:
        return bench, ""
    return bench, f"Ranked on {bench.name}, {why}. Another: -b NAME (`chemteb list` names them)."


def _rank_json(
    rows: list[RankedModel],
    by_mean: bool,
    intervals: dict[str, Any] | None = None,
    cut: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``--json``'s rows: "mean" (over tasks) where it orders the ranking (RRF benchmarks rank
    by "rrf"); an incomplete model's mean over the tasks it has is no benchmark mean: null, as
    the table shows it; with ``--ci`` each row's "rank_interval"; "cut", the largest share of
    one side's texts the model cut (null: not measured)."""
    out = []
    for r in rows:
        row = {k: (None if k == "mean" and not r.complete else v) for k, v in r.to_dict().items()}
        if intervals is not None:
            row["rank_interval"] = intervals.get(r.model)
        if cut is not None:  # the largest share of one side's texts cut ("unknown": an API)
            row["cut"] = cut.get(r.model)
        out.append({k: v for k, v in row.items() if by_mean or k != "mean"})
    return out


def _cut_shares(models: list[Any], bench: Any) -> dict[str, float | str | None]:
    """Each model's largest share of one side's texts cut over the benchmark's tasks."""
    from chemteb_eval import tasks
    from chemteb_eval.results.frontier import truncated_share

    names = [t.name for t in tasks.benchmark_tasks(bench)]
    return {m.model: truncated_share(m, names) for m in models}


def _print_ranking(
    bench: Any,
    rows: list[RankedModel],
    intervals: dict[str, Any] | None = None,
    cut: dict[str, Any] | None = None,
) -> None:
    """The ranking table: names whole (the column is as wide as the longest), each type's
    column headed by its full label, and for a benchmark ranked by the mean over tasks that
    mean, the column its order comes from."""
    from chemteb_eval import tasks
    from chemteb_eval.results.frontier import cut_cell

    types = [t for t in tasks.TASK_TYPES if any(t in r.means for r in rows)]
    label = {name: k.label for name, k in tasks.KINDS.items()}
    width = {t: max(13, len(label[t])) for t in types}
    names = {id(r): shown(r.model) for r in rows}
    name_width = max([5, *map(len, names.values())])
    by_mean = bench.aggregation.kind == "mean"
    n_tasks = len(tasks.benchmark_tasks(bench))
    order = (
        f"the mean over its {n_tasks} tasks"
        if by_mean
        else f"Reciprocal Rank Fusion over task types (k = {bench.aggregation.rrf_k or 10})"
    )
    mean_head = f" {'Mean':>7}" if by_mean else ""
    # the Cut column where it says something: a share of texts cut measured for some model
    measured = any(isinstance(share, float) for share in (cut or {}).values())
    head = (
        f"{'rank':>4} {'model':<{name_width}}{mean_head} {'RRF':>6} {'Borda':>6} "
        + " ".join(f"{label[t]:>{width[t]}}" for t in types)
        + (f" {'Cut':>7}" if measured else "")
    ).rstrip()
    print(
        f"{bench.name}: {len(rows)} model{'' if len(rows) == 1 else 's'}, ranked by {order}. "
        "Per type: mean main score (rank)."
        f"\n{head}\n{'-' * len(head)}"
    )
    for r in rows:
        cells = " ".join(
            f"{_type_cell(r, t):>{width[t]}}" if t in r.means else f"{'-':>{width[t]}}"
            for t in types
        )
        rank = "-" if r.rank is None else str(r.rank)
        note = "" if r.complete else f"  incomplete {r.coverage}"
        ci = (intervals or {}).get(r.model)
        if ci:
            note += f"  95% rank {ci['rank_low']}-{ci['rank_high']}" + (
                "  ~#1" if ci["tied_with_top"] else ""
            )
        mean = ""
        if by_mean:
            mean = f" {'-':>7}" if r.mean is None or not r.complete else f" {r.mean:>7.4f}"
        share = f" {cut_cell((cut or {}).get(r.model)) or '-':>7}" if measured else ""
        line = (
            f"{rank:>4} {names[id(r)]:<{name_width}}{mean} {r.rrf:>6.3f} {r.borda:>6} {cells}"
            f"{share}"
        )
        print(line.rstrip() + note)


def _type_cell(row: RankedModel, task_type: str) -> str:
    return f"{row.means[task_type]:.4f} ({row.ranks[task_type]:>2})"


def _write_correlations(models: Any, bench: Any, args: argparse.Namespace, folder: str) -> None:
    from pathlib import Path

    from chemteb_eval.results.correlations import (
        model_correlations,
        task_correlations,
        write_matrix,
    )
    from chemteb_eval.results.inputs import read_model_tables
    from chemteb_eval.results.leaderboard import model_facts

    # Families as the leaderboard names them: the model table (--model-table, else one in or
    # beside a results folder), else the model id's organisation.
    table = read_model_tables(args.results, args.model_table)
    families = {m.model: model_facts(m, table).family for m in models}
    out = Path(folder)
    tasks_matrix = task_correlations(models, bench)
    models_matrix = model_correlations(models, bench, families)
    try:
        for name, matrix in (("tasks", tasks_matrix), ("models", models_matrix)):
            for kind in ("spearman", "pearson"):
                write_matrix(matrix, out / f"{name}_{kind}.csv", kind)
    except OSError as exc:  # a file, a folder below a file, read-only, a full disk
        raise ValueError(
            f"--correlations: cannot write the matrices into {out} ({exc.strerror or exc}); "
            "pass a folder you can write to (the ranking above is complete)."
        ) from None
    where = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON alone
    print(
        f"correlation matrices (tasks x tasks, models x models; Spearman, Pearson) in {out}",
        file=where,
    )
