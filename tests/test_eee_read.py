"""Every Eval Ever records read back (issue 49): a folder of exported records ranks as its
results folder does (models, scores, order, intervals from the sidecars), in ``rank``,
``compare`` and the Space; records that fail the schema, and sidecars that do not belong to
their record, are said and left out."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.results.board import read_results
from chemteb_eval.results.eee import datastore_parts, write_eee
from chemteb_eval.results.eee_check import check_instance, check_record
from chemteb_eval.results.ranking import rank_models, task_interval
from chemteb_eval.runner import run
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

from .conftest import REPO_ROOT
from .helpers.eee_schema import eee_package, eee_schema
from .helpers.hashing_encoder import HashingEncoder

jsonschema = pytest.importorskip("jsonschema")

PIPCHEM = get_benchmark("PipChem")


@pytest.fixture(scope="module")
def results(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models on the small PipChem build, the first with an int8 variant of its vectors."""
    out = tmp_path_factory.mktemp("eee-read") / "results"
    quiet: dict[str, Any] = {"use_cache": False, "progress": False, "log": lambda m: None}
    run(HashingEncoder(), output_dir=out, precisions=["int8"], **quiet)
    run(HashingEncoder(dim=16, name="test/small-hash"), output_dir=out, **quiet)
    return out


@pytest.fixture(scope="module")
def exported(results: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eee-out") / "data"
    write_eee(read_results([results], PIPCHEM), PIPCHEM, out)
    return out


def _records(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.json"))


def _rank_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[Any, str]:
    assert chemteb_main(["rank", *args, "-b", "PipChem", "--ci", "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.slow
def test_the_round_trip_ranks_the_same_models_scores_order_and_intervals(
    results: Path, exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine, _ = _rank_json(capsys, str(results))
    theirs, said = _rank_json(capsys, str(exported))
    assert [r["model"] for r in mine] == [r["model"] for r in theirs]
    assert len(mine) == 3 and "[skipped]" not in said
    # the whole JSON: ranks, means, type ranks, RRF, Borda and the rank intervals, which
    # resample the items rebuilt from the sidecars exactly as the items files
    assert theirs == mine
    models = {m.model: m for m in read_results([results], PIPCHEM)}
    back = {m.model: m for m in read_results([exported], PIPCHEM)}
    assert back.keys() == models.keys()
    with_items = 0
    for name, model in models.items():
        assert back[name].scores == model.scores  # every task's main score, to the bit
        assert back[name].details == model.details  # and the scores the Space shows beside it
        for task in benchmark_tasks(PIPCHEM):
            interval = task_interval(model, PIPCHEM, task)
            assert task_interval(back[name], PIPCHEM, task) == interval, (name, task.name)
            with_items += interval is not None
    assert with_items >= 4
    ranked = [r.model for r in rank_models(list(back.values()), PIPCHEM)]
    assert ranked == [r.model for r in rank_models(list(models.values()), PIPCHEM)]


@pytest.mark.slow
def test_exporting_the_read_back_records_writes_the_same_records(
    exported: Path, tmp_path: Path
) -> None:
    again = tmp_path / "data"
    write_eee(read_results([exported], PIPCHEM), PIPCHEM, again)
    # byte for byte, sidecars too: every line's evidence came back whole
    first = {p.relative_to(exported): p.read_bytes() for p in exported.rglob("*") if p.is_file()}
    second = {p.relative_to(again): p.read_bytes() for p in again.rglob("*") if p.is_file()}
    assert len(first) == 6 and first == second


@pytest.mark.slow
def test_compare_and_the_space_read_a_record_as_a_model_folder(
    results: Path, exported: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app

    one = results / "test__hashing-trigrams"
    record = next(p for p in _records(exported) if "test/hashing-trigrams\"" in p.read_text()
                  and "experiment_kwargs" not in p.read_text())  # fmt: skip
    other = next(p for p in _records(exported) if "small-hash" in str(p))
    for pair in ((one, results / "test__small-hash"), (record, other)):
        assert chemteb_main(["compare", *map(str, pair), "-b", "PipChem"]) == 0
    printed = capsys.readouterr().out.split("PipChem: A = ")
    assert len(printed) == 3 and printed[1] == printed[2]  # the same table, line for line
    # the Space: the overall table and a task's table, cell for cell
    mine, theirs = app.build_state([results]), app.build_state([exported])
    for state in (mine, theirs):
        assert "PipChem" in state.boards
    views = [
        app.view_tables(s, "PipChem", "all", [], [], "")[2]["value"]["metadata"]["display_value"]
        for s in (mine, theirs)
    ]
    assert views[0] == views[1] and len(views[0]) == 3
    retrieval = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "Retrieval")
    cells = [
        app.view_task(s, "PipChem", "all", [], [], "", retrieval.name)[2]["value"]
        for s in (mine, theirs)
    ]
    assert cells[0]["metadata"]["display_value"] == cells[1]["metadata"]["display_value"]


def test_the_datastore_folders_are_every_eval_evers_own() -> None:
    """EEE's ``datastore_path_components`` (the 0.3.0 wheel's) names the same folders; where it
    refuses a name, ours says so and writes a safe one."""
    io = eee_package("every_eval_ever.helpers.io")
    for bench, model in (
        ("ChemTEB(paper)", "sentence-transformers/all-MiniLM-L6-v2"),
        ("PipChem", "a/b/c:d"),
        ("PipChem", "org/名前"),
        ("MTEB(eng, v1)", "BAAI/bge-small-en-v1.5"),
        ("PipChem", " org / x "),
    ):
        parts, problem = datastore_parts(bench, model)
        try:
            theirs = io.datastore_path_components(bench, model)
        except ValueError:
            assert problem is not None, (bench, model)
            continue
        assert parts == theirs and problem is None, (bench, model)
    for bench, model in (("PipChem", "final"), ("PipChem", "unknown/x"), ("PipChem", "../x"),
                         ("PipChem", "org/con"), ("a/../b", "org/x")):  # fmt: skip
        parts, problem = datastore_parts(bench, model)
        with pytest.raises(ValueError):
            io.datastore_path_components(bench, model)
        assert problem is not None and all(p not in ("", ".", "..") for p in parts)
        assert all("/" not in p for p in parts)


# -- the schema's rules, held to the real schema in both directions ----------------------------

_WRONG: tuple[Any, ...] = (None, 1, 1.5, "x", True, [], {}, ["x"], {"x": 1})


def _paths(value: Any, where: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [where] if where else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*where, key))
    elif isinstance(value, list):
        for i, item in enumerate(value[:2]):
            out += _paths(item, (*where, i))
    return out


def _mutations(record: Any) -> list[tuple[str, Any]]:
    """Each field of ``record`` deleted, and set to each value of another JSON type."""
    out = []
    for where in _paths(record):
        parent = record
        for step in where[:-1]:
            parent = parent[step]
        if isinstance(parent, dict):
            gone = copy.deepcopy(record)
            target = gone
            for step in where[:-1]:
                target = target[step]
            del target[where[-1]]
            out.append((f"{where} deleted", gone))
        for value in _WRONG:
            changed = copy.deepcopy(record)
            target = changed
            for step in where[:-1]:
                target = target[step]
            target[where[-1]] = value
            out.append((f"{where} = {value!r}", changed))
    return out


def _accepts(check: Any, value: Any) -> bool:
    try:
        check(value)
    except ValueError:
        return False
    return True


@pytest.mark.slow
def test_the_record_check_agrees_with_the_schema_on_every_mutation(exported: Path) -> None:
    validator = jsonschema.Draft7Validator(eee_schema())
    record = json.loads(_records(exported)[0].read_text())
    assert validator.is_valid(record) and _accepts(check_record, record)
    mutations = _mutations(record)
    # unknown top-level fields, other versions, a sidecar path with ".." or no uuid
    for extra in ({"x": 1}, {"schema_version": "0.2.2"}):
        mutations.append((str(extra), {**record, **extra}))
    link = record["detailed_evaluation_results"]
    for bad in ("data/../x/y/z_samples.jsonl", "../a/b/c/" + link["file_path"].split("/")[-1]):
        mutations.append(
            (bad, {**record, "detailed_evaluation_results": {**link, "file_path": bad}})
        )
    assert len(mutations) > 1000
    disagree = [
        what
        for what, value in mutations
        if validator.is_valid(value) != _accepts(check_record, value)
        # 0.3.0 only: the schema itself accepts any version string
        and "schema_version" not in what
    ]
    assert not disagree, disagree[:10]


@pytest.mark.slow
def test_the_line_check_agrees_with_the_instance_schema_on_every_mutation(exported: Path) -> None:
    validator = jsonschema.Draft7Validator(eee_schema("instance"))
    sidecar = next(exported.rglob("*_samples.jsonl"))
    lines = [json.loads(t) for t in sidecar.read_text().splitlines()]
    # one line of each task type
    kinds = {line["metadata"]["task_type"]: line for line in lines}
    assert len(kinds) == 5
    for line in kinds.values():
        assert validator.is_valid(line) and _accepts(check_instance, line)
        disagree = [
            what
            for what, value in _mutations(line)
            if validator.is_valid(value) != _accepts(check_instance, value)
        ]
        assert not disagree, disagree[:10]


# -- attacks: files that do not belong, or are not what they say ------------------------------


def _copy(exported: Path, tmp_path: Path) -> Path:
    out = tmp_path / "data"
    shutil.copytree(exported, out)
    return out


def _with_link(folder: Path, name: str) -> tuple[Path, Path]:
    """The record of model ``name`` with a sidecar, and its sidecar."""
    record = next(p for p in _records(folder) if f'"name": "{name}"' in p.read_text())
    return record, record.with_name(record.stem + "_samples.jsonl")


def _edit(path: Path, change: Any) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


def _intervals(folder: Path, name: str) -> tuple[list[Any], list[str]]:
    model = next(m for m in read_results([folder], PIPCHEM) if m.model == name)
    found = [task_interval(model, PIPCHEM, t) for t in benchmark_tasks(PIPCHEM)]
    return found, model.skipped


@pytest.mark.slow
@pytest.mark.parametrize(
    "attack",
    [
        "checksum",
        "rows",
        "outside",
        "torn",
        "duplicate-sample",
        "other-evaluation",
        "huge",
        "link",
    ],
)
def test_attack49_a_sidecar_that_is_not_its_records_is_left_out_said(
    exported: Path, tmp_path: Path, attack: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chemteb_eval.results import eee_read

    folder = _copy(exported, tmp_path)
    name = "test/small-hash"
    record, sidecar = _with_link(folder, name)
    honest, _ = _intervals(exported, name)
    lines = sidecar.read_text().splitlines(keepends=True)
    if attack == "checksum":  # one score changed, the row count kept
        line = json.loads(lines[0])
        line["metadata"]["ndcg_at_10" if "ndcg_at_10" in line["metadata"] else "y_true"] = "0.5"
        lines[0] = json.dumps(line) + "\n"
        sidecar.write_text("".join(lines))
        said = "checksum"
    elif attack == "rows":  # a line lost, the checksum fixed to match: the row count says
        body = "".join(lines[1:]).encode()
        sidecar.write_bytes(body)
        _edit(record, lambda r: r["detailed_evaluation_results"].update(
            checksum=hashlib.sha256(body).hexdigest()))  # fmt: skip
        said = f"{len(lines) - 1:,} lines; the record says {len(lines):,}"
    elif attack == "outside":  # the path names another model's folder
        other = "data/PipChem/test/hashing-trigrams/" + sidecar.name
        _edit(record, lambda r: r["detailed_evaluation_results"].update(file_path=other))
        said = "not in the record's own folder"
    elif attack == "torn":  # a crash mid-copy: half the last line
        sidecar.write_text("".join(lines)[:-40])
        said = "line"
    elif attack == "duplicate-sample":
        lines[1] = lines[0]
        sidecar.write_text("".join(lines))
        said = "again"
    elif attack == "other-evaluation":  # lines of another record's evaluation
        line = json.loads(lines[0])
        line["evaluation_id"] = "PipChem/someone/else/1"
        lines[0] = json.dumps(line) + "\n"
        sidecar.write_text("".join(lines))
        said = "evaluation_id"
    elif attack == "huge":
        monkeypatch.setattr(eee_read, "MAX_SIDECAR_BYTES", 1000)
        said = "over the 1,000 a sidecar may hold"
    else:  # a link out of the folder, to a file that happens to be valid elsewhere
        target = tmp_path / "elsewhere.jsonl"
        sidecar.rename(target)
        sidecar.symlink_to(target)
        said = "links outside"
    found, skipped = _intervals(folder, name)
    assert any(said in s and "evidence left out" in s for s in skipped), (said, skipped)
    assert found != honest  # the intervals now resample tasks, not the tampered items
    assert all(i is None for i in found)


@pytest.mark.slow
def test_attack49_records_that_fail_the_schema_or_repeat_are_skipped_in_one_line(
    exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(exported, tmp_path)
    records = _records(folder)
    _edit(records[0], lambda r: r["model_info"]["additional_details"].pop("deployment_type"))
    copied = folder / "PipChem" / "copy" / "x" / records[1].name  # one uuid, two places
    copied.parent.mkdir(parents=True)
    shutil.copy(records[1], copied)
    ranked, said = _rank_json(capsys, str(folder))
    skipped = [line for line in said.splitlines() if line.startswith("[skipped]")]
    assert len(skipped) == 2, said
    assert f"{records[0]}: model_info.additional_details: 'deployment_type' is required" in (
        skipped[0] + skipped[1]
    )
    assert any(str(copied) in s and "read once" in s for s in skipped)
    assert len(ranked) == 2  # the two other records, each once
    # a folder where no record can be read: one line, naming the first, and no ranking
    for path in records[1:]:
        _edit(path, lambda r: r.update(schema_version="0.2.2"))
    copied.unlink()
    assert chemteb_main(["rank", str(folder)]) != 0
    err = capsys.readouterr().err
    assert "none could be read" in err and "'deployment_type' is required (and 2 more)" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_attack49_records_of_another_benchmark_and_of_one_model_twice(
    results: Path, exported: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model's records on two benchmarks merge into its row (no task in both); two records
    of one model that share a task are two rows, told apart by their files, never mixed."""
    folder = _copy(exported, tmp_path)
    record, _ = _with_link(folder, "test/small-hash")
    other = folder / "Other" / "test" / "small-hash" / f"{'1' * 8}-1111-4111-8111-{'1' * 12}.json"
    other.parent.mkdir(parents=True)
    body = json.loads(record.read_text())
    body.pop("detailed_evaluation_results")
    body["evaluation_id"] = "Other/test/small-hash/1"
    for result in body["evaluation_results"]:
        result["evaluation_name"] = "Not" + result["evaluation_name"]
    other.write_text(json.dumps(body))
    ranked, _ = _rank_json(capsys, str(folder))
    assert len(ranked) == 3  # merged: the other benchmark's tasks are no PipChem task
    # the same tasks again, other scores: two rows, each named by its file
    for result in body["evaluation_results"]:
        result["evaluation_name"] = result["evaluation_name"].removeprefix("Not")
        result["score_details"]["score"] = 0.0
    other.write_text(json.dumps(body))
    ranked, said = _rank_json(capsys, str(folder))
    names = [r["model"] for r in ranked]
    assert len(names) == 4 and f"test/small-hash [{other}]" in names
    assert f"test/small-hash [{record}]" in names and "each names the same model" in said


# -- round 2 of the outside attack: each test fails on the code before its fix ----------------


def _write_result(root: Path, model: str, task: str, revision: str, scores: dict[str, Any]) -> None:
    folder = root / model.replace("/", "__") / "rev1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": "rev1"}))
    payload = {"task_name": task, "dataset_revision": revision, "scores": scores}
    (folder / f"{task}.json").write_text(json.dumps({**payload, "evaluation_time": 1.0}))


def _refresh_checksum(record: Path, sidecar: Path) -> None:
    body = sidecar.read_bytes()
    _edit(record, lambda r: r["detailed_evaluation_results"].update(
        checksum=hashlib.sha256(body).hexdigest()))  # fmt: skip


@pytest.mark.slow
def test_attack49b_lines_in_another_order_are_the_same_items(
    exported: Path, tmp_path: Path
) -> None:
    """Rows were paired by line order: shuffled lines (checksum fixed) moved the intervals and
    made a record differ from its own results folder in ``compare``. Each row now stands at
    the index its sample id names."""
    import random

    folder = _copy(exported, tmp_path)
    name = "test/hashing-trigrams (output_dtypes=int8)"
    record, sidecar = _with_link(folder, name)
    lines = sidecar.read_text().splitlines(keepends=True)
    random.Random(0).shuffle(lines)
    sidecar.write_text("".join(lines))
    _refresh_checksum(record, sidecar)
    honest, _ = _intervals(exported, name)
    found, skipped = _intervals(folder, name)
    assert found == honest and not skipped
    # a sample id that names no row: left out, said (a query's, whose interval reads them)
    at = next(i for i, t in enumerate(lines) if '"task_type": "Retrieval"' in t)
    line = json.loads(lines[at])
    line["sample_id"] = "test/999999"
    lines[at] = json.dumps(line) + "\n"
    sidecar.write_text("".join(lines))
    _refresh_checksum(record, sidecar)
    _, skipped = _intervals(folder, name)
    assert any("indices are not 0 to" in s for s in skipped), skipped


@pytest.mark.slow
def test_attack49b_results_without_a_run_record_export_to_the_same_file(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without runs.jsonl the record's time is the export's, which reached every sidecar line
    and so the uuid: each export wrote another file, and the folder ranked each model twice."""
    import time

    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    for log in copy.rglob("runs.jsonl"):
        log.unlink()
    models = read_results([copy], PIPCHEM)
    first = write_eee(models, PIPCHEM, tmp_path / "data")
    later = time.time() + 3600
    monkeypatch.setattr(time, "time", lambda: later)
    assert write_eee(read_results([copy], PIPCHEM), PIPCHEM, tmp_path / "data") == first
    assert len(_records(tmp_path / "data")) == 3


def test_attack49b_a_score_over_other_splits_or_weighted_subsets_reads_as_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record's score over three splits was read as one split's (0.6 for a test score of
    0.1); a SemEval year's size-weighted score over its subsets was lost (no n_pairs)."""
    results = tmp_path / "results"
    entry = {"hf_subset": "default", "languages": ["eng-Latn"]}
    _write_result(results, "org/m", "ChemHotpotQARetrieval", "1840e8a5ac6ec752bbdd97d543ead0189bc7c25b", {
        split: [{**entry, "ndcg_at_10": v, "main_score": v}]
        for split, v in (("train", 0.9), ("dev", 0.8), ("test", 0.1))
    })  # fmt: skip
    subsets = [("MSRpar", 0.5, 100), ("OnWN", 0.6, 300), ("SMTeuroparl", 0.7, 50)]
    _write_result(results, "org/m", "SemEvalSTS2012", "x", {"test": [
        {"cosine_pearson": v, "main_score": v, "n_pairs": n, "hf_subset": s, "languages": []}
        for s, v, n in subsets
    ]})  # fmt: skip
    for bench, task in (("ChemTEB", "ChemHotpotQARetrieval"), ("SciEmbed", "SemEvalSTS2012")):
        out = tmp_path / f"eee-{bench}"
        assert chemteb_main(["export", str(results), "-b", bench, "--output-dir", str(out)]) == 0
        mine = read_results([results], get_benchmark(bench))[0].scores
        theirs = read_results([out], get_benchmark(bench))[0].scores
        assert theirs[task] == mine[task], bench
    capsys.readouterr()
    # ChemTEB(paper) scores the test split alone: the record's mean over three is not it
    paper = read_results([tmp_path / "eee-ChemTEB"], get_benchmark("ChemTEB(paper)"))[0]
    assert "ChemHotpotQARetrieval" not in paper.scores
    assert any("one score over the splits train, dev, test" in s for s in paper.skipped)
    assert read_results([results], get_benchmark("ChemTEB(paper)"))[0].scores[
        "ChemHotpotQARetrieval"
    ] == pytest.approx(0.1)


@pytest.mark.slow
def test_attack49b_records_of_two_models_never_merge_and_a_stray_record_hides_nothing(
    results: Path, exported: Path, tmp_path: Path
) -> None:
    """Records were merged by their display name (two ids named alike became one complete
    row); a uuid-named file inside a model folder hid that folder's results."""
    folder = _copy(exported, tmp_path)
    record, _ = _with_link(folder, "test/small-hash")
    twin = json.loads(record.read_text())
    twin.pop("detailed_evaluation_results")
    twin["model_info"]["id"] = "other/small-hash"
    twin["evaluation_id"] += "-other"
    twin["evaluation_results"] = twin["evaluation_results"][:1]
    record.with_name(f"{'2' * 8}-2222-4222-8222-{'2' * 12}.json").write_text(json.dumps(twin))
    twin["model_info"]["name"] = "test/small-hash"
    rows = read_results([folder], PIPCHEM)
    names = sorted(m.model for m in rows)
    assert len(names) == 4 and sum(n.startswith("test/small-hash") for n in names) == 2, names
    # a stray record (junk) in a model's revision folder: the model's results still read
    mine = tmp_path / "results"
    shutil.copytree(results, mine)
    revision = next((mine / "test__small-hash").iterdir())
    (revision / f"{'3' * 8}-3333-4333-8333-{'3' * 12}.json").write_text("{}")
    rows = read_results([mine], PIPCHEM)
    assert any(m.model == "test/small-hash" and len(m.scores) == 7 for m in rows)


@pytest.mark.slow
def test_attack49b_one_uuid_with_two_contents_and_one_task_twice_are_refused(
    exported: Path, tmp_path: Path
) -> None:
    """Of one uuid with other content in two folders, the folder names chose the winner;
    a task whose score a record lists twice read the last one."""
    folder = _copy(exported, tmp_path)
    record, _ = _with_link(folder, "test/small-hash")
    other = folder / "PipChem" / "test" / "zzz" / record.name
    other.parent.mkdir()
    body = json.loads(record.read_text())
    body["evaluation_results"][0]["score_details"]["score"] = 0.99
    other.write_text(json.dumps(body))
    rows = read_results([folder], PIPCHEM)
    assert all(not m.model.startswith("test/small-hash") for m in rows)
    said = [s for m in rows for s in m.skipped]
    assert any("with other content: none of them is read" in s for s in said), said
    other.unlink()
    twice = copy.deepcopy(json.loads(record.read_text()))
    twice["evaluation_results"].append(copy.deepcopy(twice["evaluation_results"][0]))
    twice["evaluation_results"][-1]["score_details"]["score"] = 0.99
    record.write_text(json.dumps(twice))
    said = [s for m in read_results([folder], PIPCHEM) for s in m.skipped]
    assert any("is in two evaluation_results" in s for s in said), said


@pytest.mark.slow
def test_attack49b_export_says_what_it_cannot_write_as_eee_wants(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Notes on refused folder names were never printed (and the fallbacks, ``data`` and
    ``CON``, were refused too); a name on two lines was exported, and its reader refused it."""
    io = eee_package("every_eval_ever.helpers.io")
    results = tmp_path / "results"
    entry = {"ndcg_at_10": 0.5, "main_score": 0.5, "hf_subset": "default", "languages": []}
    task = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "Retrieval")
    for model in ("data/x", "CON/aux", "org/x\ny"):
        _write_result(results, model, task.name, str(task.revision), {"test": [entry]})
    assert (
        chemteb_main(["export", str(results), "-b", "PipChem", "--output-dir", str(tmp_path / "o")])
        == 0
    )
    said = capsys.readouterr()
    assert said.err.count("[note]") == 2 and "rename it" in said.err
    assert "not on one line: no record written" in said.err
    assert "rename the 2 folder(s)" in said.out
    for path in _records(tmp_path / "o"):
        parts = path.relative_to(tmp_path / "o").parts[:3]
        for part in parts:  # each folder name passes EEE's path rules
            io._required_path_component(part, "folder")
    assert len(_records(tmp_path / "o")) == 2


# -- round 3 (a second outside attack) --------------------------------------------------------


@pytest.mark.slow
def test_attack49c_two_revisions_of_one_model_are_two_rows_named_by_their_files(
    exported: Path, tmp_path: Path
) -> None:
    """Two revisions of one id were two rows of one name (the Space's task ranks, looked up
    by name, mixed them); each is now named by its record file."""
    folder = _copy(exported, tmp_path)
    record, _ = _with_link(folder, "test/small-hash")
    other = json.loads(record.read_text())
    other.pop("detailed_evaluation_results")
    other["model_info"]["additional_details"]["revision"] = "2222"
    other["evaluation_id"] += "-2222"
    for result in other["evaluation_results"]:
        result["score_details"]["score"] = 0.5
        result["score_details"].pop("uncertainty", None)
    second = record.with_name(f"{'4' * 8}-4444-4444-8444-{'4' * 12}.json")
    second.write_text(json.dumps(other))
    names = [m.model for m in read_results([folder], PIPCHEM)]
    assert f"test/small-hash [{record}]" in names and f"test/small-hash [{second}]" in names
    assert len(set(names)) == len(names) == 4


@pytest.mark.slow
def test_attack49c_lines_of_another_split_or_more_than_the_record_scored_are_refused(
    exported: Path, tmp_path: Path
) -> None:
    """Lines named for another split were read, and extra rows (the score unchanged) narrowed
    the interval: a line's split must be the record's, its count the record's num_samples."""
    name = "test/hashing-trigrams (output_dtypes=int8)"
    for attack, said in (("split", "is not of the split 'test'"), ("more", "its record says")):
        folder = _copy(exported, tmp_path / attack)
        record, sidecar = _with_link(folder, name)
        lines = sidecar.read_text().splitlines(keepends=True)
        retrieval = [t for t in lines if '"task_type": "Retrieval"' in t]
        if attack == "split":
            line = json.loads(retrieval[0])
            line["sample_id"] = "dev/0"
            lines[lines.index(retrieval[0])] = json.dumps(line) + "\n"
        else:  # every query twice: the same mean, a narrower interval
            for i, text in enumerate(retrieval):
                line = json.loads(text)
                line["sample_id"] = f"test/{len(retrieval) + i}"
                lines.append(json.dumps(line) + "\n")
        sidecar.write_text("".join(lines))
        rows = len(lines)
        _edit(record, lambda r: r["detailed_evaluation_results"].update(total_rows=rows))  # noqa: B023
        _refresh_checksum(record, sidecar)
        found, skipped = _intervals(folder, name)
        assert any(said in s for s in skipped), (attack, skipped)
        assert found[-1] is None  # the retrieval task resamples tasks, said


def test_attack49c_the_ci_column_stays_when_the_first_row_has_no_interval(
    tmp_path: Path,
) -> None:
    """The Space's task table took its columns from its first row: a best model without items
    dropped every other model's interval."""
    sys.path.insert(0, str(REPO_ROOT / "space"))
    import app

    from .test_space_app import _column_cells, _pipchem_with_items

    root = _pipchem_with_items(tmp_path / "results")
    retrieval = next(t for t in benchmark_tasks(PIPCHEM) if t.type == "Retrieval")
    (root / "org__best" / "rev" / f"{retrieval.name}.items.npz").unlink()
    state = app.build_state([root])
    table = app.view_task(state, "PipChem", "all", [], [], "", retrieval.name)[2]
    cells = _column_cells(table, "95% CI")
    assert cells[0] == "" and all(c for c in cells[1:]) and len(cells) == 3
