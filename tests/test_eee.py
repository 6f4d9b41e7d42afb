"""Every Eval Ever records (``chemteb export``): valid against the 0.3.0 schema, intervals
equal to rank's, one file per content, paths inside the output folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemteb_eval.cli import main as chemteb_main
from chemteb_eval.results.board import read_results
from chemteb_eval.results.eee import _part, eee_record, write_eee
from chemteb_eval.results.ranking import task_interval
from chemteb_eval.runner import run
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

from .helpers.eee_schema import eee_schema
from .helpers.hashing_encoder import HashingEncoder

jsonschema = pytest.importorskip("jsonschema")

PIPCHEM = get_benchmark("PipChem")


@pytest.fixture(scope="module")
def results(small_suite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("eee") / "results"
    run(
        HashingEncoder(),
        output_dir=out,
        use_cache=False,
        precisions=["int8"],
        progress=False,
        log=lambda m: None,
    )
    return out


@pytest.mark.slow
def test_every_record_is_valid_eee_and_its_intervals_are_ranks(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    validator = jsonschema.Draft7Validator(eee_schema())
    assert chemteb_main(["export", str(results), "--output-dir", str(tmp_path / "eee")]) == 0
    printed = capsys.readouterr().out
    files = sorted((tmp_path / "eee").rglob("*.json"))
    assert len(files) == 2 and "2 Every Eval Ever record(s) on PipChem" in printed
    models = {m.model: m for m in read_results([results], PIPCHEM)}
    for path in files:
        record = json.loads(path.read_text())
        errors = [e.message for e in validator.iter_errors(record)]
        assert not errors, (path, errors)
        assert path.relative_to(tmp_path / "eee").parts[:2] == ("PipChem", "test")
        assert record["eval_library"]["name"] == "chemteb-eval"
        model = models[record["model_info"]["name"]]
        assert len(record["evaluation_results"]) == 7
        with_ci = 0
        for entry in record["evaluation_results"]:
            task = next(t for t in benchmark_tasks(PIPCHEM) if t.name == entry["evaluation_name"])
            assert entry["score_details"]["score"] == model.scores[task.name]
            assert entry["source_data"]["additional_details"]["dataset_revision"] == (
                model.files[task.name].dataset_revision
            )
            ci = entry["score_details"].get("uncertainty")
            interval = task_interval(model, PIPCHEM, task)
            if interval is None:
                assert ci is None
                continue
            with_ci += 1
            bounds = ci["confidence_interval"]
            assert (bounds["lower"], bounds["upper"]) == pytest.approx(interval, abs=1e-12)
            assert ci["standard_error"]["value"] > 0 and ci["num_bootstrap_samples"] == 1000
        assert with_ci == 2  # retrieval (nDCG per query), classification (accuracy per text)
    ids = {json.loads(p.read_text())["evaluation_id"] for p in files}
    assert len(ids) == 2  # the variant is an evaluation of its own
    # the variant shares its model's datastore folder (EEE's layout: a folder a model id), its
    # evaluation_id names it
    records = [json.loads(p.read_text()) for p in files]
    variant = [r for r in records if "output_dtypes_int8" in r["evaluation_id"]]
    assert json.loads(variant[0]["model_info"]["additional_details"]["experiment_kwargs"]) == {
        "output_dtypes": "int8"
    }


@pytest.mark.slow
def test_exporting_again_rewrites_the_same_files_and_other_data_makes_others(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    models = read_results([results], PIPCHEM)
    first = write_eee(models, PIPCHEM, tmp_path)
    bodies = {p: p.read_bytes() for p in first}
    later = time.time() + 3600
    monkeypatch.setattr(time, "time", lambda: later)  # the second export, an hour on
    assert write_eee(models, PIPCHEM, tmp_path) == first  # named by content, not by the clock
    # the same bytes too: the records' time is their runs', not the export's (issue 49)
    assert {p: p.read_bytes() for p in first} == bodies
    # other data under the same task name: another dataset fingerprint, another record
    model = models[0]
    task = "PipChemWikiRetrieval"
    changed = model.files[task].__class__(
        **{**model.files[task].__dict__, "dataset_revision": "sha256:0000000000000000"}
    )
    model.files[task] = changed
    again = write_eee([model], PIPCHEM, tmp_path)
    assert again[0] not in first


def test_path_parts_never_leave_the_output_folder() -> None:
    for hostile in ("..", "../../etc", "a/b", "", ".hidden", "x\x00y", "名前"):
        part = _part(hostile)
        assert part and "/" not in part and part not in (".", "..") and not part.startswith(".")


@pytest.mark.slow
def test_a_model_without_scores_gives_no_record(results: Path) -> None:
    empty = read_results([results], get_benchmark("ChemTEB"))
    assert all(eee_record(m, get_benchmark("ChemTEB")) is None for m in empty)


def test_the_two_facts_eee_030_requires_are_known_or_unknown_never_guessed() -> None:
    from chemteb_eval.results.eee import _availability

    assert _availability({"open_weights": True}) == {
        "deployment_type": "self_deployed",
        "model_availability": "open_weights",
    }
    assert _availability({"open_weights": False}) == {
        "deployment_type": "unknown",
        "model_availability": "closed_weights",
    }
    for meta in ({}, {"open_weights": "yes"}, {"open_weights": None}):
        assert _availability(meta) == {
            "deployment_type": "unknown",
            "model_availability": "unknown",
        }


@pytest.mark.slow
def test_every_record_links_its_per_item_sidecar_and_every_line_is_valid(
    results: Path, tmp_path: Path
) -> None:
    import hashlib

    aggregate = jsonschema.Draft7Validator(eee_schema())
    instance = jsonschema.Draft7Validator(eee_schema("instance"))
    models = {m.model: m for m in read_results([results], PIPCHEM)}
    written = write_eee(list(models.values()), PIPCHEM, tmp_path / "data")
    records = [p for p in written if p.suffix == ".json"]
    assert len(records) == 2
    for path in records:
        record = json.loads(path.read_text())
        assert not [e.message for e in aggregate.iter_errors(record)]
        link = record["detailed_evaluation_results"]
        sidecar = tmp_path / link["file_path"]  # DIR is the datastore's data/ folder
        assert sidecar == path.with_name(path.stem + "_samples.jsonl") and sidecar in written
        body = sidecar.read_bytes()
        assert hashlib.sha256(body).hexdigest() == link["checksum"]
        lines = [json.loads(line) for line in body.decode().splitlines()]
        assert len(lines) == link["total_rows"] > 0
        by_task: dict[str, list[dict]] = {}
        for line in lines:
            assert not [e.message for e in instance.iter_errors(line)], line
            assert line["evaluation_id"] == record["evaluation_id"]
            by_task.setdefault(line["evaluation_name"], []).append(line)
        scores = {
            r["evaluation_name"]: r["score_details"]["score"] for r in record["evaluation_results"]
        }
        # retrieval's items are its queries: their mean nDCG@10 is the task's score
        queries = by_task["PipChemWikiRetrieval"]
        mean = sum(q["evaluation"]["score"] for q in queries) / len(queries)
        assert mean == pytest.approx(scores["PipChemWikiRetrieval"], abs=1e-5)
        assert len({q["sample_id"] for q in queries}) == len(queries)
        # the classification and bitext items' means are the files' accuracy (by hand: the
        # share of right answers), as the mapping says
        model = models[record["model_info"]["name"]]
        for name in ("PipChemWikiTopicClassification", "PipChemSMILESNameBM"):
            task = next(t for t in benchmark_tasks(PIPCHEM) if t.name == name)
            accuracy = model.files[name].score("accuracy", ("test",), task.subset_weight_key)
            items = by_task[name]
            mean = sum(i["evaluation"]["score"] for i in items) / len(items)
            assert mean == pytest.approx(accuracy, abs=1e-5), name


def test_attack49_an_extra_array_of_another_length_is_no_querys_value() -> None:
    """An evidence file with an extra, shorter array crashed the whole export (IndexError):
    only the arrays one value per query are copied into the lines."""
    import numpy as np

    from chemteb_eval.results.eee_items import _retrieval

    items = {
        "query_ids": np.array(["q1", "q2", "q3"]),
        "ndcg_at_10": np.array([1.0, 0.5, 0.0]),
        "recall_at_10": np.array([1.0, 1.0, 0.0]),
        "junk": np.zeros(2),
        "table": np.zeros((3, 2)),
    }
    lines = _retrieval(items, "ndcg_at_10", "test")
    assert [line[0] for line in lines] == ["test/0", "test/1", "test/2"]  # rows, as every type's
    assert [line[7].pop("query_id") for line in lines] == ["q1", "q2", "q3"]
    assert [line[5] for line in lines] == [True, True, False]
    assert set(lines[0][7]) == {"ndcg_at_10", "recall_at_10"}
