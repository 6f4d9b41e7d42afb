"""Is a dense model worth it here? Each model (and its hybrid, ``chemteb run --hybrid bm25s``)
against BM25 (``chemteb run -m bm25s``) on every retrieval task: the difference in main score
with its 95% paired-bootstrap interval over the queries, and the verdict (better / worse /
can't tell); below, the retrieval tasks' frontier by index size and speed, where BM25 and the
hybrids are complete (``results.lexical``). Both tables' CSVs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState, Filters
from views import write_csv

from .base import Layout, Tab, download_button, filtered, table_update

_NONE = (
    "No BM25 row in these results: `chemteb run -m bm25s` scores MTEB's BM25 on the "
    "benchmark's retrieval tasks, `chemteb run -m MODEL --hybrid bm25s` a model's hybrid."
)


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    note = gr.Markdown(elem_id="lexical-note")
    verdicts = gr.Dataframe(elem_id="lexical-table", interactive=False, wrap=True)
    placed = gr.Dataframe(elem_id="lexical-frontier", interactive=False, wrap=True)
    return Layout(
        outputs=(
            note,
            verdicts,
            download_button("lexical-csv"),
            placed,
            download_button("lexical-frontier-csv"),
        )
    )


def view(state: AppState, filters: Filters) -> list[Any]:
    board = filters.board(state)
    _, df = filtered(filters, board, board.versus)
    _, front = filtered(filters, board, board.lexical_frontier)
    name = board.benchmark.name
    note = (
        _NONE
        if not board.versus
        else "Main score minus BM25's (a hybrid's also minus its own model's) per retrieval "
        "task; 95% paired bootstrap over the task's queries. Below: the retrieval tasks' "
        "frontier, BM25 and the hybrids placed by their whole index (vectors and terms)."
    )
    return [
        note,
        table_update(df),
        write_csv(df, f"{name}-versus-bm25"),
        table_update(front),
        write_csv(front, f"{name}-retrieval-frontier"),
    ]


TAB = Tab(id="lexical", label="Versus BM25", layout=layout, view=view)
