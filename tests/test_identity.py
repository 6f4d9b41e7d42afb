"""Issue 35: a score is what it was computed from, never just a name.

Each test is named after the issue's item it proves. The runs use the hashing encoder (no
model); ~10 s in all.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.data import load_task
from chemteb_eval.runner import run
from chemteb_eval.tasks.custom import TaskFileError, fingerprint_files, read_task_file

from .helpers.hashing_encoder import HashingEncoder
from .test_custom_tasks import PAIRS, _run, write_pairs


def _result(report: Any, name: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads((report.results_dir / f"{name}.json").read_text())
    return out


def test_a_result_records_its_declaration_and_its_data(tmp_path: Path) -> None:
    files = [write_pairs(tmp_path)]
    report = _run(files, tmp_path / "results")
    result = _result(report, "SynonymPairs")
    task = read_task_file(files[0]).to_task()
    assert result["task_declaration"] == task.declaration_digest()
    assert (
        result["dataset_revision"] == task.revision == fingerprint_files(tmp_path / "synonyms.csv")
    )


@pytest.mark.parametrize(
    ("edit", "rescored"),
    [
        ("prompts: {query: 'Represent the term: '}\n", True),  # a prompt
        ("main_score: max_ap\n", True),  # the main score
        ("description: other words\n", False),  # changes no number
        ("columns: {sentence1: sentence1}\n", False),  # a column mapped to itself: the same
    ],
)
def test_an_edited_declaration_is_scored_again(tmp_path: Path, edit: str, rescored: bool) -> None:
    files = [write_pairs(tmp_path)]
    out = tmp_path / "results"
    first = _run(files, out)
    was = _result(first, "SynonymPairs")["task_declaration"]
    files[0].write_text(files[0].read_text() + edit)
    now = read_task_file(files[0]).to_task().declaration_digest()
    lines: list[str] = []
    again = _run(files, out, lines)
    assert (now != was) is rescored
    assert again.statuses == {"SynonymPairs": "done" if rescored else "skipped"}
    said = any("declaration changed since SynonymPairs.json" in line for line in lines)
    assert said is rescored
    assert _result(again, "SynonymPairs")["task_declaration"] == now


def test_the_declaration_digest_covers_what_changes_a_number_and_only_that(
    tmp_path: Path,
) -> None:
    task = read_task_file(write_pairs(tmp_path)).to_task()
    same = [replace(task, description="other words"), replace(task, name="Renamed")]
    assert {t.declaration_digest() for t in same} == {task.declaration_digest()}
    other = [
        replace(task, prompts={"query": "q: "}),
        replace(task, eval_splits=("dev",)),
        replace(task, main_score="max_ap"),
        replace(task, columns={"a": "sentence1"}),
        replace(task, data_format="jsonl"),
    ]
    digests = {t.declaration_digest() for t in other}
    assert len(digests) == len(other) and task.declaration_digest() not in digests


def test_an_old_result_without_a_digest_still_reads_and_skips(tmp_path: Path) -> None:
    """Migration: a file written before digests were recorded is judged by the declaration
    recorded beside it: the same one skips (nothing lost), another rescores."""
    files = [write_pairs(tmp_path)]
    out = tmp_path / "results"
    first = _run(files, out)
    path = first.results_dir / "SynonymPairs.json"
    payload = json.loads(path.read_text())
    del payload["task_declaration"]
    path.write_text(json.dumps(payload))
    assert _run(files, out).statuses == {"SynonymPairs": "skipped"}
    files[0].write_text(files[0].read_text() + "prompts: {query: 'q: '}\n")
    assert _run(files, out).statuses == {"SynonymPairs": "done"}


def test_files_changed_while_the_model_loads_are_scored_as_read_and_named_so(
    tmp_path: Path,
) -> None:
    """The fingerprint and the scores come from one read: the task file is read (and its
    files fingerprinted) before the model loads; an edit in between is scored as it is read
    at load time, and the result names those bytes, with a line saying so."""
    files = [write_pairs(tmp_path)]
    declared = read_task_file(files[0])
    (tmp_path / "synonyms.csv").write_text(PAIRS + "benzene,cyclohexane,0\n")  # meanwhile
    lines: list[str] = []
    report = run(
        HashingEncoder(),
        tasks=[declared.to_task()],
        data_paths={"SynonymPairs": str(declared.source)},
        output_dir=tmp_path / "results",
        use_cache=False,
        progress=False,
        log=lines.append,
    )
    result = _result(report, "SynonymPairs")
    assert result["dataset_revision"] == fingerprint_files(tmp_path / "synonyms.csv")
    assert result["dataset_revision"] != declared.fingerprint
    assert any("changed after the task file was read" in line for line in lines)
    # six pairs scored (the file as read at load time), not the five fingerprinted first
    assert result["scores"]["test"][0]["max_f1"] is not None
    scored: list[str] = []
    data = load_task(declared.to_task(), data_path=declared.source, scored=scored.append)[
        "default"
    ]["test"]
    assert len(data.labels) == 6 and scored == [result["dataset_revision"]]


def _hub_folder(tmp_path: Path, card_files: str) -> Path:
    data = tmp_path / "pairs"
    data.mkdir()
    (data / "test.csv").write_text(
        PAIRS.replace("sentence1,sentence2,label", "sentence1,sentence2,labels")
    )
    (data / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        f"  - split: test\n    path: {card_files}\n---\nPairs.\n"
    )
    task_file = tmp_path / "pairs.yaml"
    task_file.write_text(
        "name: HubPairs\ntype: PairClassification\nsource: {path: pairs, format: hub}\n"
    )
    return task_file


def test_a_hub_folders_csv_files_are_in_the_fingerprint(tmp_path: Path) -> None:
    task_file = _hub_folder(tmp_path, "test.csv")
    before = read_task_file(task_file)
    data = load_task(before.to_task(), data_path=before.source)["default"]["test"]
    assert len(data.labels) == 5  # the CSV the card names is what is read
    with (tmp_path / "pairs" / "test.csv").open("a") as handle:
        handle.write("benzene,cyclohexane,0\n")
    after = read_task_file(task_file)
    assert after.fingerprint != before.fingerprint  # a CSV's byte changes the data's name
    (tmp_path / "pairs" / "notes.txt").write_text("results, notes: not read")
    assert read_task_file(task_file).fingerprint == after.fingerprint


@pytest.mark.parametrize("pattern", ["../outside.csv", "/etc/hosts", "hf://datasets/x/y.csv"])
def test_a_card_pointing_outside_its_folder_is_refused(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "outside.csv").write_text(PAIRS)
    with pytest.raises(TaskFileError, match="outside the folder"):
        read_task_file(_hub_folder(tmp_path, pattern))


def test_a_link_out_of_the_source_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere"
    secret.mkdir()
    (secret / "test.csv").write_text(PAIRS)
    task_file = _hub_folder(tmp_path, "test.csv")
    (tmp_path / "pairs" / "test.csv").unlink()
    (tmp_path / "pairs" / "test.csv").symlink_to(secret / "test.csv")
    with pytest.raises(TaskFileError, match="leads outside"):
        read_task_file(task_file)
