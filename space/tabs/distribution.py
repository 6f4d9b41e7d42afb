"""The spread of one task type's scores per model family."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState, Filters, Param
from views import distribution_figure

from chemteb_eval.results.leaderboard import TYPE_LABELS
from chemteb_eval.tasks.kinds import CHEMTEB_TYPES

from .base import Layout, Tab


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    pick = gr.Radio(
        [TYPE_LABELS[t] for t in CHEMTEB_TYPES], value=default["type"], label="Task type"
    )
    return Layout(controls=(pick,), outputs=(gr.Plot(elem_id="distribution-plot"),))


def view(state: AppState, filters: Filters, type_label: str) -> list[Any]:
    board = filters.board(state)
    label = type_label if type_label in TYPE_LABELS.values() else TYPE_LABELS[board.types[0]]
    return [distribution_figure(board, filters.rows(board, board.scores), label)]


TAB = Tab(
    id="distribution",
    label="Distribution",
    layout=layout,
    view=view,
    params=(Param("type", TYPE_LABELS["Classification"]),),
)
