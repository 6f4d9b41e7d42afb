"""The page's tabs, in order: the one table the tab list, the URL parsing, the handlers and
the wiring (``app.build_demo``) loop over. A new tab is one module exporting ``TAB`` and one
line here (docs/extending.md, "Adding a Space tab")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from state import FILTERS, AppState, Filters

from . import (
    about,
    by_type,
    correlations,
    distribution,
    domains,
    efficiency,
    frontier,
    lexical,
    overall,
    radar,
    task,
    tokenization,
)
from .base import Layout, Tab
from .header import HEADER

TABS: tuple[Tab, ...] = (
    overall.TAB,
    *by_type.TABS,
    task.TAB,
    efficiency.TAB,
    frontier.TAB,
    lexical.TAB,
    tokenization.TAB,
    distribution.TAB,
    radar.TAB,
    domains.TAB,
    correlations.TAB,
    about.TAB,
)

__all__ = ["HEADER", "TABS", "Layout", "Tab", "handler", "params_of", "parse_query"]


def params_of(tabs: Sequence[Tab] = TABS) -> tuple[str, ...]:
    """Every URL parameter but ``tab``, in the order the handlers take the controls' values:
    the filters', then each tab's own."""
    return (*(p.name for p in FILTERS), *(p.name for t in tabs for p in t.params))


def parse_query(
    state: AppState, params: Mapping[str, str], tabs: Sequence[Tab] = TABS
) -> dict[str, Any]:
    """Control values from URL query parameters; unknown values fall back to the defaults."""
    values = {p.name: p.parse(state, params.get(p.name)) for p in FILTERS}
    values.update({p.name: p.parse(state, params.get(p.name)) for t in tabs for p in t.params})
    tab = params.get("tab", tabs[0].id)
    values["tab"] = tab if tab in {t.id for t in tabs} else tabs[0].id
    return values


def handler(*tabs: Tab) -> Callable[..., Any]:
    """The handler Gradio calls for ``tabs``' views: ``(state, *values)``, the filters' values
    (``FILTERS`` order) then each tab's own controls' values; one ``Filters`` record for all.
    Returns the views' outputs in order (a single output as itself, as Gradio wants it)."""

    def handle(state: AppState, *values: Any) -> Any:
        filters = Filters.of(*values[: len(FILTERS)])
        rest = values[len(FILTERS) :]
        out: list[Any] = []
        for tab in tabs:
            if tab.view is not None:
                out += tab.view(state, filters, *rest[: len(tab.params)])
                rest = rest[len(tab.params) :]
        return out[0] if len(out) == 1 else out

    return handle
