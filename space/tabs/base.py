"""The record a tab is: its id (the URL's ``tab=``), its label, its URL parameters, the layout
that creates its components and the view that fills them."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd
from state import AppState, Filters, Param
from views import datatypes, display, frame, write_csv


@dataclass(frozen=True)
class Layout:
    """A tab's components, as its layout creates them: ``controls`` (one per URL parameter, in
    ``Tab.params`` order) and ``outputs`` (what its view returns, in that order; a control the
    view updates is among them too)."""

    controls: tuple[Any, ...] = ()
    outputs: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Tab:
    """One tab of the page.

    ``layout(state, defaults)`` runs inside the tab (``defaults``: ``parse_query`` of an empty
    URL) and returns its ``Layout``; ``view(state, filters, *values)`` gets the ``Filters``
    record and the values of the tab's own controls (in ``params`` order) and returns one
    value per output. A tab without a view (About) only shows what its layout wrote.
    """

    id: str
    label: str
    layout: Callable[[AppState, Mapping[str, Any]], Layout]
    view: Callable[..., list[Any]] | None = None
    params: tuple[Param, ...] = ()

    def __post_init__(self) -> None:
        if self.params and self.view is None:
            raise ValueError(f"tab {self.id!r}: URL parameters need a view to take them.")


def table_update(df: pd.DataFrame) -> Any:
    """A table's new value, rendered from its columns' declarations. An update dict, not a new
    component: Gradio then styles the table once, not twice."""
    return gr.update(value=display(df), datatype=datatypes(df))


def filtered(
    filters: Filters, board: Any, table: list[dict[str, Any]]
) -> tuple[list[Mapping[str, Any]], pd.DataFrame]:
    """One of the board's tables as the filters leave it: its rows, and its frame with the
    table's columns even when no row is left ("Model" alone for an empty table)."""
    rows = filters.rows(board, table)
    return rows, frame(rows, columns=list(table[0]) if table else ["Model"])


def plot_table_tab(
    id: str,
    label: str,
    table: str,
    figure: Callable[[str, Sequence[Mapping[str, Any]]], Any],
    note: str | None = None,
) -> Tab:
    """A tab of one plot over one of the board's tables (``table``, an attribute), the table
    and its CSV, under the filters: the Frontier and Tokenization tabs. ``note``: a fixed line
    above them. Elements ``<id>-plot``, ``<id>-table``, ``<id>-csv``."""

    def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
        if note:
            gr.Markdown(note, elem_id=f"{id}-note")
        plot = gr.Plot(elem_id=f"{id}-plot")
        shown = gr.Dataframe(elem_id=f"{id}-table", interactive=False, wrap=True)
        return Layout(outputs=(plot, shown, download_button(f"{id}-csv")))

    def view(state: AppState, filters: Filters) -> list[Any]:
        board = filters.board(state)
        rows, df = filtered(filters, board, getattr(board, table))
        name = board.benchmark.name
        return [figure(name, rows), table_update(df), write_csv(df, f"{name}-{id}")]

    return Tab(id=id, label=label, layout=layout, view=view)


def download_button(elem_id: str) -> Any:
    return gr.DownloadButton("Download CSV", elem_id=elem_id, size="sm")
