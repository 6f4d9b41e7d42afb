"""The ChemTEB leaderboard: a Gradio app over result folders (ours and MTEB's layout).

Locally:   python space/app.py --results results/ [more folders] [--models models.csv] [--port 7860]
On the Hub: set CHEMTEB_RESULTS_REPO (a dataset repo of result folders) and
            CHEMTEB_RESULTS_REVISION (the commit to show); the app downloads that snapshot.

Every table and figure input is computed once at start (``state.build_state``); the tabs'
views (``tabs/``, one module per tab) only filter, style and plot, so each answers in well
under half a second (benchmarks/bench_space.py). The page state (benchmark, filters, tab,
task, chosen models) lives in the URL's query string. This file lays the tabs out and wires
them: loops over ``tabs.TABS``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from chemteb_eval.errors import MissingExtraError, require_extra

try:  # one line naming the extra, not a traceback from `import gradio`
    require_extra("space", "gradio", "plotly", "pandas", what="the leaderboard Space")
except MissingExtraError as exc:
    raise SystemExit(f"space/app.py: {exc}") from None

import gradio as gr

sys.path.insert(0, str(Path(__file__).resolve().parent))  # state.py, tabs/, when run as a script

from state import (
    FILTERS,
    HEAD,
    OPEN_TAB_JS,
    SHOWN_BENCHMARKS,
    AppState,
    build_state,
    tab_js,
    url_js,
)
from tabs import (
    HEADER,
    TABS,
    Layout,
    Tab,
    by_type,
    correlations,
    distribution,
    domains,
    efficiency,
    handler,
    overall,
    params_of,
    parse_query,
    radar,
    task,
)

from chemteb_eval.results.mteb_scores import MTEB_SCORES_FILE

__all__ = ["MTEB_SCORES_FILE", "PARAMS", "SHOWN_BENCHMARKS", "AppState", "build_demo"]
__all__ += ["build_state", "main", "parse_query", "view_all"]

PARAMS = params_of(TABS)  # URL parameter -> control, in the order the handlers take them
_url_js = url_js  # the name tests/test_space_app.py calls

# The handlers as Gradio calls them (the filters' values, then the tab's own), under the names
# the tests and benchmarks/bench_space.py call; a new tab needs no line here.
view_all = handler(HEADER, *TABS)
view_tables = handler(HEADER, overall.TAB, *by_type.TABS)
view_task = handler(task.TAB)
view_efficiency = handler(efficiency.TAB)
view_distribution = handler(distribution.TAB)
view_radar = handler(radar.TAB)
view_domains = handler(domains.TAB)
view_correlations = handler(correlations.TAB)


def build_demo(state: AppState, tabs: Sequence[Tab] = TABS) -> gr.Blocks:
    """The page. Initial values are the default view, so it is useful before any event runs."""
    default = parse_query(state, {}, tabs)
    demo: gr.Blocks
    with gr.Blocks(title="ChemTEB leaderboard") as demo:
        header = HEADER.layout(state, default)
        laid: list[tuple[Tab, Layout]] = []
        with gr.Tabs():
            for tab in tabs:
                with gr.Tab(tab.label, id=tab.id, elem_id=f"tab-{tab.id}") as block:
                    layout = tab.layout(state, default)
                if len(layout.controls) != len(tab.params):
                    raise ValueError(f"tab {tab.id!r}: one control per URL parameter.")
                laid.append((tab, layout))
                block.select(None, js=tab_js(tab.id, tabs[0].id))
        _wire(demo, state, header, laid)
    return demo


def _wire(demo: gr.Blocks, state: AppState, header: Layout, laid: list[tuple[Tab, Layout]]) -> None:
    """The events: filters redraw everything; each tab's controls its own view; load follows
    the URL."""
    filters = list(header.controls)
    controls = [c for _, layout in laid for c in layout.controls]
    outputs = [*header.outputs, *(o for _, layout in laid for o in layout.outputs)]
    tabs = [tab for tab, _ in laid]
    every_view = handler(HEADER, *tabs)
    names = params_of(tabs)

    def on_filters(*values: Any) -> Any:
        return every_view(state, *values)

    for control in filters:
        control.input(
            on_filters,
            inputs=[*filters, *controls],
            outputs=outputs,
            js=url_js(names),
            trigger_mode="always_last",
            show_progress="hidden",
        )
    for tab, layout in laid:
        own = [p.name for p in tab.params]
        for i, control in enumerate(layout.controls):
            control.input(
                partial(handler(tab), state),
                inputs=[*filters, *layout.controls],
                outputs=list(layout.outputs),
                js=url_js([*(p.name for p in FILTERS), *own]),
                api_name=tab.id if i == 0 else f"{tab.id}_{own[i]}",
                show_progress="hidden",
            )

    def on_load(request: gr.Request) -> list[Any]:
        values = parse_query(state, dict(request.query_params) if request else {}, tabs)
        controls_out = [values[p] for p in names]
        return [*controls_out, *every_view(state, *controls_out)]

    demo.load(on_load, inputs=None, outputs=[*filters, *controls, *outputs], show_progress="hidden")
    # The tab is the browser's business: click the one the URL names.
    demo.load(None, js=OPEN_TAB_JS)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The ChemTEB leaderboard (Gradio).")
    parser.add_argument(
        "--results", nargs="+", metavar="DIR", help="result folders (ours or MTEB's layout)"
    )
    parser.add_argument(
        "--models", metavar="CSV", help="model facts table (paper_models.csv's columns)"
    )
    parser.add_argument(
        "--benchmark",
        help="the benchmark shown first (default: the one the results cover best)",
    )
    parser.add_argument(
        "--mteb-scores",
        metavar="CSV",
        help=f"MTEB(eng, v1) scores for the ChemTEB vs MTEB tab (default: {MTEB_SCORES_FILE} in "
        "or beside a results folder)",
    )
    parser.add_argument(
        "--mteb-results",
        action="append",
        default=[],
        metavar="DIR",
        help="MTEB results folder(s) (MTEB's layout) adding your models to those scores",
    )
    parser.add_argument(
        "--min-mteb-coverage",
        type=float,
        default=1.0,
        help="share of a type's MTEB tasks a model needs to be plotted (default 1: all)",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7860)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse_args(argv)
    from chemteb_eval.errors import ChemtebError

    if args.results:
        roots, source = args.results, ", ".join(args.results)
    elif os.environ.get("CHEMTEB_RESULTS_REPO"):
        from chemteb_eval.hub import download_results

        repo = os.environ["CHEMTEB_RESULTS_REPO"]
        revision = os.environ.get("CHEMTEB_RESULTS_REVISION") or None
        try:
            roots = [str(download_results(repo, revision=revision))]
        except (ValueError, ChemtebError) as exc:  # the message says what to do
            sys.exit(str(exc))
        source = f"`{repo}` @ `{revision or 'main (unpinned: set CHEMTEB_RESULTS_REVISION)'}`"
    else:
        sys.exit(
            "No results: pass --results DIR [DIR ...], or set CHEMTEB_RESULTS_REPO (and CHEMTEB_RESULTS_REVISION)."
        )
    try:
        state = build_state(
            roots,
            model_table=args.models,
            default_benchmark=args.benchmark,
            source=source,
            mteb_scores=args.mteb_scores,
            mteb_results=args.mteb_results,
            min_mteb_coverage=args.min_mteb_coverage,
        )
    except ValueError as exc:
        sys.exit(str(exc))
    build_demo(state).launch(
        server_name=args.host, server_port=args.port, show_error=True, head=HEAD
    )


if __name__ == "__main__":
    main()
