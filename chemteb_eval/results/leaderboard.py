"""Leaderboard tables built once from result folders: what the Space and CSV downloads show.

Plain rows (lists of dicts with display headers) so the library stays free of pandas; the Space
turns them into styled DataFrames. Ranking itself is ``ranking.rank_models``: nothing here ranks
models on its own beyond the Borda rank (a competition rank of the Borda points).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemteb_eval.scoring.uncertainty import competition_ranks
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, main_score
from chemteb_eval.tasks.kinds import KINDS, TASK_TYPES

from .board import DETAIL_KEYS, ModelResults, read_results
from .diagnostics import board_row, chemistry_rows
from .frontier import FrontierRow, cut_cell, frontier, truncated_share
from .inputs import read_model_table
from .lexical import REFERENCE_BADGE, Verdict, is_reference, retrieval_part, versus_bm25
from .model_folder import ScannedModel
from .ranking import RankedModel, rank_models, rank_uncertainty, task_interval

__all__ = [
    "SIZE_BUCKETS",
    "Leaderboard",
    "ModelFacts",
    "build_leaderboard",
    "filter_rows",
    "model_facts",
    "pareto_front",
    "parse_parameters",
    "read_model_table",
    "size_bucket",
    "task_size",
]

SIZE_BUCKETS = ("< 100M", "100M-500M", "≥ 500M", "unknown")
TYPE_LABELS: Mapping[str, str] = {name: k.label for name, k in KINDS.items()}
# The paper's result files beside this file were timed on one V100 (the shared README says so).
_PAPER_TIMING = "paper_timing_v100.csv"
_PAPER_HARDWARE = "one NVIDIA V100 GPU (the paper's runs)"


@dataclass(frozen=True)
class ModelFacts:
    """What the leaderboard shows about a model besides its scores.

    Args:
        model: the model id.
        display_name: a friendlier name (the paper's), if any.
        n_parameters: parameters, if known.
        embedding_dim: output dimension, if known.
        max_tokens: the longest input, if known.
        open_weights: ``True`` open, ``False`` proprietary, ``None`` unknown.
        family: the model family (``BGE``, ``E5``, ...); the org of the id when unknown.
        hardware: where its result files were timed, if known.
        reference: the badge of a reference row (``results.lexical``: BM25), else ``None``.
    """

    model: str
    display_name: str | None = None
    n_parameters: int | None = None
    embedding_dim: int | None = None
    max_tokens: int | None = None
    open_weights: bool | None = None
    family: str = "other"
    hardware: str | None = None
    # a reference row's badge (BM25's: "BM25 reference"); such a row no filter hides
    reference: str | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("model: facts need a model id.")
        for name in ("n_parameters", "embedding_dim", "max_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name}: must be positive or None, got {value}.")


_UNITS = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9}


def parse_parameters(text: str | int | float | None) -> int | None:
    """``"109.4 M"`` -> 109400000; ``"N/A"``, ``""`` and ``None`` -> ``None``.

    Raises:
        ValueError: for text that is neither a count nor a marked unknown.
    """
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return int(text) if text > 0 else None
    cleaned = text.strip().replace(",", "")
    if cleaned.upper() in {"", "N/A", "NA", "NONE", "UNKNOWN", "-"}:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMBG]?)", cleaned, flags=re.IGNORECASE)
    if not match:
        raise ValueError(f"parameters: {text!r} is not a count like '109.4 M' or 'N/A'.")
    return round(float(match.group(1)) * _UNITS[match.group(2).upper()])


def _int_or_none(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    text = str(value).strip()
    if len(text) > 15:  # no model has 10**15 parameters or dimensions; int() of 400 digits
        return None  # would be fine, but rounding it to millions raises OverflowError
    try:
        number = int(text)
    except ValueError:
        return None
    return number if number > 0 else None


def _bool_or_none(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(text)


def size_bucket(n_parameters: int | None) -> str:
    """One of ``SIZE_BUCKETS``."""
    if n_parameters is None:
        return SIZE_BUCKETS[3]
    if n_parameters < 100_000_000:
        return SIZE_BUCKETS[0]
    if n_parameters < 500_000_000:
        return SIZE_BUCKETS[1]
    return SIZE_BUCKETS[2]


def _describe_hardware(hardware: Any) -> str | None:
    """A run record's ``hardware`` as the efficiency view labels it."""
    if not isinstance(hardware, dict):
        return None
    if hardware.get("cuda"):
        count = hardware.get("gpu_count")
        return f"{hardware['cuda']}" + (
            f" x{count}" if isinstance(count, int) and count > 1 else ""
        )
    if hardware.get("cpus"):
        model = hardware.get("cpu")
        return f"{model + ' ' if isinstance(model, str) and model else ''}CPU ({hardware['cpus']} cores)"
    return None


def _hardware(result: ModelResults) -> str | None:
    found = _describe_hardware(result.run_meta.get("hardware"))
    if found is not None:
        return found
    if (result.folder.parent.parent / _PAPER_TIMING).is_file():
        return _PAPER_HARDWARE
    return None


def task_hardware(result: ModelResults, task: str) -> str | None:
    """The hardware that timed ``task``'s file: its run's record (``chemteb_run_id`` ->
    ``runs.jsonl``); for files from before runs were logged, the folder's latest record
    (``results.runs.latest_run``, or its legacy ``run_meta.json``)."""
    file = result.files.get(task)
    run_id = file.extra.get("chemteb_run_id") if file is not None else None
    record = result.runs.get(run_id) if isinstance(run_id, str) else None
    if record is not None:
        return _describe_hardware(record.get("hardware"))
    return _hardware(result)


def model_facts(result: ModelResults, table: Mapping[str, Mapping[str, str]]) -> ModelFacts:
    """Facts from the folder's ``model_meta.json`` (ours or MTEB's), else from the model table."""
    meta = result.meta
    row = table.get(result.model) or table.get(result.folder.name) or {}
    n_parameters = _int_or_none(meta.get("n_parameters"))
    if n_parameters is None and row:
        try:
            n_parameters = parse_parameters(row.get("parameters"))
        except ValueError:
            n_parameters = None
    embedding_dim = _int_or_none(meta.get("embedding_dim", meta.get("embed_dim")))
    max_tokens = _int_or_none(meta.get("max_tokens"))
    open_weights = _bool_or_none(meta.get("open_weights")) if "open_weights" in meta else None
    # the id's organisation; a name told apart ("final [results/final-3fa]") by its own part
    base = re.sub(r" \[[^\]]*\]$", "", result.model)
    family = row.get("family") or (base.split("/")[0] if "/" in base else "other")
    return ModelFacts(
        model=result.model,
        display_name=row.get("paper_name") or None,
        n_parameters=n_parameters,
        embedding_dim=embedding_dim or _int_or_none(row.get("embedding_dim")),
        max_tokens=max_tokens or _int_or_none(row.get("context_length")),
        open_weights=open_weights
        if open_weights is not None
        else _bool_or_none(row.get("open_source")),
        family=family,
        hardware=_hardware(result),
        reference=REFERENCE_BADGE if is_reference(result) else None,
    )


def task_size(task: Task) -> int | None:
    """Samples in a task as its reference states them: ``n_samples``, else the ``n=`` of its
    scored splits (plus the training split of a classification task), else ``None``."""
    if task.n_samples is not None:
        return task.n_samples
    splits = [*task.eval_splits, *([task.train_split] if task.train_split else [])]
    total = 0
    for split in splits:
        match = re.search(r"\bn=(\d+)", task.split_sizes.get(split, ""))
        if match is None:
            return None
        total += int(match.group(1))
    return total


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """Which points no other point beats on both axes (higher x and higher y are better).

    A point is dominated when another is at least as good on both axes and better on one.
    """
    flags = []
    for i, (x, y) in enumerate(points):
        dominated = any(
            (ox >= x and oy >= y) and (ox > x or oy > y)
            for j, (ox, oy) in enumerate(points)
            if j != i
        )
        flags.append(not dominated)
    return flags


@dataclass
class Leaderboard:
    """Every table and plot input of one benchmark, computed once.

    ``overall``, ``by_type[type]`` and ``per_task[task]`` are rows with display headers (the
    CSV downloads' columns); ``facts`` keys the model facts by model id; ``notices`` lists the
    files that were skipped and why.
    """

    benchmark: Benchmark
    tasks: list[Task]
    types: list[str]
    overall: list[dict[str, Any]] = field(default_factory=list)
    by_type: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    per_task: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    facts: dict[str, ModelFacts] = field(default_factory=dict)
    efficiency: list[dict[str, Any]] = field(default_factory=list)
    # quality against cost, per model and variant (results.frontier): the Frontier tab
    frontier: list[dict[str, Any]] = field(default_factory=list)
    # with a BM25 row (results.lexical): each row against it per retrieval task, and the
    # frontier of the retrieval tasks by index size: the "Versus BM25" tab
    versus: list[dict[str, Any]] = field(default_factory=list)
    lexical_frontier: list[dict[str, Any]] = field(default_factory=list)
    # each model's tokenization of chemical strings beside its mean (results.diagnostics)
    tokenization: list[dict[str, Any]] = field(default_factory=list)
    scores: list[dict[str, Any]] = field(default_factory=list)  # long: model, family, type, task
    notices: list[str] = field(default_factory=list)  # skipped files, with the reason
    notes: list[str] = field(default_factory=list)  # e.g. folders naming one model, told apart
    revision_note: str = ""
    models: list[ModelResults] = field(default_factory=list)  # those with scores, as read

    def column(self, task: Task) -> str:
        """A task's column header: its name and the metric that scores it."""
        return f"{task.name} [{main_score(self.benchmark, task)}]"


def build_leaderboard(
    results: Iterable[str | Path] | list[ScannedModel],
    bench: Benchmark,
    *,
    model_table: Mapping[str, Mapping[str, str]] | None = None,
) -> Leaderboard:
    """All the leaderboard's tables for one benchmark.

    Args:
        results: result folders, or ``scan_results``'s output for them (parse once, score many).
        bench: the benchmark.
        model_table: rows of ``read_model_table`` (facts for models without ``model_meta.json``).

    Returns:
        The ``Leaderboard``.
    """
    models = read_results(results, bench)
    tasks = benchmark_tasks(bench)
    board = Leaderboard(
        benchmark=bench,
        tasks=tasks,
        types=[t for t in TASK_TYPES if any(task.type == t for task in tasks)],
    )
    _add_facts(board, models, model_table or {})
    models = [m for m in models if m.scores]  # folders without this benchmark's tasks
    board.models = models
    if not models:
        return board
    ranked = rank_models(models, bench)
    by_model = {m.model: m for m in models}
    # only a complete row has Borda points (ranking.rank_models)
    borda_rank = competition_ranks({r.model: float(r.borda) for r in ranked if r.borda is not None})
    intervals = rank_uncertainty(models, bench)
    names = [t.name for t in tasks]
    for r in ranked:
        row = _overall_row(r, board, borda_rank, intervals.get(r.model))
        row["Cut"] = cut_cell(truncated_share(by_model[r.model], names))
        board.overall.append(row)
        board.efficiency.extend(_efficiency_entries(r, row, by_model[r.model], board))
    # Speeds are comparable on the same hardware only: one Pareto front per hardware.
    for hardware in {e["Hardware"] for e in board.efficiency}:
        group = [e for e in board.efficiency if e["Hardware"] == hardware]
        front = pareto_front([(e["Samples/s"], e["RRF"]) for e in group])
        for entry, on_front in zip(group, front, strict=True):
            entry["Pareto"] = on_front
    for t in board.types:
        board.by_type[t] = _type_rows(t, ranked, by_model, board)
    for task in tasks:
        board.per_task[task.name] = _task_rows(task, models, board)
    board.frontier = [_frontier_row(f) for f in frontier(models, bench, intervals)]
    _add_lexical(board, models)
    board.tokenization = [board_row(r) for r in chemistry_rows(models, bench)]
    for m in models:  # evidence files refused while the intervals were computed
        board.notices.extend(s for s in m.skipped if s not in board.notices)
    return board


def _add_lexical(board: Leaderboard, models: list[ModelResults]) -> None:
    """With BM25 among the rows: its badge in the overall table ("Reference", after "Model"),
    each row's verdicts against it, and the retrieval part's frontier by index size."""
    if not any(f.reference for f in board.facts.values()):
        return
    board.overall = [
        {
            **{k: v for k, v in row.items() if k in ("Rank", "Model")},
            "Reference": board.facts[row["Model"]].reference or "",
            **row,
        }
        for row in board.overall
    ]
    board.versus = [_versus_row(v) for v in versus_bm25(models, board.benchmark)]
    part = retrieval_part(board.benchmark)
    if part is not None:
        found = frontier(models, part, rank_uncertainty(models, part), size="index")
        board.lexical_frontier = [_frontier_row(f) for f in found]


def _versus_row(v: Verdict) -> dict[str, Any]:
    """A verdict as the "Versus BM25" tab's table and CSV show it."""
    interval = f"{v.low:.4f}-{v.high:.4f}" if v.low is not None and v.high is not None else ""
    return {
        "Task": v.task,
        "Model": v.model,
        "Score": v.score,
        "Versus": v.against,
        "Their score": v.other,
        "Difference": v.difference,
        "95% CI": interval,
        "Verdict": v.verdict if not v.why else f"{v.verdict}: {v.why}",
    }


def _frontier_row(r: FrontierRow) -> dict[str, Any]:
    """A frontier row as the Frontier tab's table and CSV show it."""
    return {
        "Model": r.model,
        "Mean": r.score,
        "95% CI": f"{r.interval[0]:.4f}-{r.interval[1]:.4f}" if r.interval else "",
        "Rank 95%": f"{r.rank_interval[0]}-{r.rank_interval[1]}" if r.rank_interval else "",
        "Dim": r.dim,
        "Precision": r.precision or "",
        "Bytes/vector": r.bytes_per_vector,
        "Index (MB)": None if r.index_bytes is None else r.index_bytes / 1e6,
        "Texts/s": r.texts_per_second,
        "Cut": cut_cell(r.truncated),
        "Pareto (size)": "yes" if r.pareto_size else "",
        "Pareto (speed)": "yes" if r.pareto_speed else "",
    }


def _add_facts(
    board: Leaderboard, models: list[ModelResults], table: Mapping[str, Mapping[str, str]]
) -> None:
    mismatched = []
    for m in models:
        board.facts[m.model] = model_facts(m, table)
        board.notices.extend(m.skipped)
        board.notes.extend(n for n in m.notes if n not in board.notes)
        if m.revision_mismatches:
            mismatched.append(m.model)
    if mismatched:
        board.revision_note = (
            f"{len(mismatched)} of {len(models)} models have result files at dataset revisions "
            f"other than {board.benchmark.name}'s pinned ones (published results often are); "
            "their scores are shown as recorded."
        )


def _overall_row(
    r: RankedModel,
    board: Leaderboard,
    borda_rank: dict[str, int],
    interval: Mapping[str, Any] | None,
) -> dict[str, Any]:
    facts = board.facts[r.model]
    row: dict[str, Any] = {
        "Rank": r.rank,
        "Model": r.model,
        "RRF": r.rrf,  # None for an incomplete row, as its Borda (ranking.rank_models)
        "Borda rank": borda_rank.get(r.model),
        # How sure the rank is: its 95% interval over task resamples, and the models that
        # rank first often enough to be not separable from the top (docs/uncertainty.md).
        "Rank 95%": f"{interval['rank_low']}-{interval['rank_high']}" if interval else None,
        "Tied with #1": "≈ #1" if interval and interval["tied_with_top"] else "",
        "Borda": r.borda,
        "Mean": r.mean if r.complete else None,
    }
    for t in board.types:
        row[TYPE_LABELS[t]] = r.means.get(t)
    row.update(
        {
            "Coverage": r.coverage,
            "Complete": r.complete,
            "Params (M)": None
            if facts.n_parameters is None
            else round(facts.n_parameters / 1e6, 1),
            "Dim": facts.embedding_dim,
            "Max tokens": facts.max_tokens,
            "Open": {True: "open", False: "proprietary", None: "unknown"}[facts.open_weights],
            "Family": facts.family,
            "Size": size_bucket(facts.n_parameters),
        }
    )
    return row


def _efficiency_entries(
    r: RankedModel, row: dict[str, Any], result: ModelResults, board: Leaderboard
) -> list[dict[str, Any]]:
    """Samples per second over the tasks whose size and time are both known (complete models):
    one entry per hardware the tasks were timed on (each result file names its run, and the
    run its hardware), so a model run on a GPU and later on a CPU is in both panels with the
    tasks each timed — never one speed mixing the two."""
    if not r.complete:
        return []
    by_hardware: dict[str, list[tuple[int, float]]] = {}
    for t in board.tasks:
        size = task_size(t)
        if t.name in result.seconds and size is not None:
            hardware = task_hardware(result, t.name) or "not recorded"
            by_hardware.setdefault(hardware, []).append((size, result.seconds[t.name]))
    facts = board.facts[r.model]
    return [
        {
            "Model": r.model,
            "Samples/s": sum(s for s, _ in sized) / sum(sec for _, sec in sized),
            "RRF": r.rrf,
            "Params (M)": row["Params (M)"],
            "Dim": facts.embedding_dim,
            "Hardware": hardware,
            "Open": row["Open"],
            "Timed tasks": len(sized),
        }
        for hardware, sized in sorted(by_hardware.items())
    ]


def _type_rows(
    t: str, ranked: list[RankedModel], by_model: dict[str, ModelResults], board: Leaderboard
) -> list[dict[str, Any]]:
    type_tasks = [task for task in board.tasks if task.type == t]
    rows = []
    for r in ranked:
        scores = by_model[r.model].scores
        row: dict[str, Any] = {
            "Rank": r.ranks.get(t) if r.complete else None,
            "Model": r.model,
            "Mean": r.means.get(t),
            "Coverage": f"{sum(x.name in scores for x in type_tasks)}/{len(type_tasks)}",
        }
        for task in type_tasks:
            row[board.column(task)] = scores.get(task.name)
        rows.append(row)
    rows.sort(key=lambda x: (x["Rank"] is None, x["Rank"] or 0, -(x["Mean"] or 0.0)))
    return rows


def _task_rows(task: Task, models: list[ModelResults], board: Leaderboard) -> list[dict[str, Any]]:
    """One task's table (and its points in ``board.scores``, for the distribution plot)."""
    key = main_score(board.benchmark, task)
    have = [m for m in models if task.name in m.scores]
    have.sort(key=lambda m: -m.scores[task.name])
    ranks = competition_ranks({m.model: m.scores[task.name] for m in have})
    rows = []
    for m in have:
        row = {"Rank": ranks[m.model], "Model": m.model, key: m.scores[task.name]}
        interval = task_interval(m, board.benchmark, task)
        # in every row, so the column is there whichever row is first (the Space takes its
        # columns from the first): empty where a model has no items
        row["95% CI"] = f"{interval[0]:.4f}-{interval[1]:.4f}" if interval is not None else ""
        for detail in DETAIL_KEYS[task.type]:
            if detail != key:
                row[detail] = m.details.get(task.name, {}).get(detail)
        row["Seconds"] = m.seconds.get(task.name)
        rows.append(row)
        board.scores.append(
            {
                "Model": m.model,
                "Family": board.facts[m.model].family,
                "Type": TYPE_LABELS[task.type],
                "Task": task.name,
                "Score": m.scores[task.name],
            }
        )
    if not any(r["95% CI"] for r in rows):  # no model has items: no column
        for row in rows:
            del row["95% CI"]
    return rows


def filter_rows(
    rows: Iterable[Mapping[str, Any]],
    facts: Mapping[str, ModelFacts],
    *,
    openness: str = "all",
    sizes: Sequence[str] = (),
    families: Sequence[str] = (),
    query: str = "",
) -> list[Mapping[str, Any]]:
    """The rows whose model passes the filters.

    Args:
        rows: rows with a ``Model`` key.
        facts: the models' facts.
        openness: ``all``, ``open`` or ``proprietary``.
        sizes: size buckets to keep (empty: all).
        families: families to keep (empty: all).
        query: case-insensitive text the model id or display name must contain.
    """
    if openness not in {"all", "open", "proprietary"}:
        raise ValueError(f"openness: {openness!r}; use 'all', 'open' or 'proprietary'.")
    wanted_open = {"all": None, "open": True, "proprietary": False}[openness]
    needle = query.strip().lower()
    kept = []
    for row in rows:
        f = facts.get(row["Model"]) or ModelFacts(model=row["Model"])
        if f.reference is not None:  # the reference row (BM25) is what the others are read by
            kept.append(row)
            continue
        if wanted_open is not None and f.open_weights is not wanted_open:
            continue
        if sizes and size_bucket(f.n_parameters) not in sizes:
            continue
        if families and f.family not in families:
            continue
        if (
            needle
            and needle not in f.model.lower()
            and needle not in (f.display_name or "").lower()
        ):
            continue
        kept.append(row)
    return kept
