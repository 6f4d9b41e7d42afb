"""``chemteb rank``: its arguments beside its handler; the tables it prints are the results
room's (``results.tables``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from chemteb_eval.results.markup import shown
from chemteb_eval.tasks import BENCHMARKS, benchmark_spelling

__all__ = ["add_rank", "print_frontier_of", "rank_benchmark", "scan_and_read"]

Subparsers = Any  # argparse's _SubParsersAction


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
        "--diagnostics",
        action="store_true",
        help="why a row is low: each model's tokens per SMILES and unknown-token share beside "
        "its mean (the chemistry block of its result files; docs/inspect.md)",
    )
    ranker.add_argument(
        "--correlations",
        metavar="DIR",
        help="also write the task x task and model x model Spearman and Pearson matrices as CSV",
    )
    ranker.set_defaults(func=_cmd_rank)


def _cmd_rank(args: argparse.Namespace) -> int:

    from chemteb_eval.results.board import benchmark_coverage
    from chemteb_eval.results.ranking import rank_models, rank_uncertainty

    scanned, catalog, bench, chosen, models = scan_and_read(
        args.results, args.benchmark, args.model_table
    )
    if getattr(args, "frontier", False):
        return _frontier(models, bench, chosen, args.json)
    if getattr(args, "diagnostics", False):
        return _diagnostics(models, bench, chosen, args.json)
    rows = rank_models(models, bench)
    intervals = rank_uncertainty(models, bench) if args.ci else {}
    _print_ranking(args.json, models, bench, chosen, rows, intervals if args.ci else None)
    skipped = [s for m in models for s in m.skipped]  # after the intervals: evidence notices
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


def _print_ranking(
    as_json: bool,
    models: list[Any],
    bench: Any,
    chosen: str,
    rows: list[Any],
    intervals: dict[str, Any] | None,
) -> None:
    """The ranking as a table (with the BM25 row badged and the verdicts against it below) or
    as JSON (each row's ``reference`` and ``versus_bm25``)."""
    import json

    from chemteb_eval.results.lexical import (
        REFERENCE_BADGE,
        is_reference,
        verdict_lines,
        versus_bm25,
        with_verdicts,
    )
    from chemteb_eval.results.tables import cut_shares, rank_json, ranking_table

    versus = versus_bm25(models, bench)  # each row against BM25's, where there is one
    by_mean = bench.aggregation.kind == "mean"
    cut = cut_shares(models, bench)
    badges = {m.model: REFERENCE_BADGE for m in models if is_reference(m)}
    if as_json:
        if chosen:  # stdout holds the JSON alone
            print(chosen, file=sys.stderr)
        found = rank_json(rows, by_mean, intervals, cut)
        print(json.dumps(with_verdicts(found, badges, versus), indent=1))
        return
    if chosen:
        print(chosen)
    _print(ranking_table(bench, rows, intervals or {}, cut, badges))
    if versus:
        print()
        _print(verdict_lines(versus, list(badges)))


def _print(lines: Sequence[str]) -> None:
    for line in lines:
        print(line)


def scan_and_read(
    results: Sequence[str], benchmark: str | None, model_table: str | None
) -> tuple[list[Any], Any, Any, str, list[Any]]:
    """The result folders scanned, the catalog they make known (the registered tasks and the
    ones these results recorded), the benchmark to rank on and why it was chosen, and each
    model's results on it."""
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.scan import catalog_of, scan_results

    scanned = scan_results(results, model_table=model_table)
    catalog = catalog_of(scanned)
    bench, chosen = rank_benchmark(results, benchmark, scanned, catalog)
    return scanned, catalog, bench, chosen, read_results(scanned, bench)


def print_frontier_of(folders: list[str], benchmark: str | None) -> None:
    """``rank FOLDERS --frontier`` (with ``-b`` when given), for the run's summary."""
    _, _, bench, chosen, models = scan_and_read(folders, benchmark, None)
    _frontier(models, bench, chosen, False)


def _frontier(models: list[Any], bench: Any, chosen: str, as_json: bool) -> int:
    """``rank --frontier``: one row per model and variant, best mean first."""
    import json

    from chemteb_eval.results.frontier import frontier
    from chemteb_eval.results.lexical import lexical_rows, retrieval_part
    from chemteb_eval.results.ranking import rank_uncertainty
    from chemteb_eval.results.tables import frontier_table

    views = [(bench, frontier(models, bench, rank_uncertainty(models, bench)), "vector")]
    part = retrieval_part(bench) if lexical_rows(models) else None
    if part is not None:  # BM25 and the hybrids score retrieval only: placed by index size
        found = frontier(models, part, rank_uncertainty(models, part), size="index")
        views.append((part, found, "index"))
    if as_json:
        if chosen:
            print(chosen, file=sys.stderr)
        out = [{**r.to_dict(), "benchmark": b.name} for b, rows, _ in views for r in rows]
        print(json.dumps(out, indent=1))
    else:
        if chosen:
            print(chosen)
        for i, (b, rows, size) in enumerate(views):
            _print(([""] if i else []) + frontier_table(b, rows, size))
    for line in dict.fromkeys(s for m in models for s in m.skipped):
        print(f"[skipped] {shown(line)}", file=sys.stderr)
    return 0


def _diagnostics(models: list[Any], bench: Any, chosen: str, as_json: bool) -> int:
    """``rank --diagnostics``: tokens per SMILES and the unknown share beside each mean (the
    Space's Tokenization tab, cell for cell)."""
    import json

    from chemteb_eval.results.diagnostics import chemistry_rows

    rows = chemistry_rows(models, bench)
    if as_json:
        print(json.dumps(rows, indent=1))
        return 0
    if chosen:
        print(chosen)
    width = max([5, *(len(shown(r["model"])) for r in rows)])
    head = (
        f"{'model':<{width}} {'mean':>7} {'SMILES':>7} {'tok/SMILES':>10} {'unk':>10} "
        f"{'tok/text':>8} {'unk text':>10}"
    )
    print(
        f"{bench.name}: how each model's tokenizer cuts its tasks' strings\n{head}\n{'-' * len(head)}"
    )
    notes = []
    for r in rows:
        mean = f"{r['mean']:.4f}" if r["mean"] is not None else "-"
        if "smiles" not in r:
            print(f"{shown(r['model']):<{width}} {mean:>7} {r['chemistry'] or 'not recorded'}")
            continue
        smiles, text = r["smiles"], r["text"]
        if "said" in smiles:
            notes.append(f"{shown(r['model'])}: SMILES {shown(smiles['said'])}")
        count = f"{smiles['strings']:,}" if "said" not in smiles else "n/a"
        print(
            f"{shown(r['model']):<{width}} {mean:>7} {count:>7} {_tokens(smiles):>10} "
            f"{_unknown(smiles):>10} {_tokens(text):>8} {_unknown(text):>10}"
        )
    for note in notes:
        print(note)
    return 0


def _tokens(pooled: dict[str, Any]) -> str:
    return f"{pooled['tokens']:.1f}" if pooled["tokens"] is not None else "-"


def _unknown(pooled: dict[str, Any]) -> str:
    """The unknown-token share, or a word model's out-of-vocabulary share (marked)."""
    if "oov_share" in pooled:
        return f"{pooled['oov_share']:.1%} OOV"
    return f"{pooled['unk_share']:.1%}" if pooled["unk_share"] is not None else "-"


def rank_benchmark(
    results: Sequence[Any], benchmark: str | None, scanned: list[Any], catalog: Any
) -> tuple[Any, str]:
    """The benchmark to rank on (``-b``, else the one the results cover best) and the line
    that says why it was chosen ("" with ``-b``); a notice when there is nothing to rank."""
    from chemteb_eval.results.board import choose_benchmark

    if not scanned:  # the newcomer's first try, before any run
        where = ", ".join(map(str, results))
        print(
            f"[notice] no result files under {where}: `chemteb run` writes them (to results/).",
            file=sys.stderr,
        )
    if benchmark is not None:
        try:
            return catalog.get_benchmark(benchmark), ""
        except ValueError:  # say first what was left out (an edited task declaration, say)
            for line in dict.fromkeys(s for m in scanned for s in m.skipped):
                print(f"[skipped] {shown(line)}", file=sys.stderr)
            raise
    bench, why = choose_benchmark(scanned, catalog)
    if not scanned:
        return bench, ""
    return bench, f"Ranked on {bench.name}, {why}. Another: -b NAME (`chemteb list` names them)."


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
