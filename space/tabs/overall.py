"""The overall ranking: one row per model, its CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState, Filters
from views import frame, write_csv

from .base import Layout, Tab, download_button, table_update


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    table = gr.Dataframe(
        elem_id="overall-table", interactive=False, max_height=900, pinned_columns=2, wrap=True
    )
    return Layout(outputs=(table, download_button("overall-csv")))


def view(state: AppState, filters: Filters) -> list[Any]:
    board = filters.board(state)
    rows = filters.rows(board, board.overall)
    df = frame(rows, columns=list(board.overall[0]) if board.overall else None)
    csv = write_csv(
        df.drop(columns=["Complete"], errors="ignore"), f"{board.benchmark.name}-overall"
    )
    return [table_update(df), csv]


TAB = Tab(id="overall", label="Overall", layout=layout, view=view)
