"""Speed against quality, one panel per hardware, with each panel's Pareto front; its CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState, Filters
from views import efficiency_figure, write_csv

from .base import Layout, Tab, download_button, filtered


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    plot = gr.Plot(elem_id="efficiency-plot")
    return Layout(outputs=(plot, download_button("efficiency-csv")))


def view(state: AppState, filters: Filters) -> list[Any]:
    board = filters.board(state)
    rows, df = filtered(filters, board, board.efficiency)
    return [efficiency_figure(board, rows), write_csv(df, f"{board.benchmark.name}-efficiency")]


TAB = Tab(id="efficiency", label="Efficiency", layout=layout, view=view)
