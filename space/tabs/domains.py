"""ChemTEB vs MTEB for one task type (the paper's Figure 3): the scatter, its note, the points'
table and CSV (``analysis.domain_view``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from analysis import DOMAIN_LABELS, domain_view
from state import AppState, Filters, Param
from views import write_csv

from .base import Layout, Tab, download_button, table_update


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    gr.Markdown(
        "Does a model's rank on general-domain MTEB carry over to chemistry? Each point is "
        "a model: its MTEB(eng, v1) mean against its ChemTEB mean for one task type, the "
        "same metric on both axes."
    )
    pick = gr.Radio(
        list(DOMAIN_LABELS), value=default["vs_type"], label="Task type", elem_id="vs-type"
    )
    plot = gr.Plot(elem_id="domains-plot")
    note = gr.Markdown(elem_id="domains-note")
    table = gr.Dataframe(elem_id="domains-table", interactive=False, max_height=600)
    return Layout(controls=(pick,), outputs=(plot, note, table, download_button("domains-csv")))


def view(state: AppState, filters: Filters, vs_type: str) -> list[Any]:
    board = filters.board(state)
    figure, note, df = domain_view(
        board,
        state.mteb,
        filters.names(board),
        vs_type,
        min_mteb_coverage=state.min_mteb_coverage,
        source=state.mteb_source,
    )
    label = vs_type if vs_type in DOMAIN_LABELS else DOMAIN_LABELS[0]
    name = f"{board.benchmark.name}-vs-MTEB-{label}"
    return [figure, note, table_update(df), write_csv(df, name)]


TAB = Tab(
    id="domains",
    label="ChemTEB vs MTEB",
    layout=layout,
    view=view,
    params=(Param("vs_type", DOMAIN_LABELS[0], DOMAIN_LABELS),),
)
