"""The one resolver of result inputs: where the model table, the MTEB scores and a model's name
come from. ``chemteb rank``/``compare-domains``, the Space and the model cards all ask here, so
the same folders give the same tables everywhere.

The rule, for each file: the path the user named (``--model-table``, ``--mteb-scores``), else
the file of that name inside a results folder or beside it (in its parent, where the paper's
``paper_models.csv`` and ``mteb_eng_v1_scores.csv`` sit next to ``paper_results/``). A file the
user named must be readable (``ValueError`` naming the argument); a file found is read if it can
be, and otherwise left out with the reason, so that a damaged neighbour never stops a ranking.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemteb_eval._files import first_non_utf8

if TYPE_CHECKING:
    from .domains import MtebScores

__all__ = [
    "MODEL_TABLE_FILE",
    "MTEB_SCORES_FILE",
    "MtebInput",
    "find_beside",
    "model_name",
    "model_table_paths",
    "not_utf8_row",
    "read_model_table",
    "read_model_tables",
    "resolve_mteb_scores",
]

MODEL_TABLE_FILE = "paper_models.csv"  # results_dir, model_id and the model facts
MTEB_SCORES_FILE = "mteb_eng_v1_scores.csv"  # MTEB(eng, v1) scores: model_id, task, ...


def read_model_table(path: str | Path | None) -> dict[str, dict[str, str]]:
    """Rows of a model table (``paper_models.csv``'s columns), keyed by model id and folder.

    Raises:
        ValueError: when the file lacks a ``model_id`` column.
    """
    if path is None:
        return {}
    path = Path(path)
    table: dict[str, dict[str, str]] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:  # Excel writes a BOM
        reader = csv.DictReader(handle)
        try:
            if "model_id" not in (reader.fieldnames or []):
                raise ValueError(f"model_table: {path} has no 'model_id' column.")
            for row in reader:
                if None in row or any(v is None for v in row.values()):  # too many or too few
                    raise ValueError(
                        f"model_table: {path}: line {reader.line_num} has "
                        f"{len(row) - (None in row)} of {len(reader.fieldnames or ())} columns."
                    )
                table[row["model_id"]] = row
                if row.get("results_dir"):
                    table[row["results_dir"]] = row
        except csv.Error as exc:  # a 131k-character field, a stray NUL
            raise ValueError(
                f"model_table: {path}: line {reader.line_num}: not a readable CSV row ({exc})."
            ) from None
        except UnicodeDecodeError as exc:  # decoded in blocks: line_num is not the byte's line
            raise ValueError(f"model_table: {not_utf8_row(path, exc)}") from None
    return table


def not_utf8_row(path: Path, exc: UnicodeDecodeError) -> str:
    """``{path}: line N: not a readable CSV row (not UTF-8 ...)``, N the line of the first bad
    byte (the CSV readers' message, one line)."""
    found = first_non_utf8(path)
    at, reason = (f"{path}: line {found[0]}", found[1]) if found else (f"{path}", exc.reason)
    return f"{at}: not a readable CSV row (not UTF-8 text: {reason}); save the file as UTF-8."


def find_beside(roots: Iterable[str | Path], name: str) -> list[Path]:
    """Every file called ``name`` inside a results folder or beside it, in the roots' order
    (each path once)."""
    found: dict[Path, None] = {}
    for root in map(Path, roots):
        for candidate in (root / name, root.parent / name):
            if candidate.is_file():
                found.setdefault(candidate, None)
    return list(found)


def model_table_paths(roots: Iterable[str | Path], given: str | Path | None) -> list[Path]:
    """The model tables a set of results reads: the one named, else those found."""
    return [Path(given)] if given else find_beside(roots, MODEL_TABLE_FILE)


def read_model_tables(
    roots: Iterable[str | Path], given: str | Path | None = None
) -> dict[str, dict[str, str]]:
    """The model facts of a set of results folders: the rows of the table named (``given``),
    else of every table found in or beside the folders (later folders' rows win).

    Raises:
        ValueError: the named table is unreadable (the message names ``model_table``). A table
            found beside the results that cannot be read is left out: ``scan_results`` lists it
            among the skipped files.
    """
    table: dict[str, dict[str, str]] = {}
    for path in model_table_paths(roots, given):
        if given is not None and not path.is_file():
            raise ValueError(f"model_table: {path} is not a file; pass a {MODEL_TABLE_FILE}.")
        try:
            table.update(read_model_table(path))
        except (OSError, ValueError):
            if given is not None:
                raise
    return table


def model_name(folder: Path, meta: Mapping[str, Any] | None, table: Mapping[str, str]) -> str:
    """A model folder's model id: ``model_meta.json``'s ``name``, else the model table's id
    for the folder, else the folder name with ``__`` read as ``/``. (What prints it makes it
    safe to show; a model card, where it heads the card, also wants one line.)"""
    name = (meta or {}).get("name")
    if isinstance(name, str) and name:
        return name
    return table.get(folder.name) or folder.name.replace("__", "/")


@dataclass(frozen=True)
class MtebInput:
    """The MTEB(eng, v1) scores a comparison uses, and where they came from.

    Args:
        scores: the scores (``None``: none were found, or ``problem`` says why not read).
        path: the CSV read.
        folders: MTEB results folders whose models were added.
        problem: why a CSV found beside the results was not read.
    """

    scores: MtebScores | None
    path: Path | None = None
    folders: tuple[Path, ...] = ()
    problem: str = ""


def resolve_mteb_scores(
    roots: Sequence[str | Path],
    given: str | Path | None = None,
    folders: Sequence[str | Path] = (),
    *,
    scores_arg: str = "--mteb-scores",
    folders_arg: str = "--mteb-results",
) -> MtebInput:
    """The MTEB(eng, v1) scores for a set of results: the CSV named (``given``), else the
    ``mteb_eng_v1_scores.csv`` found in or beside a results folder, plus the models of MTEB
    results ``folders`` (MTEB's layout).

    Raises:
        ValueError: naming ``scores_arg`` or ``folders_arg``: the named CSV is not there or not
            readable, a folder is not one, or folders are given without any scores CSV (it holds
            the task list and types they are read against).
    """
    if given is not None and not Path(given).is_file():
        raise ValueError(f"{scores_arg}: {given} is not a file; pass {MTEB_SCORES_FILE}'s path.")
    candidates = [Path(given)] if given is not None else find_beside(roots, MTEB_SCORES_FILE)
    odd = [p for r in map(Path, roots) for p in (r / MTEB_SCORES_FILE, r.parent / MTEB_SCORES_FILE)]
    odd = [p for p in odd if p.exists() and not p.is_file()]
    if not candidates and odd:  # a folder, a FIFO or a device by that name: said, never read
        return MtebInput(None, odd[0], problem=f"{odd[0]} is not a regular file")
    if not candidates:
        if folders:
            raise ValueError(
                f"{folders_arg}: needs the MTEB(eng, v1) scores too (their task list and "
                f"types); pass {scores_arg} {MTEB_SCORES_FILE}."
            )
        return MtebInput(None)
    for folder in folders:
        if not Path(folder).is_dir():
            raise ValueError(f"{folders_arg}: {folder} is not a folder.")
    from .domains import read_mteb_csv, read_mteb_folder

    found = candidates[0]
    try:
        mteb = read_mteb_csv(found)
    except (OSError, ValueError) as exc:
        if given is not None:  # asked for by name: say so before any work
            raise ValueError(f"{scores_arg}: {exc}") from None
        return MtebInput(None, found, problem=str(exc))
    if not mteb.scores:
        problem = f"{found} holds no scores (its header only?)"
        if given is not None:
            raise ValueError(f"{scores_arg}: {problem}.")
        return MtebInput(None, found, problem=problem)
    for folder in folders:
        mteb = read_mteb_folder(folder, mteb)
    return MtebInput(mteb, found, tuple(map(Path, folders)))
