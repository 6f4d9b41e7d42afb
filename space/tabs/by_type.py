"""One table per task type (one column per task, headed ``Task [metric]``), each with its CSV:
a tab per type of ``CHEMTEB_TYPES``."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import gradio as gr
from state import AppState, Filters
from views import frame, write_csv

from chemteb_eval.results.leaderboard import TYPE_LABELS
from chemteb_eval.tasks.kinds import CHEMTEB_TYPES

from .base import Layout, Tab, download_button, table_update


def layout(kind: str, state: AppState, default: Mapping[str, Any]) -> Layout:
    name = kind.lower()
    table = gr.Dataframe(
        elem_id=f"{name}-table", interactive=False, max_height=900, pinned_columns=2
    )
    return Layout(outputs=(table, download_button(f"{name}-csv")))


def view(kind: str, state: AppState, filters: Filters) -> list[Any]:
    board = filters.board(state)
    rows = filters.rows(board, board.by_type.get(kind, []))
    columns = list(board.by_type[kind][0]) if board.by_type.get(kind) else ["Rank", "Model", "Mean"]
    tasks = {board.column(t) for t in board.tasks if t.type == kind}
    df = frame(rows, columns=columns, scores=tasks)
    return [table_update(df), write_csv(df, f"{board.benchmark.name}-{kind}")]


TABS = tuple(
    Tab(
        id=kind.lower(),
        label=TYPE_LABELS[kind],
        layout=partial(layout, kind),
        view=partial(view, kind),
    )
    for kind in CHEMTEB_TYPES
)
