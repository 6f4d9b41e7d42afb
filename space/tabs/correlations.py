"""How scores move together: task × task or model × model, Spearman or Pearson; the heatmap,
its note and its CSV (``analysis.correlation_view``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from analysis import MATRICES, METHODS, correlation_view
from state import AppState, Filters, Param
from views import write_body

from .base import Layout, Tab, download_button


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    with gr.Row():
        matrix = gr.Radio(list(MATRICES), value=default["matrix"], label="Matrix", elem_id="matrix")
        method = gr.Radio(
            list(METHODS), value=default["method"], label="Correlation", elem_id="method"
        )
    note = gr.Markdown(elem_id="correlations-note")
    plot = gr.Plot(elem_id="correlations-plot")
    return Layout(
        controls=(matrix, method), outputs=(plot, note, download_button("correlations-csv"))
    )


def view(state: AppState, filters: Filters, matrix: str, method: str) -> list[Any]:
    board = filters.board(state)
    matrix = matrix if matrix in dict(MATRICES).values() else "tasks"
    method = method if method in dict(METHODS).values() else "spearman"
    figure, note, body = correlation_view(board, filters.names(board), matrix, method)
    return [figure, note, write_body(body, f"{board.benchmark.name}-{matrix}_{method}")]


TAB = Tab(
    id="correlations",
    label="Correlations",
    layout=layout,
    view=view,
    params=(
        Param("matrix", "tasks", tuple(dict(MATRICES).values())),
        Param("method", "spearman", tuple(dict(METHODS).values())),
    ),
)
