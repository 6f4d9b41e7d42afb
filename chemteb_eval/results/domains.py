"""ChemTEB against general-domain MTEB, per task type (the ChemTEB paper's Figure 3): does a
model's MTEB rank carry over to chemistry?

Per task type present in both benchmarks (classification, clustering, pair classification,
retrieval), each model's mean over the type's tasks on each side, Spearman's rho between the two
rankings with a bootstrap interval over models, and the models that gain or lose most ranks.
Like is compared with like: the ChemTEB side uses the metric MTEB's English leaderboard shows for
the type (``AXIS_METRICS``: accuracy, V-measure, AP, nDCG@10), not the paper's ranking metric.

A model is plotted for a type only with every ChemTEB task of the type and at least
``min_mteb_coverage`` of the MTEB tasks of the type (default all of them); the others are listed
with what they lack, never plotted with a silently partial mean.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import Benchmark, benchmark_tasks
from chemteb_eval.tasks.kinds import kind as task_kind

from .correlations import spearman, spearman_rows
from .inputs import not_utf8_row
from .ranking import ModelResults, scan_results

__all__ = [
    "AXIS_METRICS",
    "DOMAIN_TYPES",
    "DomainComparison",
    "MtebScores",
    "check_mteb_score",
    "compare_domains",
    "read_mteb_csv",
    "read_mteb_folder",
]

DOMAIN_TYPES = ("Classification", "Clustering", "PairClassification", "Retrieval")
# The metric each axis shows, per type: MTEB(eng, v1)'s main scores (its leaderboard's metrics).
AXIS_METRICS: dict[str, str] = {t: str(task_kind(t).mteb_metric) for t in DOMAIN_TYPES}


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


@dataclass
class DomainComparison:
    """One task type's comparison."""

    kind: str
    metric: str
    points: dict[str, tuple[float, float]]  # model -> (MTEB mean, ChemTEB mean)
    rho: float | None
    interval: tuple[float, float] | None
    rank_changes: list[tuple[str, int, int]]  # (model, MTEB rank, ChemTEB rank), by change
    excluded: dict[str, str]  # model -> what it lacks
    n_mteb_tasks: int
    n_chemteb_tasks: int
    n_mteb_needed: int  # MTEB tasks of the type a model needs to be plotted

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.kind,
            "metric": self.metric,
            "n_mteb_tasks": self.n_mteb_tasks,
            "n_chemteb_tasks": self.n_chemteb_tasks,
            "n_mteb_needed": self.n_mteb_needed,
            "points": {m: {"mteb": a, "chemteb": b} for m, (a, b) in self.points.items()},
            "spearman": self.rho,
            "spearman_interval": list(self.interval) if self.interval else None,
            "rank_changes": [
                {"model": m, "mteb_rank": a, "chemteb_rank": b} for m, a, b in self.rank_changes
            ],
            "excluded": self.excluded,
        }


def compare_domains(
    models: Iterable[ModelResults],
    bench: Benchmark,
    mteb: MtebScores,
    *,
    min_mteb_coverage: float = 1.0,
    resamples: int = 1000,
    seed: int = 0,
    types: Iterable[str] = DOMAIN_TYPES,
) -> list[DomainComparison]:
    """Per type in ``DOMAIN_TYPES`` that ``bench`` has: the points, Spearman's rho with a 95%
    percentile bootstrap interval over models (resampled with replacement; resamples where a
    side is constant are left out), the rank changes (largest first) and the excluded models.
    ``types`` narrows the types computed (the Space draws one at a time)."""
    if not 0 < min_mteb_coverage <= 1:
        raise ValueError(f"min_mteb_coverage: must be in (0, 1], got {min_mteb_coverage}.")
    models = list(models)
    tasks = benchmark_tasks(bench)
    out = []
    chosen = set(types)
    for kind in (k for k in DOMAIN_TYPES if k in chosen):
        chem_tasks = [t.name for t in tasks if t.type == kind]
        mteb_tasks = mteb.tasks_of(kind)
        if not chem_tasks or not mteb_tasks:
            continue
        metric = AXIS_METRICS[kind]
        need = math.ceil(min_mteb_coverage * len(mteb_tasks))
        points, excluded = {}, {}
        for model in models:
            chem = [model.details.get(t, {}).get(metric) for t in chem_tasks]
            general = [mteb.scores.get(model.model, {}).get(t) for t in mteb_tasks]
            have_general = [g for g in general if g is not None]
            if any(c is None for c in chem):
                excluded[model.model] = (
                    f"{sum(c is None for c in chem)} of {len(chem_tasks)} ChemTEB {kind} tasks "
                    f"without {metric}"
                )
            elif len(have_general) < need:
                excluded[model.model] = (
                    f"{len(have_general)} of {len(mteb_tasks)} MTEB {kind} tasks (needs {need})"
                )
            else:
                points[model.model] = (
                    float(np.mean(have_general)),
                    float(np.mean([c for c in chem if c is not None])),
                )
        out.append(
            _one_type(
                kind,
                metric,
                points,
                excluded,
                (len(mteb_tasks), len(chem_tasks), need),
                resamples,
                seed,
            )
        )
    return out


def _one_type(
    kind: str,
    metric: str,
    points: dict[str, tuple[float, float]],
    excluded: dict[str, str],
    counts: tuple[int, int, int],
    resamples: int,
    seed: int,
) -> DomainComparison:
    rho, interval = None, None
    if len(points) >= 3:
        x = np.array([p[0] for p in points.values()])
        y = np.array([p[1] for p in points.values()])
        rho = spearman(x, y)
        idx = np.random.default_rng(seed).integers(0, len(x), (resamples, len(x)))
        draws = spearman_rows(x[idx], y[idx])
        kept = draws[~np.isnan(draws)]
        if kept.size:
            low, high = np.quantile(kept, [0.025, 0.975])
            interval = (float(low), float(high))
    general = competition_ranks({m: p[0] for m, p in points.items()})
    chem = competition_ranks({m: p[1] for m, p in points.items()})
    changes = sorted(
        ((m, general[m], chem[m]) for m in points),
        key=lambda r: (-abs(r[1] - r[2]), r[0]),
    )
    return DomainComparison(kind, metric, points, rho, interval, changes, excluded, *counts)
