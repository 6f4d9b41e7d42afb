"""``docs/extending.md`` is executable truth: its "Adding a task type" table lists every per-type
table of the house, each holds the types its ``covers`` cell says, and the metric table's rows
give their Spaces what they need to start. Cost: < 1 s.

A new task type then fails here, naming the table and the file, until every row is written —
the places no other test caught (a metric Space's example upload, the ChemTEB-vs-MTEB axes) are
rows or derived from ``TaskKind``."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.metric_docs import METRICS
from chemteb_eval.tasks.kinds import KINDS, TaskKind

from .conftest import REPO_ROOT

DOC = REPO_ROOT / "docs" / "extending.md"
SCANNED = ("chemteb_eval", "space", "metrics")  # where a per-type table may sit
TYPES = frozenset(KINDS)

# What a ``covers`` cell promises: the types the table must hold (``None``: no promise).
COVERS: Mapping[str, Callable[[TaskKind], bool] | None] = {
    "every type": lambda k: True,
    "types with file rows": lambda k: bool(k.file_columns) and k.file_layout == "rows",
    "types with file columns": lambda k: bool(k.file_columns),
    "types with items": None,  # the scorers that return items: checked to name real types
    "optional": None,
    "every metric": None,  # METRICS: its own checks below
    "—": None,
}


def _rows() -> list[dict[str, str]]:
    text = DOC.read_text(encoding="utf-8").split("## Adding a task type", 1)[1]
    text = text.split("\n## ", 1)[0]
    lines = [line for line in text.splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


ROWS = _rows()
LISTED = [r for r in ROWS if r["table"] != "—"]


def _code(cell: str) -> str:
    return cell.strip().strip("`")


def _table(row: dict[str, str]) -> Any:
    module = _code(row["file"]).removesuffix(".py").replace("/", ".")
    value = getattr(importlib.import_module(module), _code(row["table"]))
    return value() if callable(value) and not isinstance(value, Mapping) else value


def _keys(table: Any) -> set[str]:
    if isinstance(table, Mapping):
        return {k for k in table if isinstance(k, str)}
    # a tuple of (family, {type or role: prompt}) pairs: the types its mappings name
    return {k for _, mapping in table for k in mapping}


def test_the_table_is_read_and_every_cell_is_known() -> None:
    assert len(ROWS) >= 10 and [r["step"] for r in ROWS] == [str(i + 1) for i in range(len(ROWS))]
    for row in ROWS:
        assert row["covers"] in COVERS, f"extending.md step {row['step']}: {row['covers']!r}"
        path = _code(row["file"])
        if "<" not in path:
            assert (REPO_ROOT / path).exists(), f"extending.md step {row['step']}: {path}"


@pytest.mark.parametrize("row", LISTED, ids=lambda r: _code(r["table"]))
def test_each_listed_table_holds_the_types_it_says(row: dict[str, str]) -> None:
    table = _table(row)
    rule = COVERS[row["covers"]]
    keys = _keys(table) if row["covers"] != "every metric" else set()
    if rule is not None:
        needed = {name for name, kind in KINDS.items() if rule(kind)}
        missing = needed - keys
        assert not missing, f"{_code(row['file'])}: {_code(row['table'])} lacks {sorted(missing)}"
    if row["covers"] in ("every type", "types with items"):
        assert keys <= TYPES, f"{_code(row['table'])}: {sorted(keys - TYPES)} are not task types"


def _type_keyed_tables(paths: Iterable[Path]) -> set[tuple[str, str]]:
    """(file, top-level name) of every dict literal with two or more task-type names as keys."""
    found = set()
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for top in tree.body:
            targets = (
                top.targets
                if isinstance(top, ast.Assign)
                else [top.target]
                if isinstance(top, ast.AnnAssign)
                else []
            )
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            for node in ast.walk(top):
                if not isinstance(node, ast.Dict):
                    continue
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                if len(keys & TYPES) >= 2:
                    where = str(path.relative_to(REPO_ROOT))
                    found.add((where, names[0] if names else f"<inside {type(top).__name__}>"))
    return found


def test_every_table_keyed_by_type_names_is_listed() -> None:
    paths = [p for folder in SCANNED for p in sorted((REPO_ROOT / folder).rglob("*.py"))]
    found = _type_keyed_tables(paths)
    assert found, "the scan finds the tables it is meant to find"
    listed = {(_code(r["file"]), _code(r["table"])) for r in LISTED}
    unlisted = found - listed
    assert not unlisted, f"list these in docs/extending.md's task-type table: {sorted(unlisted)}"


def test_a_metric_space_that_launches_the_widget_has_its_example_upload() -> None:
    for metric in METRICS:
        app = (REPO_ROOT / "metrics" / metric.name / "app.py").read_text(encoding="utf-8")
        uses_widget = "launch_widget" in app
        assert uses_widget == (metric.example is not None), metric.name
        if uses_widget:  # and hands it the very function its row names, by a plain import
            imported = {
                f"{node.module}:{alias.name}"
                for node in ast.walk(ast.parse(app))
                if isinstance(node, ast.ImportFrom)
                for alias in node.names
            }
            assert metric.example in imported, f"metrics/{metric.name}/app.py: {metric.example}"
        example = metric.load_example()
        if example is None:
            continue
        import numpy as np

        arrays, options = example(np.random.default_rng(0))
        assert arrays and all(isinstance(v, np.ndarray) for v in arrays.values()), metric.name
        assert isinstance(options, dict), metric.name


def test_the_sketch_of_a_new_type_fails_here_until_its_rows_are_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kind added to ``KINDS`` alone (the sketch's first step) is caught by every table that
    must hold every type — this test cannot pass vacuously."""
    from dataclasses import replace

    import chemteb_eval.tasks.kinds as kinds

    sketch = replace(KINDS["Retrieval"], name="Sketched")  # type: ignore[arg-type]
    monkeypatch.setattr(kinds, "KINDS", {**KINDS, "Sketched": sketch})
    monkeypatch.setitem(globals(), "KINDS", kinds.KINDS)
    caught = []
    for row in LISTED:
        if row["covers"] == "every type" and _code(row["table"]) != "KINDS":
            with pytest.raises(AssertionError, match="lacks \\['Sketched'\\]"):
                test_each_listed_table_holds_the_types_it_says(row)
            caught.append(_code(row["table"]))
    assert {"DATA_CLASSES", "HUB_LOADERS", "KIND_RUNS"} <= set(caught)
