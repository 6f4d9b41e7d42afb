"""Above the tabs: the title, the filter row (whose values every view takes as ``Filters``),
the summary of the chosen benchmark and the notice of skipped files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gradio as gr
from state import OPENNESS, AppState, Filters
from views import md, md_code

from chemteb_eval.results.leaderboard import SIZE_BUCKETS, Leaderboard

from .base import Layout, Tab


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    gr.Markdown(
        "# ChemTEB leaderboard\nWhich embedding model should sit behind chemistry search, "
        "RAG or classification? Scores of the Chemical Text Embedding Benchmark."
        + (f"\n\nResults: {state.source}" if state.source else "")
    )
    with gr.Row():  # in state.FILTERS order
        filters = (
            gr.Dropdown(
                list(state.boards),
                value=default["benchmark"],
                label="Benchmark",
                scale=2,
                elem_id="benchmark",
            ),
            gr.Radio(list(OPENNESS), value="all", label="Weights", scale=2, elem_id="weights"),
            gr.CheckboxGroup(
                list(SIZE_BUCKETS), label="Size (parameters)", scale=3, elem_id="size"
            ),
            gr.Dropdown(
                state.families, multiselect=True, label="Family", scale=2, elem_id="family"
            ),
            gr.Textbox(label="Search models", placeholder="e.g. bge", scale=2, elem_id="search"),
        )
    summary = gr.Markdown(elem_id="summary")
    notice = gr.Markdown(elem_id="notice")
    return Layout(controls=filters, outputs=(summary, notice))


def view(state: AppState, filters: Filters) -> list[Any]:
    """The summary (and why the page opened on this benchmark) and the notice."""
    board = filters.board(state)
    summary = _summary(board, filters.rows(board, board.overall))
    if state.opened_because and board.benchmark.name == state.default_benchmark:
        summary += (
            f"\n\nOpened on **{md(board.benchmark.name)}**, {md(state.opened_because)}; "
            "choose another under *Benchmark*."
        )
    return [summary, _notice(board)]


def _notice(board: Leaderboard) -> str:
    skipped = sorted(set(board.notices))
    lines = []
    if skipped:
        shown = "\n".join(f"- {md_code(s)}" for s in skipped[:200])
        more = f"\n- … and {len(skipped) - 200} more" if len(skipped) > 200 else ""
        lines.append(
            f"⚠️ **{len(skipped)} result file(s) skipped** (malformed, or without the "
            f"benchmark's main score):\n\n{shown}{more}"
        )
    lines += [f"Note: {md(note)}" for note in board.notes]
    if board.revision_note:
        lines.append(f"Note: {board.revision_note}")
    return "\n\n".join(lines)


def _summary(board: Leaderboard, shown: Sequence[Mapping[str, Any]]) -> str:
    if not board.overall:
        return (
            f"**{board.benchmark.name}**: no model has results on its {len(board.tasks)} tasks "
            "yet. The About tab says how to submit some."
        )
    complete = sum(1 for r in shown if r["Complete"])
    agg = board.benchmark.aggregation
    order = (
        f"ranked by Reciprocal Rank Fusion over task types (k = {agg.rrf_k or 10})"
        if agg.kind == "rrf"
        else "ranked by the mean over tasks"
    )
    return (
        f"**{board.benchmark.name}** — {len(board.tasks)} tasks, {order}. Showing "
        f"{len(shown)} of {len(board.overall)} models ({complete} complete; models marked "
        "⚠ lack tasks and are listed after the ranked ones)."
    )


# Not a tab: laid out above them; its controls are the filters (state.FILTERS), which every
# handler takes first, so it has no parameters of its own.
HEADER = Tab(id="header", label="", layout=layout, view=view)
