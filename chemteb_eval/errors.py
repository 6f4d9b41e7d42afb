"""The project's exceptions for problems of the environment (not of the caller's arguments), the
missing-extra check, and the helper that keeps messages about hostile input readable.

The tree (``tests/test_errors_tree.py`` holds it to the classes)::

    ChemtebError (RuntimeError)            the environment, not the arguments; says what to do
    ├── MissingExtraError                  optional packages a feature needs are not installed
    ├── MissingDataError                   a task's data is not here (a restricted set's copy)
    ├── HubUnavailableError                the Hub cannot be used now (offline or unreachable)
    │                                      and what was asked for is not cached
    ├── ProbeMoved                         models.identity: an API model's vectors left its anchor
    ├── RankRefused                        engine.distributed: torchrun's ranks not run alike
    ├── TaskFileError (ValueError)         tasks.custom: a task file that cannot be used
    └── CustomDataError (ValueError)       data.custom: a task file's data files

    ValueError                             a bad argument; the message names it

Catch ``ChemtebError`` to report any of them in one line (the CLI does, exit 1); a bad
argument exits 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class ChemtebError(RuntimeError):
    """Something outside the arguments is wrong: offline, missing data, missing extra.

    The message always says what to do next. Bad arguments raise ``ValueError`` instead.
    """


def short_repr(value: Any, limit: int = 40) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages about hostile input (an
    int of 5,000 digits has no repr at all: Python refuses to print it)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too long to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MissingExtraError(ChemtebError):
    """A feature's optional packages are not installed; the message names the extras to install."""

    def __init__(self, what: str, extras: Sequence[str], missing: Sequence[str]) -> None:
        self.extras = tuple(dict.fromkeys(extras))
        self.missing = tuple(missing)
        names = ",".join(self.extras)
        which = (
            f"the {self.extras[0]!r} extra"
            if len(self.extras) == 1
            else f"the {' and '.join(repr(e) for e in self.extras)} extras"
        )
        super().__init__(
            f"{what} {'need' if ' and ' in what else 'needs'} {which} "
            f"({', '.join(self.missing)} not installed): "
            f'pip install "chemteb-eval[{names}]"'
        )


def _absent(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):  # a broken or half-installed package counts as absent
        return True


def require_extras(needs: Sequence[tuple[str, Sequence[str], str]]) -> None:
    """Stop with one line naming every missing extra (one ``pip install`` for all of them).

    ``find_spec`` only looks the modules up (no import: torch's import alone takes seconds).

    Args:
        needs: (extra, top-level import names, the feature as the message says it), e.g.
            ``("run", ("torch", "sentence_transformers"), "a sentence-transformers model")``.

    Raises:
        MissingExtraError: some modules are missing.
    """
    short = [(extra, [m for m in modules if _absent(m)], what) for extra, modules, what in needs]
    short = [need for need in short if need[1]]
    if short:
        raise MissingExtraError(
            " and ".join(what for _, _, what in short),
            [extra for extra, _, _ in short],
            [m for _, missing, _ in short for m in missing],
        )


def require_extra(extra: str, *modules: str, what: str) -> None:
    """``require_extras`` for one feature: stop unless every module in ``modules`` is there."""
    require_extras([(extra, modules, what)])


class MissingDataError(ChemtebError):
    """A task's data is not here: a restricted set without ``--data-path``, or a folder that is
    not one; the message says where to obtain it and in what format."""


class HubUnavailableError(ChemtebError):
    """The Hugging Face Hub cannot be used (``HF_HUB_OFFLINE`` is set, or it cannot be reached)
    and what was asked for is not in the local cache; the message says where else to get it.
    The one Hub-unreachable error: models, datasets, ChemBench's questions and the Hub
    commands (publishing, cards, Jobs) raise it alike, so a dry run can go on without what it
    could not read."""
