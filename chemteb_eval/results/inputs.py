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
from collections.abc import Iterable
from pathlib import Path

from chemteb_eval._files import first_non_utf8

__all__ = [
    "MODEL_TABLE_FILE",
    "find_beside",
    "model_table_paths",
    "not_utf8_row",
    "read_model_table",
    "read_model_tables",
]

MODEL_TABLE_FILE = "paper_models.csv"  # results_dir, model_id and the model facts
# (mteb_eng_v1_scores.csv, the MTEB scores, is found by the same rule: ``mteb_scores``)


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
