"""The ``chemteb`` command: argument parsing and printing only."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import Any

from chemteb_eval import __version__


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chemteb",
        description="Evaluate text embedding models on chemistry (ChemTEB).",
    )
    parser.add_argument("--version", action="version", version=f"chemteb-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    metrics = sub.add_parser("metrics", help="list the ChemTEB metrics and their protocol defaults")
    metrics.set_defaults(func=_cmd_metrics)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
