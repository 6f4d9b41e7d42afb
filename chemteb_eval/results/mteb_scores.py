"""General-domain MTEB scores, the other side of ``compare-domains``: MTEB(eng, v1)'s scores
CSV, a user's MTEB results folders (MTEB's layout, read with the result-file reader), and the one
rule that finds them for a set of results (``resolve_mteb_scores``: the file named, else the one
in or beside a results folder; ``inputs.find_beside``).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval.tasks.kinds import KINDS

from .inputs import find_beside, not_utf8_row
from .scan import scan_results

__all__ = [
    "DOMAIN_TYPES",
    "MTEB_SCORES_FILE",
    "MtebInput",
    "MtebScores",
    "check_mteb_score",
    "read_mteb_csv",
    "read_mteb_folder",
    "resolve_mteb_scores",
]


# The task types ChemTEB and MTEB(eng, v1) share: the axes of the comparison (``TaskKind``).
DOMAIN_TYPES = tuple(k.name for k in KINDS.values() if k.chemteb and k.in_mteb_eng_v1)

MTEB_SCORES_FILE = "mteb_eng_v1_scores.csv"  # MTEB(eng, v1) scores: model_id, task, ...


@dataclass
class MtebScores:
    """General-domain MTEB scores: ``{model: {task: score}}`` and each task's type."""

    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    task_types: dict[str, str] = field(default_factory=dict)
    splits: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # files or scores left out, with the reason

    def tasks_of(self, kind: str) -> list[str]:
        return sorted(t for t, k in self.task_types.items() if k == kind)


# MTEB's result files hold main scores on a 0-1 scale (its leaderboard multiplies by 100 for
# display); every main score of the types compared here (accuracy, V-measure, AP, nDCG) is in it.
_SCORE_RANGE = (0.0, 1.0)


_MAX_FIELD = 4096  # the longest CSV field accepted: a task or model id is < 200 characters


def check_mteb_score(value: Any) -> float:
    """An MTEB main score as a float, or ``ValueError`` saying why not: a JSON ``true``, a
    string, NaN, infinity, a value outside 0-1 (a 0-100 scale is named as such)."""
    from .schema import real_number

    number = real_number(value)
    if number is None:
        raise ValueError(f"main_score {str(value)[:40]!r} is not a finite number")
    low, high = _SCORE_RANGE
    if not low <= number <= high:
        hint = " (a 0-100 scale? MTEB's files hold 0-1)" if 1 < number <= 100 else ""
        raise ValueError(f"main_score {number:g} is outside [{low:g}, {high:g}]{hint}")
    return number


def read_mteb_csv(path: str | Path) -> MtebScores:
    """``mteb_eng_v1_scores.csv`` (``model_id, task, task_type, split, main_score, ...``): one
    row per model and task; a row that is short, over-long, or not a score in 0-1 is an error
    naming its line."""
    out = MtebScores()
    seen: dict[tuple[str, str], tuple[int, float]] = {}  # (model, task) -> (line, score)
    types: dict[str, int] = {}  # task -> the line that gave its type
    with Path(path).open(encoding="utf-8-sig", newline="") as handle:  # Excel writes a BOM
        rows = csv.reader(handle)
        try:
            header = next(rows, [])
            missing = {"model_id", "task", "task_type", "main_score"} - set(header)
            if missing:
                raise ValueError(f"{path}: no column(s) {sorted(missing)}.")
            for row in rows:
                try:
                    _add_csv_row(out, header, row)
                    _check_consistent(out, header, row, rows.line_num, seen, types)
                except ValueError as exc:
                    raise ValueError(f"{path}: line {rows.line_num}: {exc}.") from None
        except csv.Error as exc:  # e.g. a field over csv's 131,072-character limit
            raise ValueError(
                f"{path}: line {rows.line_num}: not a readable CSV row ({exc})."
            ) from None
        except UnicodeDecodeError as exc:  # decoded in blocks: line_num is not the byte's line
            raise ValueError(not_utf8_row(Path(path), exc)) from None
    return out


def _add_csv_row(out: MtebScores, header: list[str], fields: list[str]) -> None:
    if not fields:
        return  # a blank line
    if len(fields) != len(header):
        raise ValueError(f"{len(fields)} fields where the header has {len(header)}")
    row = dict(zip(header, fields, strict=True))
    for key, value in row.items():
        if len(value) > _MAX_FIELD:
            raise ValueError(f"{key} is {len(value):,} characters long")
    for key in ("model_id", "task", "task_type"):
        if not row[key].strip():
            raise ValueError(f"{key} is empty")
    try:
        score = float(row["main_score"])
    except ValueError:
        raise ValueError(f"main_score {row['main_score'][:40]!r} is not a number") from None
    out.scores.setdefault(row["model_id"], {})[row["task"]] = check_mteb_score(score)
    out.task_types.setdefault(row["task"], row["task_type"])  # a conflict: _check_consistent
    out.splits[row["task"]] = row.get("split") or "test"


def _check_consistent(
    out: MtebScores,
    header: list[str],
    fields: list[str],
    line: int,
    seen: dict[tuple[str, str], tuple[int, float]],
    types: dict[str, int],
) -> None:
    """One row that contradicts another changes everyone's numbers: a second, different score
    for the same model and task (the last would win), or a task given another type (it would
    move for every model). Both are refused, naming the other line."""
    if not fields:
        return
    row = dict(zip(header, fields, strict=True))
    model, task, kind = row["model_id"], row["task"], row["task_type"]
    score = out.scores[model][task]
    if (model, task) in seen and seen[(model, task)][1] != score:
        raise ValueError(
            f"a second score for {model} on {task} ({score:g}; line {seen[(model, task)][0]} "
            f"says {seen[(model, task)][1]:g})"
        )
    seen.setdefault((model, task), (line, score))
    if task in types and out.task_types.get(task) != kind:
        raise ValueError(f"task {task} is {kind!r} here but another type on line {types[task]}")
    types.setdefault(task, line)
    spelled = {k.lower(): k for k in DOMAIN_TYPES}.get(kind.lower())
    if spelled is not None and spelled != kind:
        raise ValueError(f"task_type {kind!r}: MTEB spells it {spelled!r}")


# The English subset of a multilingual MTEB(eng, v1) task, as that benchmark selects it.
_ENGLISH_SUBSETS = ("default", "en", "en-en")


def read_mteb_folder(root: str | Path, reference: MtebScores) -> MtebScores:
    """A user's MTEB results folder (``<org__model>/<revision>/<Task>.json``, read with the
    result-file reader): the main score of each task ``reference`` knows, on its split and
    English subset, added to a copy of ``reference`` under the folder's model name."""
    out = MtebScores(
        {m: dict(s) for m, s in reference.scores.items()},
        dict(reference.task_types),
        dict(reference.splits),
        list(reference.skipped),
    )
    for model in scan_results([Path(root)]):
        out.skipped.extend(model.skipped)
        found: dict[str, float] = {}
        for file in model.files:  # oldest first: a newer file wins
            task = file.task_name
            if task not in reference.task_types:
                continue
            entries = {
                subset: entry
                for split, subset, entry in file.entries()
                if split == reference.splits.get(task, "test")
            }
            subset = next((s for s in _ENGLISH_SUBSETS if s in entries), None)
            if subset is None:
                out.skipped.append(
                    f"{file.path}: no English subset ({', '.join(_ENGLISH_SUBSETS)}) with a "
                    f"numeric main_score on {reference.splits.get(task, 'test')}; {task} left "
                    f"out for {model.name}"
                )
                continue
            try:
                found[task] = check_mteb_score(entries[subset].get("main_score"))
            except ValueError as exc:  # one bad file costs its task, not the comparison
                found.pop(task, None)
                out.skipped.append(f"{file.path}: {exc}; {task} left out for {model.name}")
        if found:  # added to what the CSV has for the model, a file's score winning
            out.scores.setdefault(model.name, {}).update(found)
    return out


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
