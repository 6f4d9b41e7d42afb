"""One task in detail: the picker (its choices follow the benchmark), the task's card, its
table (the main score, its interval, the type's other keys, seconds) and CSV."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gradio as gr
from state import AppState, Filters, Param
from views import frame, md, md_code, write_csv

from chemteb_eval.results.board import DETAIL_KEYS
from chemteb_eval.results.leaderboard import task_size
from chemteb_eval.tasks import Task, main_score

from .base import Layout, Tab, download_button, table_update


def layout(state: AppState, default: Mapping[str, Any]) -> Layout:
    board = state.boards[state.default_benchmark]
    # Every name any benchmark can offer, so that updated choices always validate.
    all_tasks = sorted({t.name for b in state.boards.values() for t in b.tasks})
    picker = gr.Dropdown(
        all_tasks, value=board.tasks[0].name, allow_custom_value=True, label="Task"
    )
    info = gr.Markdown()
    table = gr.Dataframe(elem_id="task-table", interactive=False, max_height=900)
    return Layout(controls=(picker,), outputs=(picker, info, table, download_button("task-csv")))


def view(state: AppState, filters: Filters, task: str) -> list[Any]:
    board = filters.board(state)
    names = [t.name for t in board.tasks]
    name = task if task in names else names[0]
    record = next(t for t in board.tasks if t.name == name)
    size = task_size(record)
    key = main_score(board.benchmark, record)
    info = _card(record, key, size)
    rows = filters.rows(board, board.per_task.get(name, []))
    columns = list(board.per_task[name][0]) if board.per_task.get(name) else ["Rank", "Model"]
    df = frame(rows, columns=columns, scores={key, *DETAIL_KEYS[record.type]})
    return [
        gr.Dropdown(choices=names, value=name, allow_custom_value=True),
        info,
        table_update(df),
        write_csv(df, f"{board.benchmark.name}-{name}"),
    ]


def _card(record: Task, key: str, size: int | None) -> str:
    """The task's card above its table. A custom task's name, description and source come from
    a task file recorded beside someone's results: each is escaped as model names are
    (``md``, ``md_code``), so a description cannot link, embed, or start a heading or list."""
    return (
        f"**{md(record.name)}** · {md(record.type)} · scored by {md_code(key)} "
        f"on {md(', '.join(record.eval_splits))}\n\n"
        f"Dataset: {md_code(record.hf_path or record.builder)}"
        + (f" @ {md_code(record.revision[:10])}" if record.revision else "")
        + f" · samples: {size if size is not None else 'unknown'}"
        + (f"\n\n{md(record.description)}" if record.description else "")
    )


TAB = Tab(id="task", label="Per task", layout=layout, view=view, params=(Param("task", ""),))
