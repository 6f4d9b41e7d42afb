"""The record a tab is: its id (the URL's ``tab=``), its label, its URL parameters, the layout
that creates its components and the view that fills them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd
from state import AppState, Param
from views import datatypes, display


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


def download_button(elem_id: str) -> Any:
    return gr.DownloadButton("Download CSV", elem_id=elem_id, size="sm")
