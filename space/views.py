"""Tables and figures of the leaderboard Space, from ``chemteb_eval.results.leaderboard`` rows.

Everything the page shows is derived here from rows computed once at start; the tabs
(``tabs/``) only filter, style and plot. Tables render from their columns' declarations
(``columns.py``). No ranking happens here (that is ``chemteb_eval``'s).
"""

from __future__ import annotations

import csv
import hashlib
import math
import numbers
import re
import tempfile
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from columns import Column, declared

from chemteb_eval.results.leaderboard import TYPE_LABELS, Leaderboard
from chemteb_eval.results.lexical import BM25_MODEL
from chemteb_eval.results.markup import md as md
from chemteb_eval.results.markup import md_code as md_code
from chemteb_eval.results.markup import plot_text as plot_text
from chemteb_eval.results.markup import printable

_CSV_DIR: Path | None = None  # this process's own download folder, made on first use


def csv_dir() -> Path:
    """A folder only this process writes (``mkdtemp``: mode 0700, a fresh name), under the
    temporary folder Gradio serves files from. A fixed shared name (``/tmp/chemteb-space``) let
    another user plant a ``.csv`` to be served, or a symlink to be written through."""
    global _CSV_DIR
    if _CSV_DIR is None or not _CSV_DIR.is_dir():
        _CSV_DIR = Path(tempfile.mkdtemp(prefix="chemteb-space-"))
    return _CSV_DIR


# A Hub model id as the Hub spells one: only these become links (a contributed name such as
# "x](javascript:...)" or "![](http://tracker)" is shown as text, escaped).
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
# Two folders naming one model are told apart as "model [folder]" (results.scan): shown as
# the model (its link, if a Hub id) and the folder as code, not as a bracket that reads like a
# broken Markdown link.
_TOLD_APART = re.compile(r"(?s)(.+) \[([^\[\]]+)\]")


def _model_cell(model: str, complete: bool) -> str:
    # Hub ids link to their model page; API models and other names have no page. A character
    # a screen would not show as itself (a right-to-left override reverses what follows it, so
    # one row could read as another model or variant) is shown as "?", as the CLI shows it.
    model = printable(model)
    told_apart = _TOLD_APART.fullmatch(model)
    base = told_apart.group(1) if told_apart else model
    name = md(base)
    # MTEB's BM25 is named like a Hub id but is no Hub repository: no page to link to
    if _HUB_ID.fullmatch(base) and ".." not in base and base != BM25_MODEL:
        name = f"[{name}](https://huggingface.co/{base})"
    if told_apart:
        name += f" · {md_code(told_apart.group(2))}"
    return name if complete else f"{name} ⚠ incomplete"


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def frame(
    rows: Sequence[Mapping[str, Any]],
    *,
    columns: Sequence[str] | None = None,
    scores: Collection[str] = (),
) -> pd.DataFrame:
    """Rows to a DataFrame of declared columns (``columns.COLUMNS``; the names in ``scores``
    are the view's score columns): number columns as numbers (missing values as NaN), text
    columns as written. The declarations travel in ``df.attrs["columns"]`` for ``display``.

    Raises:
        UndeclaredColumn: a column neither declared nor among ``scores``.
        ValueError: a number column holding something other than a number.
    """
    df = pd.DataFrame(list(rows), columns=list(columns) if columns is not None else None)
    declarations = declared(df.columns, scores=scores)
    for column in declarations:
        if column.kind != "number":
            continue
        wrong = next(
            (v for v in df[column.name].tolist() if not _is_missing(v) and not _is_number(v)),
            None,
        )
        if wrong is not None:
            raise ValueError(f"column {column.name!r} is declared a number but holds {wrong!r}.")
        df[column.name] = pd.to_numeric(df[column.name], errors="coerce")
    df.attrs["columns"] = {c.name: c for c in declarations}
    return df


def _columns(df: pd.DataFrame) -> list[Column]:
    """``df``'s declared columns: as ``frame`` recorded them, else ``COLUMNS``'s."""
    recorded: Mapping[str, Column] = df.attrs.get("columns", {})
    return [recorded.get(name) or declared([name])[0] for name in df.columns]


def display(df: pd.DataFrame) -> dict[str, Any]:
    """The on-screen table, rendered from the columns' declarations: the best value of each
    score column bold, numbers in their column's format, links on model ids, hidden columns
    left out.

    Gradio's Dataframe takes ``{"headers", "data", "metadata"}``: the cells keep their numbers
    (so columns sort as numbers in the browser) while ``metadata`` sets what is displayed and
    how. Built here directly because a pandas Styler costs Gradio ~15 ms a table to translate.
    """
    shown = [c for c in _columns(df) if not c.hidden]
    complete = df["Complete"].tolist() if "Complete" in df.columns else [True] * len(df)
    data: list[list[Any]] = [[] for _ in range(len(df))]
    display_value: list[list[str]] = [[] for _ in range(len(df))]
    styling: list[list[str]] = [[] for _ in range(len(df))]
    for column in shown:
        values = df[column.name].tolist()
        raw: list[Any]
        if column.format == "model":
            cells = [_model_cell(m, bool(c)) for m, c in zip(values, complete, strict=True)]
            shown_text, raw = cells, cells
        elif column.kind == "number":
            raw = [None if _is_missing(v) else v for v in values]
            shown_text = [column.show(v) for v in raw]
        else:
            raw = ["" if _is_missing(v) else v for v in values]
            # text from files: a character a screen would not show as itself is shown as "?"
            shown_text = [printable(str(v)) for v in raw]
        present = [v for v in raw if v is not None]
        best = max(present, default=None) if column.bold_best else None
        for i, value in enumerate(raw):
            data[i].append(value)
            display_value[i].append(shown_text[i])
            styling[i].append("font-weight: bold" if best is not None and value == best else "")
    return {
        "headers": [c.name for c in shown],
        "data": data,
        "metadata": {"display_value": display_value, "styling": styling},
    }


def datatypes(df: pd.DataFrame) -> list[str]:
    """Gradio column types, from the declarations: numbers sort as numbers; model cells render
    their links."""
    return [c.datatype for c in _columns(df) if not c.hidden]


def write_csv(df: pd.DataFrame, name: str) -> str:
    """Write a table for download; the file name says what it holds and is stable per content.
    Text cells that a spreadsheet would run as a formula are neutralised (``csv_safe``)."""
    from chemteb_eval._files import csv_safe

    safe = df.copy()
    for column in safe.columns:
        if not pd.api.types.is_numeric_dtype(safe[column]):  # object or pandas' str dtype
            safe[column] = safe[column].map(csv_safe)
    safe.columns = [csv_safe(c) for c in safe.columns]
    return write_body(safe.to_csv(index=False, quoting=csv.QUOTE_MINIMAL), name)


def write_body(body: str, name: str) -> str:
    """Write a CSV body for download under ``name`` and a digest of the content: written each
    time, atomically (a file already there is never trusted, a symlink never followed)."""
    from chemteb_eval._files import write_text_atomic

    digest = hashlib.sha1(body.encode()).hexdigest()[:10]
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    path = csv_dir() / f"{safe}-{digest}.csv"
    write_text_atomic(path, body)
    return str(path)


def efficiency_figure(board: Leaderboard, rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Samples per second against RRF, one panel per hardware (speeds measured on different
    machines are never put on one axis); bubble area ~ parameters, colour = embedding
    dimension, each panel's Pareto front through the models no other there beats on both axes."""
    from plotly.subplots import make_subplots

    if not rows:
        fig = go.Figure()
        fig.update_layout(title="No complete model with timings passes the filters")
        return fig
    hardware = sorted({str(r["Hardware"]) for r in rows})
    titles = [plot_text(h) for h in hardware]
    fig = make_subplots(rows=1, cols=len(hardware), shared_yaxes=True, subplot_titles=titles)
    biggest = max((float(r["Params (M)"]) for r in rows if _known_params(r)), default=1.0)
    dims = [float(r["Dim"]) for r in rows if _known_dim(r)]
    colours = (min(dims, default=0.0), max(dims, default=1.0))
    for col, machine in enumerate(hardware, start=1):
        group = [r for r in rows if str(r["Hardware"]) == machine]
        for trace in _efficiency_traces(group, biggest, colours, first=col == 1):
            fig.add_trace(trace, row=1, col=col)
        fig.update_xaxes(
            title_text="embedded samples per second (task sizes / evaluation time)",
            type="log",
            row=1,
            col=col,
        )
    fig.update_yaxes(title_text="RRF score", row=1, col=1)
    fig.update_layout(
        title=f"{board.benchmark.name}: speed and quality, per hardware",
        legend={"orientation": "h", "y": -0.2},
        margin={"l": 60, "r": 20, "t": 80, "b": 60},
        height=520,
    )
    return fig


def _known_params(r: Mapping[str, Any]) -> bool:
    return r["Params (M)"] is not None and not pd.isna(r["Params (M)"])


def _known_dim(r: Mapping[str, Any]) -> bool:
    return r["Dim"] is not None and not pd.isna(r["Dim"])


def _dim_colour(dim: Any, colours: tuple[float, float]) -> str:
    """A point's colour on the Viridis scale of the known dimensions; grey when unknown (the
    paper's results without a model table have no dimensions: plotly refused their None)."""
    if dim is None or pd.isna(dim):
        return "#9e9e9e"
    from plotly.colors import sample_colorscale

    low, high = colours
    share = 0.5 if high <= low else (float(dim) - low) / (high - low)
    return str(sample_colorscale("Viridis", [min(1.0, max(0.0, share))])[0])


def _efficiency_traces(
    rows: Sequence[Mapping[str, Any]],
    biggest: float,
    colours: tuple[float, float],
    *,
    first: bool,
) -> list[go.Scatter]:
    """One hardware's points (known and unknown size) and its Pareto front."""
    traces: list[go.Scatter] = []

    def trace(
        points: Sequence[Mapping[str, Any]], label: str, symbol: str, sizes: list[float]
    ) -> go.Scatter:
        return go.Scatter(
            x=[r["Samples/s"] for r in points],
            y=[r["RRF"] for r in points],
            mode="markers",
            name=label,
            showlegend=first,
            legendgroup=label,
            text=[plot_text(r["Model"]) for r in points],
            customdata=[[r["Params (M)"], r["Dim"], plot_text(r["Hardware"])] for r in points],
            hovertemplate="%{text}<br>%{x:.1f} samples/s · RRF %{y:.4f}<br>"
            "params (M): %{customdata[0]} · dim %{customdata[1]}<br>%{customdata[2]}<extra></extra>",
            marker={
                "size": sizes,
                "symbol": symbol,
                "color": [_dim_colour(r["Dim"], colours) for r in points],
                "line": {"width": 1, "color": "#333"},
                "sizemode": "diameter",
            },
        )

    known = [r for r in rows if _known_params(r)]
    dims = [r for r in rows if _known_dim(r)]
    if dims and first:  # the colour bar, once: plotly takes no None in a numeric colour array
        traces.append(
            go.Scatter(
                x=[None],
                y=[None],
                mode="markers",
                showlegend=False,
                hoverinfo="skip",
                marker={
                    "color": [colours[0]],
                    "colorscale": "Viridis",
                    "cmin": colours[0],
                    "cmax": colours[1],
                    "showscale": True,
                    "colorbar": {"title": "Embedding dim (grey: unknown)"},
                },
            )
        )
    unknown = [r for r in rows if not _known_params(r)]
    if known:
        sizes = [8 + 40 * math.sqrt(float(r["Params (M)"]) / biggest) for r in known]
        traces.append(trace(known, "bubble area ~ parameters", "circle", sizes))
    if unknown:
        traces.append(trace(unknown, "parameters unknown (API)", "diamond", [14.0] * len(unknown)))
    front = sorted((r for r in rows if r.get("Pareto")), key=lambda r: r["Samples/s"])
    traces.append(
        go.Scatter(
            x=[r["Samples/s"] for r in front],
            y=[r["RRF"] for r in front],
            mode="lines",
            name="Pareto front",
            showlegend=first,
            legendgroup="Pareto front",
            line={"dash": "dash", "color": "#d62728"},
            hoverinfo="skip",
        )
    )
    return traces


def distribution_figure(
    board: Leaderboard, scores: Sequence[Mapping[str, Any]], type_label: str
) -> go.Figure:
    """Per family, the task scores of one task type: a box with every point beside it."""
    fig = go.Figure()
    chosen = [s for s in scores if s["Type"] == type_label]
    families = sorted({s["Family"] for s in chosen})
    for family in families:
        points = [s for s in chosen if s["Family"] == family]
        fig.add_trace(
            go.Box(
                y=[p["Score"] for p in points],
                name=plot_text(family),
                boxpoints="all",
                jitter=0.4,
                pointpos=0,
                text=[plot_text(f"{p['Model']} · {p['Task']}") for p in points],
                hovertemplate="%{text}<br>%{y:.4f}<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"{board.benchmark.name} · {type_label}: task scores per model family",
        yaxis={"title": "main score"},
        showlegend=False,
        height=480,
        margin={"l": 60, "r": 20, "t": 60, "b": 60},
    )
    if not chosen:
        fig.update_layout(title=f"No {type_label} scores pass the filters")
    return fig


def radar_figure(
    board: Leaderboard, rows: Sequence[Mapping[str, Any]], models: Sequence[str]
) -> go.Figure:
    """The per-type means of the chosen models on one radar."""
    fig = go.Figure()
    labels = [TYPE_LABELS[t] for t in board.types]
    by_model = {r["Model"]: r for r in rows}
    for model in models:
        row = by_model.get(model)
        if row is None:
            continue
        values = [row.get(label) for label in labels]
        fig.add_trace(
            go.Scatterpolar(
                r=[*values, values[0]],
                theta=[*labels, labels[0]],
                name=plot_text(model),
                fill="toself",
                opacity=0.55,
                connectgaps=False,
            )
        )
    fig.update_layout(
        title=f"{board.benchmark.name}: mean main score per task type",
        polar={"radialaxis": {"range": [0, 1]}},
        height=520,
        margin={"l": 40, "r": 40, "t": 60, "b": 40},
    )
    return fig
