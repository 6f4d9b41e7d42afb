"""``chemteb publish-metrics``, ``publish-dataset``, ``push-results`` and ``submit``: each
command's arguments beside its handler."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from chemteb_eval.metric_docs import METRIC_NAMES
from chemteb_eval.tasks import BENCHMARKS, benchmark_spelling

if TYPE_CHECKING:
    from chemteb_eval.hub.jobs import WheelRef

Subparsers = Any  # argparse's _SubParsersAction


def add_publish_metrics(sub: Subparsers) -> None:
    pub = sub.add_parser(
        "publish-metrics", help="make each metrics/<name>/ a Gradio Space (evaluate.load(ns/name))"
    )
    pub.add_argument("--namespace", required=True, help="user or organisation, e.g. chemteb")
    pub.add_argument(
        "--metric",
        nargs="+",
        help=f"only these metrics, of {', '.join(METRIC_NAMES)} (default: all {len(METRIC_NAMES)})",
    )
    pub.add_argument("--metrics-dir", help="the metrics/ folder (default: the checkout's)")
    pub.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    pub.set_defaults(func=_cmd_publish_metrics)


def _cmd_publish_metrics(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import publish_metrics

    names = args.metric or None
    kwargs = {"names": names} if names else {}
    publish_metrics(args.namespace, metrics_dir=args.metrics_dir, dry_run=args.dry_run, **kwargs)
    if not args.dry_run:
        print(
            f'\nLoad them with evaluate.load("{args.namespace}/<name>") (evaluate alone: each Space carries its own copy of the scoring code).'
        )
    return 0


def add_publish_dataset(sub: Subparsers) -> None:
    pubd = sub.add_parser(
        "publish-dataset",
        help="publish the datasets this project builds (PipChem, or any Hub-layout folder)",
    )
    pubd.add_argument("--namespace", help="PipChem: one dataset repo per task, NAMESPACE/<Task>")
    pubd.add_argument("--scale", default="full", choices=["full", "small"])
    pubd.add_argument("--task", nargs="+", help="PipChem: only these tasks")
    pubd.add_argument("--folder", help="a Hub-layout folder (Parquet + README.md) to publish")
    pubd.add_argument(
        "--task-file", help="your task file: its data becomes a Parquet dataset repo (--repo-id)"
    )
    pubd.add_argument("--repo-id", help="with --folder or --task-file: the dataset repo, org/name")
    pubd.add_argument("--dry-run", action="store_true", help="list what would be uploaded")
    pubd.set_defaults(func=_cmd_publish_dataset)


def _cmd_publish_dataset(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import publish_dataset_folder, publish_pipchem
    from chemteb_eval.hub.publish import publish_task_file

    if args.folder and args.task_file:
        raise ValueError("--task-file: publish a folder or a task file's data, not both.")
    if args.task_file:
        if not args.repo_id:
            raise ValueError("--repo-id: needed with --task-file (the dataset repo, org/name).")
        pub = publish_task_file(args.task_file, args.repo_id, dry_run=args.dry_run)
        if pub.commit:
            print(
                f"Run it from the Hub: in a task file, source: {{hub: {args.repo_id}, "
                f"revision: {pub.commit}}}"
            )
    elif args.folder:
        if not args.repo_id:
            raise ValueError("--repo-id: needed with --folder (the dataset repo, org/name).")
        publish_dataset_folder(args.folder, args.repo_id, dry_run=args.dry_run)
    else:
        if not args.namespace:
            raise ValueError("--namespace: needed to publish PipChem (one repo per task).")
        publish_pipchem(args.namespace, scale=args.scale, tasks=args.task, dry_run=args.dry_run)
    return 0


def add_push_results(sub: Subparsers) -> None:
    push = sub.add_parser(
        "push-results", help="add a model's scores to its model card (model-index, .eval_results)"
    )
    push.add_argument("results", help="the model's results folder (or a root with one model)")
    push.add_argument("--repo-id", required=True, help="the model repo, org/name")
    push.add_argument("--create-pr", action="store_true", help="open a pull request")
    push.add_argument("--dry-run", action="store_true", help="print the card diff, change nothing")
    push.add_argument(
        "--benchmark-repo",
        action="append",
        default=[],
        metavar="BENCHMARK=ORG/NAME",
        help="file a complete benchmark's mean under this Hub dataset (.eval_results/<benchmark>.yaml)",
    )
    push.set_defaults(func=_cmd_push_results)


def _cmd_push_results(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import push_results

    repos = {}
    for pair in args.benchmark_repo:
        name, sep, repo = pair.partition("=")
        if not sep or not name or not repo:
            raise ValueError(f"--benchmark-repo: {pair!r} is not BENCHMARK=ORG/NAME.")
        repos[name] = repo
    push_results(
        args.results,
        args.repo_id,
        create_pr=args.create_pr,
        dry_run=args.dry_run,
        benchmark_repos=repos,
    )
    return 0


def add_submit(sub: Subparsers) -> None:
    job = sub.add_parser("submit", help="run the evaluation on Hub GPUs as a Hugging Face Job")
    job.add_argument("-m", "--model", required=True, help="as for chemteb run -m")
    job.add_argument(
        "-b",
        "--benchmark",
        default="ChemTEB",
        type=benchmark_spelling,
        help=f"{', '.join(BENCHMARKS)} (default ChemTEB)",
    )
    job.add_argument("--flavor", required=True, help="hardware, e.g. a10g-small, l4x1, a100-large")
    job.add_argument("--push-to", help="model repo for the results (default: the model's id)")
    job.add_argument("--no-push", action="store_true", help="do not push results to a card")
    job.add_argument("--image", default="python:3.11", help="Docker image (default python:3.11)")
    job.add_argument(
        "--package",
        help="pip requirement installed first (default: this version, chemteb-eval[EXTRAS]==X.Y.Z)",
    )
    job.add_argument(
        "--local",
        action="store_true",
        help="run this checkout: build its wheel, upload it to --wheel-repo, the Job installs it",
    )
    job.add_argument(
        "--wheel-repo",
        help="with --local: the model repo for the wheel (default YOU/chemteb-eval-wheels, private)",
    )
    job.add_argument("--timeout", default="6h", help="the Job's time limit (default 6h)")
    job.add_argument("--namespace", help="run the Job under this organisation")
    job.add_argument("--dry-run", action="store_true", help="print the Job's command only")
    job.set_defaults(func=_cmd_submit)


def _cmd_submit(args: argparse.Namespace) -> int:
    from chemteb_eval.hub import job_plan, submit
    from chemteb_eval.hub._repo import check_namespace, check_repo_id
    from chemteb_eval.hub.jobs import flavor_gpus

    if args.wheel_repo and not args.local:
        raise ValueError("--wheel-repo: only with --local (where the checkout's wheel goes).")
    if args.local and args.package:
        raise ValueError("--package: not with --local (the Job installs the checkout's wheel).")
    plan_args = (args.model, args.benchmark, args.flavor)
    options = dict(push_to=args.push_to, push=not args.no_push, image=args.image)
    # Every argument is checked before a wheel is built.
    job_plan(*plan_args, **options, timeout=args.timeout)
    if args.wheel_repo:
        check_repo_id(args.wheel_repo, "--wheel-repo")
    if args.namespace is not None:
        check_namespace(args.namespace, "--namespace")
    wheel = _local_wheel(args) if args.local else None
    gpus, source = flavor_gpus(args.flavor)
    plan = job_plan(
        *plan_args, **options, package=args.package, wheel=wheel, timeout=args.timeout, gpus=gpus
    )
    processes = f"{plan.processes} processes, one per GPU" if plan.processes > 1 else "one process"
    where = f"{gpus} GPU{'s' * (gpus != 1)}" if gpus else "no GPU"
    if args.dry_run:
        print(f"[dry run] image {plan.image} on {plan.flavor} (timeout {plan.timeout}):")
        print(f"  {where} ({source}): chemteb run on {processes}")
        print("  " + plan.command[-1])
        return 0
    print(f"The Job installs {plan.package} and runs chemteb on {processes} ({where}, {source})")
    submit(plan, namespace=args.namespace)
    return 0


def _local_wheel(args: argparse.Namespace) -> WheelRef:
    """``--local``: the checkout's wheel (its tracked files only), uploaded unless a dry run; the
    upload message names the commit and any uncommitted changes the wheel holds."""
    import tempfile

    from chemteb_eval.hub.jobs import WheelRef, build_local_wheel, upload_wheel

    with tempfile.TemporaryDirectory(prefix="chemteb-wheel-") as tmp:
        built = build_local_wheel(tmp)
        source = built.state.describe()
        if args.dry_run:
            where = args.wheel_repo or "YOU/chemteb-eval-wheels"
            print(
                f"[dry run] built {built.path.name} from {source}; it would be uploaded to "
                f"{where} (private)"
            )
            return WheelRef(where, built.path.name, "COMMIT")
        return upload_wheel(
            built.path, args.wheel_repo, message=f"{built.path.name} built from {source}"
        )
