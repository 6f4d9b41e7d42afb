"""Names a user's own task may not take: MTEB's task names, and the stems of the files a run
writes in a model's results folder.

A custom task named like an MTEB task writes ``{name}.json`` in MTEB's layout, which MTEB's
loaders and anyone comparing folders read as that task's result; one named ``model_meta``
overwrites the folder's model record with its result. Both are compared in any letter case
(macOS and Windows fold case in file names).

The MTEB names are data (``mteb_task_names.txt``, written by
``scripts/update_mteb_task_names.py``), read on first use: no run needs mteb installed.
"""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["MODEL_FOLDER_STEMS", "MTEB_VERSION", "mteb_task_names", "reserved_because"]

# The mteb whose names mteb_task_names.txt lists (its header says the same; a test checks).
MTEB_VERSION = "2.26.24"
_NAMES_FILE = "mteb_task_names.txt"

# Files a run writes beside a model's result files (``{Task}.json``), by stem: model_meta.json
# (the runner's model record, MTEB's too), runs.jsonl (results.runs.RUNS_FILE) and the legacy
# run_meta.json (results.runs.LEGACY_RUN_META). A task's own side files take its full name
# plus a suffix ({Task}.items.npz, {Task}.task.yaml), so they cannot meet another task's.
# Written here, not imported: the tasks room imports no results module (docs/rooms.md).
MODEL_FOLDER_STEMS: frozenset[str] = frozenset({"model_meta", "run_meta", "runs"})


@functools.lru_cache(maxsize=1)
def _names() -> tuple[frozenset[str], dict[str, str]]:
    """The MTEB task names, and each name casefolded -> the name as MTEB spells it."""
    text = resources.files(__package__).joinpath(_NAMES_FILE).read_text(encoding="utf-8")
    names = frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )
    return names, {n.casefold(): n for n in sorted(names)}


def mteb_task_names() -> frozenset[str]:
    """Every task name MTEB ``MTEB_VERSION`` knows (superseded, private and beta tasks too, and
    the old names it still maps to a task), as MTEB spells them."""
    return _names()[0]


def reserved_because(name: str) -> str | None:
    """Why ``name`` may not be a custom task's name (one line), or ``None`` when it may."""
    folded = name.casefold()
    mteb_name = _names()[1].get(folded)
    if mteb_name is not None:
        if mteb_name != name:
            return (
                f"{name!r} is the MTEB task {mteb_name!r}'s name, letter case aside "
                f"(mteb {MTEB_VERSION})"
            )
        return f"{name!r} is an MTEB task's name (mteb {MTEB_VERSION})"
    stem = next((s for s in sorted(MODEL_FOLDER_STEMS) if s.casefold() == folded), None)
    if stem is not None:
        return (
            f"{name!r} is the stem of a file a run writes in a model's results folder "
            f"({stem}.*): its result file would collide with it"
        )
    return None
