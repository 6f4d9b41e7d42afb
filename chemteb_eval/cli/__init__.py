"""The ``chemteb`` command: argument parsing and printing only.

Each command's arguments sit beside its handler (``evaluate.py``, ``run.py``, ``rank.py``,
``hub.py``, ``chemteb_eval/chembench/cli.py``); ``build_parser`` only wires them together.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TextIO

from chemteb_eval import __version__
from chemteb_eval.chembench.cli import add_chembench
from chemteb_eval.errors import ChemtebError

from . import evaluate, hub, inspect, rank, run

__all__ = ["build_parser", "main"]

COMMANDS = (
    evaluate.add_metrics,
    evaluate.add_list,
    run.add_run,
    rank.add_rank,
    inspect.add_inspect,
    evaluate.add_export,
    evaluate.add_compare,
    evaluate.add_compare_domains,
    hub.add_publish_metrics,
    hub.add_publish_dataset,
    hub.add_push_results,
    hub.add_submit,
    add_chembench,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chemteb",
        description="Evaluate text embedding models on chemistry (ChemTEB).",
    )
    parser.add_argument("--version", action="version", version=f"chemteb-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def _say(line: str, *, own: bool = False) -> None:
    """An error line: under torchrun rank 0 says it, and another rank only where ``own`` (the
    first process of another node, a start check it is named in), as ``chemteb: rank N: ...``:
    a node's own cache or data fail there alone. The other ranks wait a moment before they
    exit: torchrun stops every process as soon as one exits, and a rank that failed first
    would otherwise cut rank 0 off before its line (seen under load: no line at all)."""
    rank = os.environ.get("RANK", "0")
    if rank != "0" and own and f"rank {rank} on " not in line:
        line = line.replace("chemteb: ", f"chemteb: rank {rank}: ", 1)
    if rank == "0" or own:
        # a path or name from the user's files may hold control characters: never raw
        print("".join(c if c.isprintable() else "?" for c in line), file=sys.stderr, flush=True)
    if rank != "0":
        import time

        with contextlib.suppress(KeyboardInterrupt):  # torchrun's SIGTERM: leave at once
            time.sleep(_HELPER_RANK_WAIT)


_HELPER_RANK_WAIT = 3.0  # seconds: rank 0 fails the same way, well within it


def _terminate_as_interrupt() -> None:
    """SIGTERM as Ctrl-C: the block in flight and the calls that finished are committed and the
    run's record written before the process ends (torchrun sends it to every other rank when
    one fails, then SIGKILL 30 s later)."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (an embedding program's)
        signal.signal(signal.SIGTERM, interrupt)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warning_line(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Our own warnings as one line, ``chemteb: warning: ...`` (not Python's two lines naming
    a source file and quoting its code); other libraries' as Python shows them."""
    if not os.path.abspath(filename).startswith(_PACKAGE + os.sep):
        shown = warnings.formatwarning(message, category, filename, lineno, line)
        (file or sys.stderr).write(shown)
        return
    if os.environ.get("RANK", "0") == "0":
        text = "".join(c if c.isprintable() else "?" for c in str(message))
        print(f"chemteb: warning: {text}", file=file or sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    with warnings.catch_warnings():
        warnings.showwarning = _warning_line
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "func"):
        parser.print_help()
        return 0
    if args.command == "run":  # torchrun stops the other ranks so, as do Slurm and docker
        _terminate_as_interrupt()
    try:
        result: int = args.func(args)
    except ValueError as exc:
        # Bad names and arguments: one line, no traceback.
        _say(f"chemteb: error: {exc}")
        return 2
    except ChemtebError as exc:
        # The environment (token, network, data): one line that says what to do. Under
        # torchrun, rank 0 says it, and another node's first process its own (a node's cache
        # or data; each node's output is its own); a start check of the ranks names who says it
        said = getattr(exc, "said", None)
        _say(
            f"chemteb: {exc}",
            own=os.environ.get("LOCAL_RANK", "0") == "0" if said is None else said,
        )
        return 1
    except KeyboardInterrupt:  # Ctrl-C: one line, not a traceback from inside torch
        if getattr(args, "writes", True):
            _say(
                "chemteb: interrupted; what was done is kept (result files, committed "
                "embeddings, the run's record): the same command resumes."
            )
        else:
            _say("chemteb: interrupted; this command writes nothing: rerun it when you like.")
        return 130
    except BrokenPipeError:  # e.g. `chemteb list | head`
        # Reading stops early; point stdout at devnull so the interpreter exits quietly.
        sys.stdout = open(os.devnull, "w")
        return 0
    return result
