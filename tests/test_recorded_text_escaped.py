"""Recorded text that the Space or a model card renders (a custom task's description and name,
recorded beside someone's results as ``{Task}.task.yaml``; a model's name from model_meta.json)
is escaped the way model names are: rendered by a CommonMark parser with GFM tables, it holds no
tag, no link and no image, and a Markdown table holding it keeps its cells. ~2 s."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest

from chemteb_eval.hub.model_card import card_with_results
from chemteb_eval.results.correlations import Correlations
from chemteb_eval.results.markup import md
from chemteb_eval.tasks.recorded import TASK_FILE_SUFFIX, read_recorded_task

from .conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "space"))
import analysis
from tabs import task as task_tab

HOSTILE = (
    "<img src=x onerror=alert(1)> [link](javascript:alert(1)) | pipe\n# heading\n- item\r\nend"
)
FLAT = "<img src=x onerror=alert(1)> [link](javascript:alert(1)) | pipe # heading - item end"


def _render(markdown: str) -> str:
    markdown_it = pytest.importorskip("markdown_it")
    return str(markdown_it.MarkdownIt("commonmark").enable(["table"]).render(markdown))


def _no_markup(rendered: str) -> None:
    tags = set(re.findall(r"<(\w+)", rendered))
    assert tags <= {"p", "strong", "code", "table", "thead", "tbody", "tr", "th", "td"}, rendered
    assert "javascript:" not in re.sub(r">[^<]*<", "><", rendered)  # not in any tag's attribute


def _recorded(folder: Path, description: str) -> Path:
    """A task declaration as a run records it beside its results."""
    import yaml

    declaration = {
        "name": "www.evil.com_x_",  # a valid name that would autolink and emphasise
        "type": "PairClassification",
        "description": description,
        "source": {"path": "pairs.csv", "format": "csv", "fingerprint": "sha256:" + "0" * 16},
        "splits": ["test"],
    }
    path = folder / f"www.evil.com_x_{TASK_FILE_SUFFIX}"
    path.write_text(yaml.safe_dump(declaration))
    return path


def test_a_recorded_task_description_and_name_render_as_text_on_the_task_card(
    tmp_path: Path,
) -> None:
    record = read_recorded_task(_recorded(tmp_path, HOSTILE))
    assert "\n" in record.description  # the recorded text keeps its line breaks
    rendered = _render(task_tab._card(record, record.main_score, None))
    _no_markup(rendered)
    assert rendered.count("<p>") == 3  # title line, dataset line, description: no heading, list
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    assert FLAT in " ".join(text.split())
    assert "www.evil.com_x_" in text  # the name, neither autolinked nor emphasised


def test_escaped_recorded_text_keeps_a_markdown_table_whole() -> None:
    rows = f"| task | description |\n|---|---|\n| {md('www.evil.com_x_')} | {md(HOSTILE)} |\n"
    rendered = _render(rows)
    _no_markup(rendered)
    assert rendered.count("<tr>") == 2 and rendered.count("<td>") == 2  # one row, two cells
    cell = re.findall(r"<td>(.*?)</td>", rendered, re.S)[1]
    assert html.unescape(cell) == FLAT


def test_task_names_in_the_correlation_note_are_escaped() -> None:
    names = ["www.evil.com", "a-_b_"]  # unescaped: a GFM autolink, and "a-<em>b</em>"
    corr = Correlations(
        labels=names,
        groups=["Retrieval", "Retrieval"],
        spearman=[[1.0, -0.5], [-0.5, 1.0]],
        pearson=[[1.0, -0.5], [-0.5, 1.0]],
    )
    note = analysis._tasks_note(corr, None, 3, "spearman")  # type: ignore[arg-type]
    rendered = _render(note)
    assert "<a " not in rendered and "<em>" not in rendered
    assert "www.evil.com × a-_b_ (-0.50)" in html.unescape(rendered)


def test_a_model_card_heading_renders_a_recorded_model_name_as_text() -> None:
    card = card_with_results(None, HOSTILE, [])
    assert card is not None
    body = card.split("---\n", 2)[2]
    rendered = _render(body)
    assert rendered.startswith("<h1>") and rendered.count("<h1>") == 1
    assert not set(re.findall(r"<(\w+)", rendered)) - {"h1"}, rendered
    assert html.unescape(re.sub(r"<[^>]+>", "", rendered)).strip() == FLAT
