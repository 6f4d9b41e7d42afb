"""The ``chemteb`` command: argument parsing and printing only."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from chemteb_eval import __version__
from chemteb_eval.errors import ChemtebError


def _metric_functions() -> dict[str, Callable[..., Any]]:
    from chemteb_eval import scoring

    return {
        "classification": scoring.score_classification,
        "clustering": scoring.score_clustering,
        "pair_classification": scoring.score_pair_classification,
        "bitext_mining": scoring.score_bitext_mining,
        "retrieval": scoring.score_retrieval,
    }


def _cmd_metrics(_: argparse.Namespace) -> int:
    from chemteb_eval.metric_docs import protocol_defaults

    print(f"{'metric':<21} {'evaluate.load(...)':<30} protocol defaults")
    for name, func in _metric_functions().items():
        defaults = ", ".join(f"{k}={v!r}" for k, v in protocol_defaults(func).items())
        print(f"{name:<21} {'chemteb/' + name:<30} {defaults}")
    return 0


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
    header = f"{'task':<44} {'type':<19} {'collection':<10} {'main score':<11} {'splits':<15} {'revision':<9} source"
    print(header)
    print("-" * len(header))
    for t in records:
        score = tasks.main_score(bench, t) if bench else t.main_score
        splits = ",".join(tasks.eval_splits(bench, t) if bench else t.eval_splits)
        revision = (t.revision or "local")[:8]
        print(
            f"{t.name:<44} {t.type:<19} {t.collection:<10} {score:<11} {splits:<15} {revision:<9} {t.source or ''}"
        )
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from chemteb_eval import tasks
    from chemteb_eval.runner import run

    selected = None
    if args.task:
        collection = tasks.get_benchmark(args.benchmark).collection if args.benchmark else None
        selected = [tasks.get_task(name, collection) for name in args.task]
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
        overwrite=args.overwrite,
        use_cache=not args.no_cache,
        progress=not args.quiet,
    )
    print(f"\n{'task':<44} {'status':<8} main score")
    for name, status in report.statuses.items():
        score = report.main_scores.get(name)
        print(f"{name:<44} {status:<8} {'' if score is None else f'{score:.4f}'}")
    enc = report.encoding
    print(
        f"\n{int(enc['requested']):,} texts requested, {int(enc['unique']):,} unique, "
        f"{int(enc['cache_hits']):,} from the cache, {int(enc['encoded']):,} encoded "
        f"({enc['texts_per_second']:.0f}/s). {report.seconds:.1f} s in all. Results: {report.results_dir}"
    )
    for name, error in report.errors.items():
        print(f"[failed] {name}: {error}", file=sys.stderr)
    return 1 if report.errors else 0


def _cmd_rank(args: argparse.Namespace) -> int:
    import json

    from chemteb_eval import tasks
    from chemteb_eval.results.ranking import rank_models, read_results

    bench = tasks.get_benchmark(args.benchmark)
    models = read_results(args.results, bench, model_table=args.model_table)
    rows = rank_models(models, bench)
    skipped = [s for m in models for s in m.skipped]
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if k != "mean"} for r in rows], indent=1))
    else:
        types = [t for t in tasks.TASK_TYPES if any(t in r["means"] for r in rows)]
        short = {name: k.short for name, k in tasks.KINDS.items()}
        head = f"{'rank':>4} {'model':<42} {'RRF':>6} {'Borda':>6} " + " ".join(
            f"{short[t]:>13}" for t in types
        )
        print(
            f"{bench.name}: {len(rows)} models. Per type: mean main score (rank).\n{head}\n{'-' * len(head)}"
        )
        for r in rows:
            cells = " ".join(
                f"{r['means'][t]:>7.4f} ({r['ranks'][t]:>2})" if t in r["means"] else f"{'-':>13}"
                for t in types
            )
            rank = "-" if r["rank"] is None else str(r["rank"])
            note = "" if r["complete"] else f"  incomplete {r['coverage']}"
            print(f"{rank:>4} {r['model'][:42]:<42} {r['rrf']:>6.3f} {r['borda']:>6} {cells}{note}")
    for line in skipped:
        print(f"[skipped] {line}", file=sys.stderr)
    return 0


def _cmd_publish_metrics(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import publish_metrics

    names = args.metric or None
    kwargs = {"names": names} if names else {}
    publish_metrics(args.namespace, metrics_dir=args.metrics_dir, dry_run=args.dry_run, **kwargs)
    if not args.dry_run:
        print(
            f'\nLoad them with evaluate.load("{args.namespace}/<name>") (pip install chemteb-eval first).'
        )
    return 0


def _cmd_publish_dataset(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import publish_dataset_folder, publish_pipchem

    if args.folder:
        if not args.repo_id:
            raise ValueError("--repo-id: needed with --folder (the dataset repo, org/name).")
        publish_dataset_folder(args.folder, args.repo_id, dry_run=args.dry_run)
    else:
        if not args.namespace:
            raise ValueError("--namespace: needed to publish PipChem (one repo per task).")
        publish_pipchem(args.namespace, scale=args.scale, tasks=args.task, dry_run=args.dry_run)
    return 0


def _cmd_push_results(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import push_results

    push_results(args.results, args.repo_id, create_pr=args.create_pr, dry_run=args.dry_run)
    return 0


def _cmd_submit(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import job_plan, submit

    plan = job_plan(
        args.model,
        args.benchmark,
        args.flavor,
        push_to=args.push_to,
        push=not args.no_push,
        image=args.image,
        package=args.package,
        timeout=args.timeout,
    )
    if args.dry_run:
        print(f"[dry run] image {plan.image} on {plan.flavor} (timeout {plan.timeout}):")
        print("  " + plan.command[-1])
        return 0
    submit(plan, namespace=args.namespace)
    return 0


def _questions(args: argparse.Namespace) -> Any:
    from chemteb_eval.chembench.load import load_questions

    loaded = load_questions(args.questions, revision=args.revision)
    if loaded.skipped:
        print(f"{len(loaded.skipped)} question(s) skipped (malformed):", file=sys.stderr)
        for source, reason in loaded.skipped[:10]:
            print(f"  {source}: {reason}", file=sys.stderr)
    return loaded


def _cmd_chembench_prompts(args: argparse.Namespace) -> int:
    from chemteb_eval.chembench.run import write_prompts

    loaded = _questions(args)
    n = write_prompts(
        loaded.questions,
        args.out,
        mode=args.mode,
        cot=args.cot,
        shuffle_seed=args.shuffle_seed,
        keep_wrappers=args.keep_wrappers,
    )
    print(f"{n} prompts written to {args.out} ({args.mode} mode).")
    return 0


def _cmd_chembench_generate(args: argparse.Namespace) -> int:
    from chemteb_eval.chembench.generate import load_generator
    from chemteb_eval.chembench.run import generate_completions

    loaded = _questions(args)
    generator = load_generator(
        args.model,
        mode=args.mode,
        base_url=args.api_base,
        max_tokens=args.max_tokens,
        temperature=args.temperature,
    )
    n = generate_completions(
        loaded.questions,
        generator,
        args.out,
        mode=args.mode,
        cot=args.cot,
        shuffle_seed=args.shuffle_seed,
        batch_size=args.batch_size,
        progress=not args.quiet,
    )
    print(f"{n} completion(s) generated into {args.out}.")
    return 0


def _refusal_classifier(model: str | None) -> Any:
    if not model:
        return None
    from chemteb_eval.chembench.refusal import load_refusal_classifier

    return load_refusal_classifier(model)


def _cmd_chembench_score(args: argparse.Namespace) -> int:
    from chemteb_eval.chembench.run import read_completions, score_completions

    loaded = _questions(args)
    report = args.report or str(args.completions).rsplit(".", 1)[0] + ".report.json"
    out = score_completions(
        loaded,
        read_completions(args.completions),
        report=report,
        only_answered=args.only_answered,
        mode=args.mode,
        shuffle_seed=args.shuffle_seed,
        relative_tolerance=args.relative_tolerance,
        detect_refusals=not args.no_refusal_detection,
        refusal_classifier=_refusal_classifier(args.refusal_classifier),
    )
    print(
        f"fraction correct {out['fraction_correct']:.4f} ({out['n_correct']}/{out['n_questions']}); "
        f"answered {out['fraction_correct_answered']:.4f}; refusals {out['n_refusals']}, "
        f"parse failures {out['n_parse_failures']}"
    )
    head = f"{'topic':<36} {'n':>5} {'correct':>8} {'fraction':>9} {'refused':>8} {'unparsed':>9}"
    print(f"\n{head}\n{'-' * len(head)}")
    for group in ("by_type", "by_topic"):
        for name, row in out[group].items():
            print(
                f"{name:<36} {row['n_questions']:>5} {row['n_correct']:>8} "
                f"{row['fraction_correct']:>9.4f} {row['n_refusals']:>8} {row['n_parse_failures']:>9}"
            )
    print(f"\nReport (per-question details, keyword problems): {report}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chemteb",
        description="Evaluate text embedding models on chemistry (ChemTEB).",
    )
    parser.add_argument("--version", action="version", version=f"chemteb-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    metrics = sub.add_parser("metrics", help="list the ChemTEB metrics and their protocol defaults")
    metrics.set_defaults(func=_cmd_metrics)
    lister = sub.add_parser("list", help="list benchmarks and tasks (Hub ids, pinned revisions)")
    lister.add_argument(
        "--benchmark", "-b", help="only this benchmark's tasks, with its main scores and splits"
    )
    lister.add_argument(
        "--collection",
        choices=["release", "mteb", "pipchem", "scitext"],
        help="only one collection",
    )
    lister.add_argument("--json", action="store_true", help="print JSON records")
    lister.set_defaults(func=_cmd_list)
    runner = sub.add_parser(
        "run",
        help="evaluate a model (default: the bundled all-MiniLM-L6-v2 on the offline PipChem suite)",
    )
    runner.add_argument(
        "-m",
        "--model",
        default="sentence-transformers/all-MiniLM-L6-v2",
        help="Hub id or folder (sentence-transformers); transformers:ID or transformers-cls:ID "
        "(mean/CLS pooling); model2vec:ID; openai:MODEL (OpenAI-compatible API)",
    )
    runner.add_argument("--api-base", help="API root for openai: models (default $OPENAI_BASE_URL)")
    runner.add_argument(
        "-b",
        "--benchmark",
        help="ChemTEB, ChemTEB(v1.1), ChemTEB(paper), SciText or PipChem (default)",
    )
    runner.add_argument(
        "-t", "--task", nargs="+", help="run these tasks instead of a whole benchmark"
    )
    runner.add_argument(
        "--output-dir", default="results", help="where result folders go (default: results)"
    )
    runner.add_argument("--batch-size", type=int, default=32)
    runner.add_argument("--device", help="torch device, e.g. cpu or cuda:0")
    runner.add_argument(
        "--precision", default="float32", choices=["float32", "float16", "bfloat16"]
    )
    runner.add_argument(
        "--overwrite", action="store_true", help="rerun tasks that already have results"
    )
    runner.add_argument(
        "--no-cache", action="store_true", help="do not read or write the embedding cache"
    )
    runner.add_argument("--quiet", action="store_true", help="no progress bars")
    runner.set_defaults(func=_cmd_run)
    ranker = sub.add_parser("rank", help="rank models from result folders (ours or MTEB's layout)")
    ranker.add_argument("results", nargs="+", help="folders holding <model>/<revision>/<Task>.json")
    ranker.add_argument("-b", "--benchmark", default="ChemTEB(paper)")
    ranker.add_argument(
        "--model-table",
        help="CSV with results_dir,model_id columns (default: paper_models.csv beside a folder)",
    )
    ranker.add_argument("--json", action="store_true")
    ranker.set_defaults(func=_cmd_rank)
    pub = sub.add_parser(
        "publish-metrics", help="make each metrics/<name>/ a Gradio Space (evaluate.load(ns/name))"
    )
    pub.add_argument("--namespace", required=True, help="user or organisation, e.g. chemteb")
    pub.add_argument("--metric", nargs="+", help="only these metrics (default: all five)")
    pub.add_argument("--metrics-dir", help="the metrics/ folder (default: the checkout's)")
    pub.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    pub.set_defaults(func=_cmd_publish_metrics)
    pubd = sub.add_parser(
        "publish-dataset",
        help="publish the datasets this project builds (PipChem, or any Hub-layout folder)",
    )
    pubd.add_argument("--namespace", help="PipChem: one dataset repo per task, NAMESPACE/<Task>")
    pubd.add_argument("--scale", default="full", choices=["full", "small"])
    pubd.add_argument("--task", nargs="+", help="PipChem: only these tasks")
    pubd.add_argument("--folder", help="a Hub-layout folder (Parquet + README.md) to publish")
    pubd.add_argument("--repo-id", help="with --folder: the dataset repo, org/name")
    pubd.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    pubd.set_defaults(func=_cmd_publish_dataset)
    push = sub.add_parser(
        "push-results", help="add a model's scores to its model card (model-index, .eval_results)"
    )
    push.add_argument("results", help="the model's results folder (or a root with one model)")
    push.add_argument("--repo-id", required=True, help="the model repo, org/name")
    push.add_argument("--create-pr", action="store_true", help="open a pull request")
    push.add_argument("--dry-run", action="store_true", help="print the card diff, change nothing")
    push.set_defaults(func=_cmd_push_results)
    job = sub.add_parser("submit", help="run the evaluation on Hub GPUs as a Hugging Face Job")
    job.add_argument("-m", "--model", required=True, help="as for chemteb run -m")
    job.add_argument("-b", "--benchmark", default="ChemTEB", help="default: ChemTEB")
    job.add_argument("--flavor", required=True, help="hardware, e.g. a10g-small, l4x1, a100-large")
    job.add_argument("--push-to", help="model repo for the results (default: the model's id)")
    job.add_argument("--no-push", action="store_true", help="do not push results to a card")
    job.add_argument("--image", default="python:3.11", help="Docker image (default python:3.11)")
    job.add_argument("--package", default="chemteb-eval", help="pip requirement installed first")
    job.add_argument("--timeout", default="6h", help="the Job's time limit (default 6h)")
    job.add_argument("--namespace", help="run the Job under this organisation")
    job.add_argument("--dry-run", action="store_true", help="print the Job's command only")
    job.set_defaults(func=_cmd_submit)
    bench = sub.add_parser("chembench", help="score LLM answers to ChemBench questions")
    bsub = bench.add_subparsers(dest="chembench_command", metavar="STEP", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--questions",
            required=True,
            help="a folder of question files, a .json/.jsonl file, or hub:jablonkagroup/ChemBench",
        )
        p.add_argument("--revision", help="with hub:...: the commit to read ('main': latest)")
        p.add_argument("--mode", default="instruction", choices=["instruction", "completion"])
        p.add_argument("--shuffle-seed", type=int, help="shuffle options (same seed to score)")

    prompts = bsub.add_parser("prompts", help="export the prompts as JSONL for any server")
    common(prompts)
    prompts.add_argument("--out", required=True, help="the JSONL file to write")
    prompts.add_argument("--cot", action="store_true", help="add a chain-of-thought line")
    prompts.add_argument(
        "--keep-wrappers", action="store_true", help="keep \\ce{}, $..$, SMILES tags"
    )
    prompts.set_defaults(func=_cmd_chembench_prompts)
    gen = bsub.add_parser("generate", help="ask a model (resumable; JSONL out)")
    common(gen)
    gen.add_argument("-m", "--model", required=True, help="openai:MODEL or transformers:ID")
    gen.add_argument("--api-base", help="OpenAI-compatible API root (default $OPENAI_BASE_URL)")
    gen.add_argument("--out", required=True, help="completions JSONL (appended; reruns resume)")
    gen.add_argument("--cot", action="store_true")
    gen.add_argument("--max-tokens", type=int, default=512)
    gen.add_argument("--temperature", type=float, default=0.0)
    gen.add_argument("--batch-size", type=int, default=8)
    gen.add_argument("--quiet", action="store_true")
    gen.set_defaults(func=_cmd_chembench_generate)
    score = bsub.add_parser("score", help="score completions; JSON report and a table")
    common(score)
    score.add_argument("--completions", required=True, help="JSONL: key (or uuid/name), completion")
    score.add_argument("--report", help="report path (default: beside the completions)")
    score.add_argument("--relative-tolerance", type=float, default=0.01)
    score.add_argument("--no-refusal-detection", action="store_true")
    score.add_argument(
        "--refusal-classifier",
        nargs="?",
        const="ProtectAI/distilroberta-base-rejection-v1",
        help="also ask a classifier model (default ProtectAI/distilroberta-base-rejection-v1)",
    )
    score.add_argument(
        "--only-answered", action="store_true", help="score only questions with a completion"
    )
    score.set_defaults(func=_cmd_chembench_score)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    try:
        result: int = args.func(args)
    except ValueError as exc:
        # Bad names and arguments: one line, no traceback.
        print(f"chemteb: error: {exc}", file=sys.stderr)
        return 2
    except ChemtebError as exc:
        # The environment (token, network, data): one line that says what to do.
        print(f"chemteb: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # e.g. `chemteb list | head`
        # Reading stops early; point stdout at devnull so the interpreter exits quietly.
        sys.stdout = open(os.devnull, "w")
        return 0
    return result


if __name__ == "__main__":
    raise SystemExit(main())
