"""The per-type means of the models picked (default: the top three) on one radar."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gradio as gr
from state import AppState, Filters, Param
from views import radar_figure

from .base import Layout, Tab


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    # Every name any benchmark can offer, so that updated choices always validate.
    all_models = sorted({r["Model"] for b in state.boards.values() for r in b.overall})
    picker = gr.Dropdown(
        all_models,
        multiselect=True,
        allow_custom_value=True,
        label="Models (default: the top three)",
    )
    return Layout(controls=(picker,), outputs=(picker, gr.Plot(elem_id="radar-plot")))


def view(state: AppState, filters: Filters, models: Sequence[str]) -> list[Any]:
    """The picker (its choices follow the filters) and the plot."""
    board = filters.board(state)
    rows = filters.rows(board, board.overall)
    choices = [r["Model"] for r in rows]
    chosen = [m for m in models or () if m in choices] or choices[:3]
    return [
        gr.Dropdown(choices=choices, value=chosen, multiselect=True, allow_custom_value=True),
        radar_figure(board, rows, chosen),
    ]


TAB = Tab(
    id="radar", label="Radar", layout=layout, view=view, params=(Param("models", multi=True),)
)
