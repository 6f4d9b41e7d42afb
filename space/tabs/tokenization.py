"""Why is this row low? Each model's tokenization of the benchmark's chemical strings beside
its mean (``chemteb rank --diagnostics``, issue 48): tokens per SMILES and their unknown-token
share, tokens per text — a plot of the mean against tokens per SMILES, the table, its CSV.
From the ``chemistry`` block each result file records (``results.diagnostics``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from views import plot_text

from .base import plot_table_tab

_NOTE = (
    "Tokens per SMILES and the share of them the tokenizer does not know, over the "
    "benchmark's distinct texts, tokenised alone as the model's own tokenizer cuts them "
    "(docs/inspect.md). A word model shows its out-of-vocabulary share; an API, nothing "
    "(its tokenizer is not ours to call). `chemteb inspect TASK -m MODEL` gives one task's "
    "figures per class of string."
)


def tokenization_figure(benchmark: str, rows: Sequence[Mapping[str, Any]]) -> go.Figure:
    """Each complete model's mean against its tokens per SMILES; the hover adds the unknown
    share. Models without a mean or without recorded tokens are in the table only."""
    points = [r for r in rows if r["Mean"] is not None and r["Tokens/SMILES"] is not None]
    fig = go.Figure()
    if not points:
        fig.update_layout(
            title="No complete model with recorded tokens per SMILES passes the filters"
        )
        return fig
    unknown = [r["Unknown (SMILES)"] for r in points]
    fig.add_trace(
        go.Scatter(
            x=[r["Tokens/SMILES"] for r in points],
            y=[r["Mean"] for r in points],
            mode="markers",
            marker={"size": 11},
            text=[plot_text(r["Model"]) for r in points],
            customdata=[[u if u is not None else float("nan")] for u in unknown],
            hovertemplate="%{text}<br>%{x:.1f} tokens per SMILES · mean %{y:.4f}<br>"
            "unknown tokens: %{customdata[0]:.1%}<extra></extra>",
        )
    )
    fig.update_xaxes(title_text="tokens per SMILES (the model's own tokenizer)")
    fig.update_yaxes(title_text="mean main score")
    fig.update_layout(
        title=f"{plot_text(benchmark)}: quality against how finely SMILES are cut", height=480
    )
    return fig


TAB = plot_table_tab("tokenization", "Tokenization", "tokenization", tokenization_figure, _NOTE)
