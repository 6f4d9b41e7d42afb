"""The run records beside a model's results (``runs.jsonl``), read and written as untrusted files:
a torn line stays apart from the next record, a planted link or a FIFO is refused (never
followed, never a hang), a legacy ``run_meta.json`` moves in without a rewrite that could lose
another run's line. Cost: <1 s."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from chemteb_eval._files import append_json_line
from chemteb_eval.results.runs import (
    LEGACY_RUN_META,
    RUNS_FILE,
    latest_run,
    migrate_run_meta,
    read_runs,
    run_record,
)

DONE = {"tasks": {"T": "done"}}
SKIPPED = {"tasks": {"T": "skipped"}}


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    log = tmp_path / RUNS_FILE
    log.write_text(json.dumps({"run_id": "a", **DONE}) + '\n{"run_id": "b", "tas')  # a crash
    append_json_line(log, {"run_id": "c", **DONE})
    records, problems = read_runs(tmp_path)
    assert [r["run_id"] for r in records] == ["a", "c"]
    assert len(problems) == 1 and "line 2" in problems[0]


def test_links_fifos_and_devices_are_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("private\n")
    folder = tmp_path / "rev"
    folder.mkdir()
    (folder / RUNS_FILE).symlink_to(outside)
    with pytest.raises(ValueError, match="a link; not followed"):
        append_json_line(folder / RUNS_FILE, {"run_id": "x"})
    assert outside.read_text() == "private\n"
    assert read_runs(folder) == ([], [f"{folder / RUNS_FILE}: a link; not followed"])
    (folder / RUNS_FILE).unlink()
    (folder / RUNS_FILE).symlink_to(tmp_path / "dangling")
    with pytest.raises(ValueError, match="a link"):
        append_json_line(folder / RUNS_FILE, {"run_id": "x"})
    assert not (tmp_path / "dangling").exists()  # not created through the link
    (folder / RUNS_FILE).unlink()
    os.mkfifo(folder / RUNS_FILE)
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"cannot be appended to|not a regular file"):
        append_json_line(folder / RUNS_FILE, {"run_id": "x"})
    assert time.perf_counter() - started < 2  # no hang waiting for a reader
    records, problems = read_runs(folder)
    assert records == [] and "not a regular file" in problems[0]


def test_records_that_are_not_objects_are_reported(tmp_path: Path) -> None:
    (tmp_path / RUNS_FILE).write_text('[1, 2]\n"text"\n{"run_id": "a"}\n')
    records, problems = read_runs(tmp_path)
    assert records == [{"run_id": "a"}] and len(problems) == 2


def test_migration_appends_and_the_moved_record_reads_as_the_oldest(tmp_path: Path) -> None:
    (tmp_path / RUNS_FILE).write_text(json.dumps({"run_id": "new", **SKIPPED}) + "\n")
    legacy = {"run_id": "old", **DONE, "hardware": {"cpus": 2}}
    (tmp_path / LEGACY_RUN_META).write_text(json.dumps(legacy))
    assert migrate_run_meta(tmp_path) is None
    assert not (tmp_path / LEGACY_RUN_META).exists()
    lines = [json.loads(x) for x in _lines(tmp_path / RUNS_FILE)]
    assert [r["run_id"] for r in lines] == ["new", "old"]  # appended: another run's line is safe
    records, _ = read_runs(tmp_path)
    assert [r["run_id"] for r in records] == ["old", "new"]  # the moved one is the oldest
    assert run_record(tmp_path)["hardware"] == {"cpus": 2}  # the last run that scored
    # nothing left to move; a record already in runs.jsonl is not added twice
    assert migrate_run_meta(tmp_path) is None
    (tmp_path / LEGACY_RUN_META).write_text(json.dumps(legacy))
    migrate_run_meta(tmp_path)
    assert len(_lines(tmp_path / RUNS_FILE)) == 2


@pytest.mark.parametrize(
    "legacy, runs",
    [
        ({"run_id": ["not", "hashable"], **DONE}, ""),
        ({"run_id": "a", **DONE}, json.dumps({"run_id": {"x": 1}}) + "\n"),
        ({**DONE}, ""),  # no run id at all
    ],
)
def test_odd_run_ids_migrate_without_crashing(
    tmp_path: Path, legacy: dict[str, object], runs: str
) -> None:
    (tmp_path / LEGACY_RUN_META).write_text(json.dumps(legacy))
    (tmp_path / RUNS_FILE).write_text(runs)
    assert migrate_run_meta(tmp_path) is None
    assert not (tmp_path / LEGACY_RUN_META).exists()
    assert any(r.get("tasks") == DONE["tasks"] for r in read_runs(tmp_path)[0])


@pytest.mark.parametrize("content", ["[1, 2]", "{not json", "\x00\xff binary", "NaN"])
def test_an_unreadable_legacy_record_is_left_in_place_and_said(
    tmp_path: Path, content: str
) -> None:
    (tmp_path / LEGACY_RUN_META).write_text(content, errors="surrogateescape")
    said = migrate_run_meta(tmp_path)
    assert said is not None and said.startswith(f"{tmp_path / LEGACY_RUN_META}: left in place")
    assert (tmp_path / LEGACY_RUN_META).exists() and not (tmp_path / RUNS_FILE).exists()


def test_a_linked_legacy_record_is_never_copied_in(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"api_key": "sk-planted", **DONE}))
    folder = tmp_path / "rev"
    folder.mkdir()
    (folder / LEGACY_RUN_META).symlink_to(secret)
    said = migrate_run_meta(folder)
    assert said is not None and "a link; not followed" in said
    assert not (folder / RUNS_FILE).exists()
    records, problems = read_runs(folder)
    assert records == [] and "a link" in problems[0]


def test_latest_run_is_what_run_meta_json_held() -> None:
    assert latest_run([]) == {}
    first, rerun = {"run_id": "1", **SKIPPED}, {"run_id": "2", **SKIPPED}
    assert latest_run([first, rerun]) == first  # nothing scored: the first run
    scored = {"run_id": "3", **DONE}
    assert latest_run([first, scored, rerun]) == scored  # a rerun that scored nothing: kept


def test_a_results_folder_that_cannot_be_written_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from chemteb_eval.errors import ChemtebError
    from chemteb_eval.results import model_folder
    from chemteb_eval.runner import stages

    from .helpers.hashing_encoder import HashingEncoder

    def read_only(path: Path, payload: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(model_folder, "write_json_atomic", read_only)  # an existing read-only mount
    with pytest.raises(ChemtebError, match=r"^--output-dir: .*model_meta\.json cannot be written"):
        stages.run(HashingEncoder(), output_dir=tmp_path, use_cache=False, log=lambda m: None)
