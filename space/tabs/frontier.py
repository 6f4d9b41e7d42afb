"""Quality against cost, per model and variant of its vectors (``chemteb run --dims
--precisions``): the mean score with its 95% interval against bytes per vector, the Pareto set
marked; the table (index size, texts/s, texts cut) and its CSV (``results.frontier``)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from views import plot_text

from .base import plot_table_tab

# the "95% CI" cell, "low-high" (either may be negative: a correlation's)
_INTERVAL = re.compile(r"(-?\d+(?:\.\d+)?)-(-?\d+(?:\.\d+)?)")


def frontier_figure(benchmark: str, rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Mean score against bytes per vector (log axis), the 95% interval as error bars, the
    rows no other beats on both (smaller and at least as good) joined as the frontier."""
    points = [r for r in rows if r["Mean"] is not None and r["Bytes/vector"]]
    fig = go.Figure()
    if not points:
        fig.update_layout(title="No complete model with a known vector size passes the filters")
        return fig

    def bars(r: Mapping[str, Any], side: int) -> float:
        found = _INTERVAL.fullmatch(str(r["95% CI"]))
        if found is None:
            return 0.0
        return abs(float(found.group(2) if side > 0 else found.group(1)) - float(r["Mean"]))

    for on, label, symbol in ((False, "other", "circle-open"), (True, "Pareto set", "diamond")):
        group = [r for r in points if (r["Pareto (size)"] == "yes") == on]
        if not group:
            continue
        fig.add_trace(
            go.Scatter(
                x=[r["Bytes/vector"] for r in group],
                y=[r["Mean"] for r in group],
                mode="markers",
                name=label,
                marker={"symbol": symbol, "size": 11},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [bars(r, 1) for r in group],
                    "arrayminus": [bars(r, -1) for r in group],
                },
                text=[plot_text(r["Model"]) for r in group],
                customdata=[[plot_text(r["Rank 95%"]), r["Texts/s"], r["Cut"]] for r in group],
                hovertemplate="%{text}<br>%{x:,} bytes/vector · mean %{y:.4f}<br>rank 95%: "
                "%{customdata[0]} · %{customdata[1]:.0f} texts/s · cut %{customdata[2]}"
                "<extra></extra>",
            )
        )
    front = sorted(
        (r for r in points if r["Pareto (size)"] == "yes"), key=lambda r: r["Bytes/vector"]
    )
    fig.add_trace(
        go.Scatter(
            x=[r["Bytes/vector"] for r in front],
            y=[r["Mean"] for r in front],
            mode="lines",
            line={"dash": "dot"},
            name="frontier",
            hoverinfo="skip",
        )
    )
    fig.update_xaxes(title_text="bytes per vector (log)", type="log")
    fig.update_yaxes(title_text="mean main score")
    fig.update_layout(
        title=f"{plot_text(benchmark)}: quality against vector size",
        legend={"orientation": "h", "y": -0.2},
        height=520,
    )
    return fig


TAB = plot_table_tab("frontier", "Frontier", "frontier", frontier_figure)
