"""Write ``chemteb_eval/tasks/mteb_task_names.txt``: every task name the installed mteb knows.

A custom task may not take an MTEB task's name (``chemteb_eval.tasks.reserved``): its results
would read as that task's to MTEB's loaders and to anyone comparing folders. The list is data in
the package, so no run needs mteb installed; this script, run where mteb is, regenerates it.

Names: every task class mteb registers (``mteb.get_tasks`` with every filter off: superseded,
private, beta and aggregate tasks too; 2,087 in mteb 2.26.24), plus the old names mteb still
maps to a task (``get_task``'s renames, the result loader's renamed and outdated tasks).

Usage: python scripts/update_mteb_task_names.py [--check]
  --check: exit 1 if the shipped file differs from what this mteb gives (nothing written).
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "chemteb_eval" / "tasks" / "mteb_task_names.txt"
RESERVED = TARGET.with_name("reserved.py")


def mteb_version() -> str:
    import mteb

    return str(mteb.__version__)


def task_names() -> list[str]:
    """Every name mteb resolves to a task, sorted (one of each)."""
    import mteb

    logging.getLogger("mteb").setLevel(logging.ERROR)  # a beta warning per beta task otherwise
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tasks = mteb.get_tasks(
            exclude_superseded=False,
            exclude_aggregate=False,
            exclude_private=False,
            exclude_beta=False,
        )
    names = {t.metadata.name for t in tasks}
    return sorted(names | set(_old_names()))


def _old_names() -> Iterable[str]:
    """Names mteb 2.x maps to a task: private tables, so each is read if present."""
    import importlib

    for module, table in (
        ("mteb.get_tasks", "_TASK_RENAMES"),
        ("mteb.results.task_result", "renamed_tasks"),
        ("mteb.results.task_result", "outdated_tasks"),
    ):
        try:
            yield from getattr(importlib.import_module(module), table, {})
        except ImportError:
            continue


def render(version: str, names: list[str]) -> str:
    """The file's text: a header line, then one name a line."""
    header = (
        f"# mteb {version}: {len(names)} task names; "
        "regenerate with scripts/update_mteb_task_names.py"
    )
    return "\n".join([header, *names]) + "\n"


def expected() -> str:
    """What this script writes with the installed mteb."""
    return render(mteb_version(), task_names())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    text = expected()
    if args.check:
        same = TARGET.is_file() and TARGET.read_text(encoding="utf-8") == text
        print(f"{TARGET.name}: {'up to date' if same else 'differs; run without --check'}")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({text.splitlines()[0].lstrip('# ')})")
    version = mteb_version()
    if f'MTEB_VERSION = "{version}"' not in RESERVED.read_text(encoding="utf-8"):
        print(f"now set MTEB_VERSION = {version!r} in {RESERVED}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
