"""Honest timings: a result file's ``evaluation_time`` includes encoding (as MTEB's does), a text
shared by tasks splits its cost between them, and the cache remembers what each vector cost, so
a warm rerun reports what the cold run did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chemteb_eval.results.runs import run_record
from chemteb_eval.runner import run
from chemteb_eval.tasks import get_task

from .helpers.hashing_encoder import HashingEncoder

# Seconds each (the small PipChem build, encoders that sleep): out of the inner loop.
pytestmark = pytest.mark.slow

# Tasks whose time is mostly encoding (as with any real model): k-means' scoring time varies by
# tens of milliseconds from run to run, which an encoder that sleeps 0.1 s a batch cannot hide.
TASKS = ["PipChemSMILESNameBM", "PipChemNameSMILESPC", "PipChemSMILESFormulaBM"]


def _files(out: Path) -> dict[str, dict[str, Any]]:
    folder = out / "test__hashing-trigrams" / ("1" * 40)
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in TASKS}


def test_cold_and_warm_runs_report_the_same_time(small_suite: Path, tmp_path: Path) -> None:
    tasks = [get_task(name) for name in TASKS]
    common: dict[str, Any] = {"tasks": tasks, "output_dir": tmp_path, "cache_dir": tmp_path / "emb"}
    quiet: dict[str, Any] = {"progress": False, "log": lambda m: None}
    cold = run(HashingEncoder(delay=0.1), batch_size=16, **common, **quiet)
    cold_files = _files(tmp_path)
    warm = run(HashingEncoder(delay=0.1), batch_size=16, overwrite=True, **common, **quiet)
    warm_files = _files(tmp_path)
    assert warm.encoding["encoded"] == 0  # all from the cache
    for name in TASKS:
        c, w = cold_files[name], warm_files[name]
        assert float(c["encode_seconds"]) > 0
        assert w["n_cache_hits"] == w["n_texts"] and c["n_cache_hits"] == 0
        # evaluation_time = encode + score, and the warm rerun reports the cold run's cost
        assert c["evaluation_time"] == pytest.approx(
            float(c["encode_seconds"]) + float(c["score_seconds"])
        )
        assert w["evaluation_time"] == pytest.approx(c["evaluation_time"], rel=0.10)
    # A text two tasks embed is paid for once: the tasks' shares add up to the run's encoding.
    shares = sum(float(cold_files[n]["encode_seconds"]) for n in TASKS)
    assert shares == pytest.approx(cold.encoding["seconds"], rel=0.05)
    meta = run_record(tmp_path / "test__hashing-trigrams" / ("1" * 40))
    assert meta["settings"]["batch_size"] == 16 and meta["settings"]["backend"] == "test"
    assert meta["hardware"]["cpus"] >= 1 and meta["hardware"]["cpu"]
    assert "texts_per_second" in meta["encoding"] and "gpu_count" in meta["hardware"]


def test_shared_texts_split_their_cost(small_suite: Path, tmp_path: Path) -> None:
    # The name -> SMILES bitext task and the name/SMILES pair task embed overlapping texts:
    # each pays a share of what they have in common, never the whole of it twice.
    common: dict[str, Any] = {
        "output_dir": tmp_path,
        "cache_dir": tmp_path / "emb",
        "progress": False,
    }
    both = run(
        HashingEncoder(delay=0.03),
        tasks=[get_task(TASKS[0]), get_task(TASKS[1])],
        log=lambda m: None,
        **common,
    )
    files = _files_subset(tmp_path, TASKS[:2])
    total = sum(float(f["encode_seconds"]) for f in files.values())
    assert total == pytest.approx(both.encoding["seconds"], rel=0.05)


def _files_subset(out: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    folder = out / "test__hashing-trigrams" / ("1" * 40)
    return {name: json.loads((folder / f"{name}.json").read_text()) for name in names}
