"""The tables ``chemteb`` prints, beside what they render: a ranking (``ranking.RankedModel``
rows), the quality-cost frontier (``frontier.FrontierRow`` rows) and a run's tasks. Each table
is its lines, untrusted text made safe for a terminal (``markup.shown``); the CLI prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from chemteb_eval import tasks

from .markup import shown

if TYPE_CHECKING:
    from .ranking import RankedModel

__all__ = ["cut_shares", "frontier_table", "rank_json", "ranking_table", "run_tasks_table"]


def run_tasks_table(
    statuses: Mapping[str, str],
    main_scores: Mapping[str, float],
    truncation: Mapping[str, Any],
) -> list[str]:
    """A run's task table: status, main score and the largest share of one side's texts the
    model cut; then a note for each task where that share is over a tenth."""
    from .frontier import cut_cell, truncation_note, truncation_share

    # skipped tasks show the score their stored file holds; failed ones said why as they failed
    width = max([44, *map(len, statuses)])
    shares = {n: truncation_share(truncation.get(n)) for n in statuses}
    # the column where it says something: a share measured for some task
    measured = any(isinstance(share, tuple) for share in shares.values())
    lines = [f"\n{'task':<{width}} {'status':<8} main score" + (f" {'cut':>7}" if measured else "")]
    for name, status in statuses.items():
        score = main_scores.get(name)
        share = shares[name]
        number = "" if score is None else f"{score:.4f}"
        cut = f" {cut_cell(share[0] if isinstance(share, tuple) else share):>7}"
        lines.append(f"{name:<{width}} {status:<8} {number:>10}{cut if measured else ''}".rstrip())
    if not measured and any(share == "unknown" for share in shares.values()):
        lines.append(
            "\nTexts cut at the model's max tokens: unknown (its backend cannot count tokens)."
        )
    for name in statuses:
        note = truncation_note(name, truncation.get(name))
        if note:
            lines.append(f"[note] {shown(note)}")
    return lines


def frontier_table(bench: Any, rows: Sequence[Any], size: str = "vector") -> list[str]:
    """``rank --frontier``'s table: one row per model and variant, its Pareto marks (``size``:
    smaller by bytes per ``"vector"`` or by the whole ``"index"``), and a note for the rows
    whose interval holds some tasks at their score."""
    from .frontier import cut_cell

    n = len(tasks.benchmark_tasks(bench))
    names = [shown(r.model) for r in rows]
    width = max([5, *map(len, names)])
    head = (
        f"   {'model':<{width}} {'mean':>7} {'95% interval':>13} {'rank':>5} "
        f"{'bytes/vec':>9} {'index':>9} {'texts/s':>8} {'cut':>7}"
    )
    lines = [
        f"{bench.name}: quality (mean main score over its {n} task{'' if n == 1 else 's'}; "
        "interval: the items of "
        "each task whose score is a mean of items resampled) against cost. Pareto: S = no row "
        f"is as good and {'smaller' if size == 'vector' else 'with a smaller index'}, F = none "
        f"as good and faster.\n{head}\n{'-' * len(head)}"
    ]
    for r, name in zip(rows, names, strict=True):
        mark = ("S" if r.pareto_size else " ") + ("F" if r.pareto_speed else " ") + " "
        mean = f"{r.score:.4f}" if r.score is not None else "-"
        ci = f"{r.interval[0]:.4f}-{r.interval[1]:.4f}" if r.interval else "-"
        rank = f"{r.rank_interval[0]}-{r.rank_interval[1]}" if r.rank_interval else "-"
        size = f"{r.bytes_per_vector:,}" if r.bytes_per_vector else "-"
        index = _bytes(r.index_bytes) if r.index_bytes is not None else "-"
        speed = f"{r.texts_per_second:,.0f}" if r.texts_per_second else "-"
        cut = cut_cell(r.truncated) or "-"
        lines.append(
            f"{mark}{name:<{width}} {mean:>7} {ci:>13} {rank:>5} {size:>9} {index:>9} "
            f"{speed:>8} {cut:>7}"
        )
    held: dict[tuple[str, ...], list[str]] = {}
    for r, name in zip(rows, names, strict=True):
        if r.score is not None and r.fixed_tasks:
            held.setdefault(r.fixed_tasks, []).append(name)
    for fixed, who in held.items():
        whom = "every row" if len(who) == len(rows) else ", ".join(who)
        lines.append(
            f"[note] the interval of {whom} holds {', '.join(map(shown, fixed))} at its score "
            "(not a mean of items, or no items recorded)."
        )
    return lines


def _bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def rank_json(
    rows: list[RankedModel],
    by_mean: bool,
    intervals: dict[str, Any] | None = None,
    cut: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``rank --json``'s rows: "mean" (over tasks) where it orders the ranking (RRF benchmarks
    rank by "rrf"); an incomplete model's mean over the tasks it has is no benchmark mean:
    null, as the table shows it; with ``--ci`` each row's "rank_interval"; "cut", the largest
    share of one side's texts the model cut (null: not measured)."""
    out = []
    for r in rows:
        row = {k: (None if k == "mean" and not r.complete else v) for k, v in r.to_dict().items()}
        if intervals is not None:
            row["rank_interval"] = intervals.get(r.model)
        if cut is not None:  # the largest share of one side's texts cut ("unknown": an API)
            row["cut"] = cut.get(r.model)
        out.append({k: v for k, v in row.items() if by_mean or k != "mean"})
    return out


def cut_shares(models: list[Any], bench: Any) -> dict[str, float | str | None]:
    """Each model's largest share of one side's texts cut over the benchmark's tasks."""
    from .frontier import truncated_share

    names = [t.name for t in tasks.benchmark_tasks(bench)]
    return {m.model: truncated_share(m, names) for m in models}


def ranking_table(
    bench: Any,
    rows: list[RankedModel],
    intervals: dict[str, Any] | None = None,
    cut: dict[str, Any] | None = None,
    badges: dict[str, str] | None = None,
) -> list[str]:
    """The ranking table: names whole (the column is as wide as the longest), each type's
    column headed by its full label, and for a benchmark ranked by the mean over tasks that
    mean, the column its order comes from; ``badges``: a note at the end of a row (BM25's
    ``[BM25 reference]``)."""
    from .frontier import cut_cell

    types = [t for t in tasks.TASK_TYPES if any(_has_type(r, t) for r in rows)]
    label = {name: k.label for name, k in tasks.KINDS.items()}
    width = {t: max(13, len(label[t])) for t in types}
    names = {id(r): shown(r.model) for r in rows}
    name_width = max([5, *map(len, names.values())])
    by_mean = bench.aggregation.kind == "mean"
    n_tasks = len(tasks.benchmark_tasks(bench))
    order = (
        f"the mean over its {n_tasks} tasks"
        if by_mean
        else f"Reciprocal Rank Fusion over task types (k = {bench.aggregation.rrf_k or 10})"
    )
    mean_head = f" {'Mean':>7}" if by_mean else ""
    # the Cut column where it says something: a share of texts cut measured for some model
    measured = any(isinstance(share, float) for share in (cut or {}).values())
    head = (
        f"{'rank':>4} {'model':<{name_width}}{mean_head} {'RRF':>6} {'Borda':>6} "
        + " ".join(f"{label[t]:>{width[t]}}" for t in types)
        + (f" {'Cut':>7}" if measured else "")
    ).rstrip()
    lines = [
        f"{bench.name}: {len(rows)} model{'' if len(rows) == 1 else 's'}, ranked by {order}. "
        "Per type: mean main score (rank)."
        f"\n{head}\n{'-' * len(head)}"
    ]
    for r in rows:
        cells = " ".join(
            f"{_type_cell(r, t):>{width[t]}}"
            if t in r.means
            else f"{r.type_coverage.get(t, '-'):>{width[t]}}"  # a type's mean needs all its tasks
            for t in types
        )
        rank = "-" if r.rank is None else str(r.rank)
        note = "" if r.complete else f"  incomplete {r.coverage}"
        if r.model in (badges or {}):
            note += f"  [{(badges or {})[r.model]}]"
        ci = (intervals or {}).get(r.model)
        if ci:
            note += f"  95% rank {ci['rank_low']}-{ci['rank_high']}" + (
                "  ~#1" if ci["tied_with_top"] else ""
            )
        mean = ""
        if by_mean:
            mean = f" {'-':>7}" if r.mean is None or not r.complete else f" {r.mean:>7.4f}"
        share = f" {cut_cell((cut or {}).get(r.model)) or '-':>7}" if measured else ""
        # an incomplete row has neither (ranking.rank_models): "-", as its rank and mean
        rrf = "-" if r.rrf is None else f"{r.rrf:.3f}"
        borda = "-" if r.borda is None else str(r.borda)
        line = f"{rank:>4} {names[id(r)]:<{name_width}}{mean} {rrf:>6} {borda:>6} {cells}{share}"
        lines.append(line.rstrip() + note)
    if any(t not in r.means and _has_type(r, t) for r in rows for t in types):
        lines.append(
            "n/N: the model has n of the type's N tasks; a mean over some of them is no mean of "
            "the type, so none is shown or ranked."
        )
    return lines


def _has_type(row: RankedModel, task_type: str) -> bool:
    """Whether the row has a score on any task of ``task_type``."""
    return task_type in row.means or not row.type_coverage.get(task_type, "0/0").startswith("0/")


def _type_cell(row: RankedModel, task_type: str) -> str:
    return f"{row.means[task_type]:.4f} ({row.ranks[task_type]:>2})"
