"""The paper's analysis views in the Space: ChemTEB against general-domain MTEB per task type
(the paper's Figure 3) and the correlation matrices across tasks and across models (Figures S2,
S3). The numbers come from ``chemteb_eval.results.domains`` and ``.correlations`` (the same
functions ``chemteb compare-domains`` and ``chemteb rank --correlations`` call); this module only
picks the models the filters keep, words the notes and draws.

Both are recomputed for the models the page's filters keep (rho over the open models, say):
the bootstrap and the matrices are vectorised, ~20 ms for the paper's 34 models.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from views import frame, md, md_code, plot_text

from chemteb_eval.results.board import ModelResults
from chemteb_eval.results.correlations import (
    Correlations,
    matrix_rows,
    model_correlations,
    task_correlations,
)
from chemteb_eval.results.domains import (
    AXIS_METRICS,
    DOMAIN_TYPES,
    DomainComparison,
    compare_domains,
)
from chemteb_eval.results.leaderboard import TYPE_LABELS, Leaderboard
from chemteb_eval.results.mteb_scores import MtebScores
from chemteb_eval.tasks import KINDS, main_score

DOMAIN_LABELS = tuple(TYPE_LABELS[t] for t in DOMAIN_TYPES)
MATRICES = (
    ("Across tasks (dataset × dataset)", "tasks"),
    ("Across models (model × model)", "models"),
)
METHODS = (("Spearman", "spearman"), ("Pearson", "pearson"))
_NAMES = {value: name for name, value in METHODS}
DOMAIN_COLUMNS = [
    "Model",
    "Family",
    "MTEB mean",
    "ChemTEB mean",
    "ChemTEB − MTEB",
    "MTEB rank",
    "ChemTEB rank",
    "Ranks gained",
]
N_LABELLED = 3  # the largest rank changes get a label on the plot


def _kept(board: Leaderboard, names: set[str]) -> list[ModelResults]:
    return [m for m in board.models if m.model in names]


def _type_of(label: str) -> str:
    return next((t for t in DOMAIN_TYPES if TYPE_LABELS[t] == label), DOMAIN_TYPES[0])


def _empty(title: str) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, height=420)
    return fig


# ---------------------------------------------------------------------------------------------
# ChemTEB vs MTEB


def domain_view(
    board: Leaderboard,
    mteb: MtebScores | None,
    names: set[str],
    type_label: str,
    *,
    min_mteb_coverage: float = 1.0,
    source: str = "",
) -> tuple[go.Figure, str, pd.DataFrame]:
    """The scatter, the note (metric, rho, gainers and losers, who is not plotted and why) and
    the points' table (what the CSV holds) for one task type and the models in ``names``."""
    kind = _type_of(type_label)
    label = TYPE_LABELS[kind]
    bench = board.benchmark.name
    empty = frame([], columns=DOMAIN_COLUMNS)
    if mteb is None:
        note = (
            "No MTEB scores are loaded, so there is nothing to compare with. Start the Space with "
            "`--mteb-scores mteb_eng_v1_scores.csv` (`../shared/reference/` has the paper's "
            "models'), or put that file at the root of the results repo; `--mteb-results DIR` "
            "adds models from an MTEB results folder."
        ) + (f" (Here {source})" if source else "")
        return _empty("No MTEB scores loaded"), note, empty
    found = compare_domains(
        _kept(board, names),
        board.benchmark,
        mteb,
        min_mteb_coverage=min_mteb_coverage,
        types=[kind],
    )
    if not found:
        note = (
            f"**{bench}** has no {label} tasks, or the MTEB scores have none, so there is "
            "nothing to compare for this type."
        )
        return _empty(f"{bench}: no {label} tasks to compare"), note, empty
    comp = found[0]
    df = _domain_frame(comp, board)
    return _domain_figure(comp, board, df), _domain_note(comp, board, df, source), df


def _domain_frame(comp: DomainComparison, board: Leaderboard) -> pd.DataFrame:
    rows = []
    for model, general_rank, chem_rank in comp.rank_changes:
        general, chem = comp.points[model]
        facts = board.facts.get(model)
        rows.append(
            {
                "Model": model,
                "Family": facts.family if facts else "",
                "MTEB mean": general,
                "ChemTEB mean": chem,
                "ChemTEB − MTEB": chem - general,
                "MTEB rank": general_rank,
                "ChemTEB rank": chem_rank,
                "Ranks gained": general_rank - chem_rank,
            }
        )
    df = frame(rows, columns=DOMAIN_COLUMNS)  # its declarations travel through the sort
    return df.sort_values(["Ranks gained", "Model"], ascending=[False, True], ignore_index=True)


def _rho_text(comp: DomainComparison) -> str:
    if comp.rho is None:
        return "too few models for a correlation (3 needed)"
    text = f"Spearman ρ = {comp.rho:+.2f}"
    if comp.interval is not None:
        text += f" (95% {comp.interval[0]:+.2f} to {comp.interval[1]:+.2f})"
    return text


def _domain_figure(comp: DomainComparison, board: Leaderboard, df: pd.DataFrame) -> go.Figure:
    label, bench = TYPE_LABELS[comp.kind], board.benchmark.name
    if df.empty:
        return _empty(f"{label}: no model has scores on both sides (see the list below)")
    fig = go.Figure()
    values = [*df["MTEB mean"], *df["ChemTEB mean"]]
    pad = 0.03 * (max(values) - min(values) or 1.0)
    low, high = min(values) - pad, max(values) + pad
    fig.add_trace(
        go.Scatter(
            x=[low, high],
            y=[low, high],
            mode="lines",
            name="same score on both (y = x)",
            line={"dash": "dash", "color": "#888"},
            hoverinfo="skip",
        )
    )
    for family, group in df.groupby("Family", sort=True):
        fig.add_trace(
            go.Scatter(
                # plain lists: Plotly would send arrays as base64 blobs, unreadable in the page
                x=group["MTEB mean"].tolist(),
                y=group["ChemTEB mean"].tolist(),
                mode="markers",
                name=plot_text(family) or "unknown family",
                text=[plot_text(m) for m in group["Model"]],
                customdata=group[["MTEB rank", "ChemTEB rank"]].to_numpy().tolist(),
                hovertemplate="%{text}<br>MTEB %{x:.4f} (rank %{customdata[0]})<br>"
                "ChemTEB %{y:.4f} (rank %{customdata[1]})<extra></extra>",
                marker={"size": 11, "line": {"width": 1, "color": "#333"}},
            )
        )
    movers = df.reindex(df["Ranks gained"].abs().sort_values(ascending=False).index)
    offsets = ((30, -30), (30, 30), (-40, -45))  # so that labels of close points do not overlap
    for (_, row), (ax, ay) in zip(movers.head(N_LABELLED).iterrows(), offsets, strict=False):
        if row["Ranks gained"] == 0:
            continue
        fig.add_annotation(
            x=row["MTEB mean"],
            y=row["ChemTEB mean"],
            text=plot_text(f"{str(row['Model']).split('/')[-1]} ({int(row['Ranks gained']):+d})"),
            showarrow=True,
            arrowhead=2,
            ax=ax,
            ay=ay,
            font={"size": 11},
        )
    metric = comp.metric
    fig.update_layout(
        title=f"{label}: {_rho_text(comp)}, {len(df)} models",
        xaxis={
            "title": f"MTEB(eng, v1): mean {metric} over {comp.n_mteb_tasks} tasks",
            "range": [low, high],
            "constrain": "domain",  # a square plot: the diagonal at 45 degrees
        },
        yaxis={
            "title": f"{bench}: mean {metric} over {comp.n_chemteb_tasks} tasks",
            "range": [low, high],
            "scaleanchor": "x",
            "scaleratio": 1,
            "constrain": "domain",
        },
        legend={"title": "Family"},
        height=620,
        margin={"l": 70, "r": 20, "t": 70, "b": 60},
    )
    return fig


def _domain_note(comp: DomainComparison, board: Leaderboard, df: pd.DataFrame, source: str) -> str:
    label, bench, metric = TYPE_LABELS[comp.kind], board.benchmark.name, comp.metric
    ranked_by = sorted({main_score(board.benchmark, t) for t in board.tasks if t.type == comp.kind})
    lines = [
        f"**{label}** — both axes show the mean **{metric}** (MTEB(eng, v1)'s leaderboard metric "
        f"for the type"
        + (
            f"; {bench} ranks {label.lower()} by {', '.join(ranked_by)}, so this view uses "
            f"{metric} on both sides to compare like with like)."
            if ranked_by != [AXIS_METRICS[comp.kind]]
            else ")."
        )
    ]
    if not df.empty:
        gaps = df["ChemTEB − MTEB"]
        lines.append(
            f"{len(df)} models (the filters apply) · "
            + (
                f"{_rho_text(comp)} between the two rankings"
                if comp.rho is not None
                else "too few models for Spearman's rho (3 needed)"
            )
            + (" (bootstrap over models, 1,000 resamples)" if comp.interval else "")
            + f" · ChemTEB higher for {int((gaps > 0).sum())} of {len(df)}, mean difference "
            f"{gaps.mean():+.3f}. Points above the dashed line score higher on ChemTEB."
        )
        gain = df[df["Ranks gained"] > 0].head(N_LABELLED)
        lose = df[df["Ranks gained"] < 0].tail(N_LABELLED).iloc[::-1]
        for title, part in (("Gain most ranks on ChemTEB", gain), ("Lose most", lose)):
            if not part.empty:
                lines.append(
                    f"{title}: "
                    + "; ".join(
                        f"{md(r['Model'])} (MTEB rank {r['MTEB rank']} → {r['ChemTEB rank']})"
                        for _, r in part.iterrows()
                    )
                )
    lines.append(
        f"Plotted: models with scores on all {comp.n_chemteb_tasks} of {bench}'s {label} tasks "
        f"and on at least {comp.n_mteb_needed} of the {comp.n_mteb_tasks} MTEB(eng, v1) {label} "
        "tasks; a mean over fewer tasks is never plotted."
    )
    if comp.excluded:
        listed = "\n".join(f"- {md_code(m)}: {why}" for m, why in sorted(comp.excluded.items()))
        lines.append(f"Not plotted ({len(comp.excluded)}):\n\n{listed}")
    if source:
        lines.append(f"MTEB scores: {source}")  # built by app._mteb_scores, names escaped
    return "\n\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Correlations


def correlation_view(
    board: Leaderboard, names: set[str], matrix: str, method: str
) -> tuple[go.Figure, str, str]:
    """The heatmap, its note and its CSV body (``chemteb rank --correlations``'s format)."""
    models = _kept(board, names)
    method = method if method in dict(METHODS).values() else "spearman"
    if matrix == "models":
        families = {m: f.family for m, f in board.facts.items()}
        corr = model_correlations(models, board.benchmark, families)
        note = _models_note(corr, board, len(models), method)
    else:
        corr = task_correlations(models, board.benchmark)
        note = _tasks_note(corr, board, len(models), method)
    values = corr.spearman if method == "spearman" else corr.pearson
    body = io.StringIO()
    csv.writer(body).writerows(matrix_rows(corr, method))
    fig = _heatmap(corr, values, matrix, method, board)
    if fig.data and fig.data[0].zmin != -1:
        note += (
            f" No correlation here is negative: the colours run from {fig.data[0].zmin:.1f} to 1 "
            "to show the differences."
        )
    return fig, note, body.getvalue()


def _tick(label: str, group: str, matrix: str, short: dict[str, str]) -> str:
    if matrix == "models":
        return f"{label.split('/')[-1]} · {group}" if group else label.split("/")[-1]
    return f"{short.get(group, group)} · {label}"


def _heatmap(
    corr: Correlations,
    values: list[list[float | None]],
    matrix: str,
    method: str,
    board: Leaderboard,
) -> go.Figure:
    name = _NAMES[method]
    if len(corr.labels) < 2 or all(v is None for row in values for v in row):
        return _empty(f"{name}: too few models or tasks for a correlation (3 needed per pair)")
    short = {t: k.short for t, k in KINDS.items()}
    ticks = [
        plot_text(_tick(lab, grp, matrix, short))
        for lab, grp in zip(corr.labels, corr.groups, strict=True)
    ]
    # Tick labels must be unique for Plotly's categorical axes: the full label breaks a tie.
    if len(set(ticks)) < len(ticks):
        ticks = [f"{t} ({plot_text(lab)})" for t, lab in zip(ticks, corr.labels, strict=True)]
    fig = go.Figure(
        go.Heatmap(
            # an array, not nested lists: Plotly validates lists cell by cell (~0.25 s for
            # 100 models); NaN (too few pairs) is a gap
            z=np.array([[np.nan if v is None else v for v in row] for row in values]),
            x=ticks,
            y=ticks,
            **_colours(values),
            colorbar={"title": name},
            hovertemplate="%{y} × %{x}<br>" + name + " %{z:.3f}<extra></extra>",
            hoverongaps=False,
        )
    )
    if matrix == "tasks":
        _outline_types(fig, corr.groups)
    what = "task scores across models" if matrix == "tasks" else "model scores across tasks"
    # Every label shown (Plotly would skip every other one): ~20 px a row, plus room for the
    # slanted labels under the matrix (the longest task name is 72 characters).
    longest = max(len(t) for t in ticks)
    fig.update_layout(
        title=f"{board.benchmark.name}: {name} correlation of {what}",
        xaxis={"tickangle": -60, "tickfont": {"size": 10}, "dtick": 1},
        yaxis={"autorange": "reversed", "tickfont": {"size": 10}, "dtick": 1},
        height=max(520, 20 * len(ticks) + 5 * longest + 140),
        margin={"l": 40, "r": 20, "t": 70, "b": 40},
    )
    return fig


def _colours(values: list[list[float | None]]) -> dict[str, Any]:
    """Red-blue from -1 to 1 when any correlation is negative; when none is (the paper's 34
    models correlate at 0.79 to 1.00), a sequential scale from the lowest value, rounded down to
    a tenth, to 1 — on -1..1 every cell would be the same dark red."""
    low = min(v for row in values for v in row if v is not None)
    if low < 0:
        return {"zmin": -1, "zmax": 1, "colorscale": "RdBu", "reversescale": True}
    return {"zmin": math.floor(low * 10) / 10, "zmax": 1, "colorscale": "Viridis"}


def _outline_types(fig: go.Figure, groups: Sequence[str]) -> None:
    """A box around each type's block on the diagonal (the within-type correlations)."""
    start = 0
    for i in range(1, len(groups) + 1):
        if i == len(groups) or groups[i] != groups[start]:
            fig.add_shape(
                type="rect",
                x0=start - 0.5,
                x1=i - 0.5,
                y0=start - 0.5,
                y1=i - 0.5,
                line={"color": "#111", "width": 2},
                xref="x",
                yref="y",
            )
            start = i


def _pairs(corr: Correlations, method: str) -> list[tuple[str, str, float, bool]]:
    """Each pair once: (a, b, correlation, same group)."""
    values = corr.spearman if method == "spearman" else corr.pearson
    out = []
    for i, a in enumerate(corr.labels):
        for j in range(i + 1, len(corr.labels)):
            value = values[i][j]
            if value is not None:
                out.append((a, corr.labels[j], value, corr.groups[i] == corr.groups[j]))
    return out


def _tasks_note(corr: Correlations, board: Leaderboard, n_models: int, method: str) -> str:
    inside = [(a, b, v) for a, b, v, same in _pairs(corr, method) if same]
    negative = sorted((p for p in inside if p[2] < 0), key=lambda p: p[2])
    text = (
        f"Each cell: the {_NAMES[method]} correlation of two tasks' scores (the benchmark's main "
        "score) across the "
        f"{n_models} models the filters keep; pairs need 3 models with both. Tasks are grouped "
        "by type, each type's block outlined. **A negative correlation inside a type** means the "
        "models that do well on one of its tasks tend to do badly on the other: the two tasks "
        "reward different abilities, and the type's mean averages them out (the paper finds such "
        "pairs in pair classification)."
    )
    if inside:
        text += f" Here {len(negative)} of {len(inside)} within-type pairs are negative"
        text += (
            f"; the most negative: {md(negative[0][0])} × {md(negative[0][1])} "
            f"({negative[0][2]:+.2f})."
            if negative
            else "."
        )
    return text


def _models_note(corr: Correlations, board: Leaderboard, n_models: int, method: str) -> str:
    across = sorted((p for p in _pairs(corr, method) if not p[3]), key=lambda p: -p[2])
    text = (
        f"Each cell: the {_NAMES[method]} correlation of two models' scores over the "
        f"{len(board.tasks)} tasks of {board.benchmark.name} ({n_models} models the filters "
        "keep; pairs need 3 common tasks). Models are ordered by hierarchical clustering "
        "(average linkage on 1 − ρ), so models that behave alike sit together; each name is "
        "followed by its family."
    )
    if across:
        a, b, value, _ = across[0]
        family = dict(zip(corr.labels, corr.groups, strict=True))
        text += (
            f" The highest correlation across families: {md(a)} ({md(family[a])}) × {md(b)} "
            f"({md(family[b])}), {value:.3f}."
        )
    return text
