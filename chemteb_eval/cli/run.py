"""``chemteb run``: its arguments beside its handler, the model's variant built once
(``models.variant.ModelVariant``) and handed to the runner."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, NoReturn

from chemteb_eval.models import DEFAULT_BATCH_SIZE, DEFAULT_MODEL, model_help
from chemteb_eval.results.markup import shown
from chemteb_eval.tasks import BENCHMARKS, benchmark_spelling

from .rank import print_frontier_of

__all__ = ["add_run"]

Subparsers = Any  # argparse's _SubParsersAction
_RUNTIMES = ("auto", "torch", "onnx", "onnx-int8")
_DEFAULT_RUNTIME = "torch"
# scoring.compression.PRECISIONS, written out so that the help imports no numpy (tests check)
_PRECISIONS = ("float32", "float16", "bfloat16", "int8", "uint8", "int4", "uint4", "binary")


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
        help=f"{model_help('encoder')}; or bm25s (MTEB's BM25, retrieval tasks only). "
        f"Default: {DEFAULT_MODEL}, bundled (offline)",
    )
    runner.add_argument("--api-base", help="API root for openai: models (default $OPENAI_BASE_URL)")
    runner.add_argument(
        "--revision",
        metavar="NAME",
        help="openai: models: your name for the model the API serves now (e.g. a date or a "
        "version); with the model's name and --api-base, what the model is: its own cache and "
        "results folder (docs/custom_tasks.md#results-that-know-their-data)",
    )
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
        action="extend",  # -t A -t B runs both (a second -t replaced the first)
        help="only these tasks (with -b: some of its tasks, scored by its protocol)",
    )
    runner.add_argument(
        "--task-file",
        nargs="+",
        action="extend",
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
    _add_run_options(runner)
    runner.set_defaults(func=_cmd_run)


def _add_run_options(runner: argparse.ArgumentParser) -> None:
    """``run``'s options after ``--device``, in the order its help lists them."""
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
    runner.add_argument(
        "--hybrid",
        choices=("bm25s",),
        help="also score each retrieval task as the reciprocal-rank fusion (k=60) of the "
        "model's ranking and BM25's, from the vectors the run has: one more row "
        "(docs/lexical.md). -m bm25s runs BM25 itself",
    )
    runner.add_argument("--quiet", action="store_true", help="no progress bars")


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


def _selected(args: argparse.Namespace) -> tuple[list[Any] | None, dict[str, str]]:
    """The tasks ``-t`` or ``--task-file`` selects (``None``: the benchmark's) and the data
    paths of the run. A typo in ``-b`` or ``-t`` is refused here, in a second, before the
    runner's imports (numpy, datasets, torch: 13 s on a loaded machine)."""
    from chemteb_eval import tasks

    if args.task_file:
        if args.task or args.benchmark:
            raise ValueError(
                "--task-file: your tasks run alone (they rank apart, as the Custom benchmark); "
                "drop -t/-b, or run those in a second run into the same --output-dir."
            )
        selected, own_paths = _custom_tasks(args.task_file)
        return selected, {**_data_paths(args.data_path, None), **own_paths}
    bench = tasks.get_benchmark(args.benchmark) if args.benchmark else None
    chosen = None
    if args.task:
        collection = bench.collection if bench else None
        chosen = [tasks.get_task(name, collection) for name in args.task]
    return chosen, _data_paths(args.data_path, chosen)


def _cmd_run(args: argparse.Namespace) -> int:
    from chemteb_eval.models.variant import ModelVariant

    if args.pipchem_scale:  # the one setting the PipChem builder reads, for this run
        os.environ["CHEMTEB_PIPCHEM_SCALE"] = args.pipchem_scale
    selected, paths = _selected(args)
    from chemteb_eval.runner import run

    # the model's variant, one value from here to the cache key and the experiment folder
    variant = ModelVariant(
        backend=args.backend,
        precision=args.precision,
        api_base=args.api_base,
        dims=args.dims,
        precisions=args.precisions,
        hybrid=args.hybrid,
        revision=args.revision,
    )
    report = run(
        args.model,
        # -b with -t: those tasks, scored by the benchmark's protocol (its splits, main scores)
        benchmark=args.benchmark or (None if selected else "PipChem"),
        tasks=selected,
        output_dir=args.output_dir,
        batch_size=args.batch_size,
        device=args.device,
        overwrite=args.overwrite,
        use_cache=not args.no_cache,
        data_paths=paths,
        beta=args.beta,
        progress=not args.quiet,
        variant=variant,
    )
    if os.environ.get("RANK", "0") != "0":  # torchrun's other ranks: the main process says it
        _leave()
    return _summary(args, report)


def _leave() -> NoReturn:
    """A torchrun rank other than the main one, its share committed and its group closed,
    leaves at once: once in six runs of two jobs at a time, such a rank aborted in the
    interpreter's teardown ("terminate called without an active exception", gloo's threads),
    and torchrun then stopped the main process before it had written a result."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _summary(args: argparse.Namespace, report: Any) -> int:
    """The run's tables and lines; 1 when a task failed."""
    from chemteb_eval.results.tables import run_tasks_table

    for line in run_tasks_table(report.statuses, report.main_scores, report.truncation):
        print(line)
    enc = report.encoding
    tokens = enc.get("tokens_per_second")
    speed = f"{enc['texts_per_second']:.0f} texts/s" + (
        f", {tokens:.0f} tokens/s" if tokens else ""
    )
    from chemteb_eval.runner.lexical import is_lexical

    if is_lexical(args.model):  # BM25 encodes nothing: it indexes documents, searches queries
        done = f"{int(enc['encoded']):,} texts indexed or searched ({speed})"
    else:
        done = (
            f"{int(enc['requested']):,} texts requested, {int(enc['unique']):,} unique, "
            f"{int(enc['cache_hits']):,} from the cache, {int(enc['encoded']):,} encoded"
            + (f" by {int(enc['processes'])} processes" if enc.get("processes", 1) > 1 else "")
            + f" ({speed})"
        )
    print(f"\n{done}. {report.seconds:.1f} s in all. Results: {report.results_dir}")
    failed = len(report.errors) + sum(len(v.errors) for v in report.variants.values())
    if report.variants:
        print(f"\nThe frontier (chemteb rank {args.output_dir} --frontier):")
        try:
            print_frontier_of([args.output_dir], None if args.task_file else args.benchmark)
        except Exception as exc:  # a damaged folder beside ours: the run's results stand
            print(f"[warning] the frontier was not drawn: {shown(exc)}", file=sys.stderr)
    if args.hybrid or is_lexical(args.model):
        print(
            f"\nNext: chemteb rank {args.output_dir} gives each model's (and hybrid's) verdict "
            "against BM25 per retrieval task; both need the BM25 row there (chemteb run -m "
            "bm25s) — docs/lexical.md."
        )
    if failed:  # each failure was one [failed] line as it happened
        print(
            f"{failed} task(s) failed, each said above as it failed; a rerun retries them.",
            file=sys.stderr,
        )
    return 1 if failed else 0
