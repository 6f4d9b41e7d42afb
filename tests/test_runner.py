"""The runner end to end on the small PipChem build, with a fast deterministic encoder."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from chemteb_eval.results.runs import run_record
from chemteb_eval.runner import run
from chemteb_eval.tasks import Task, benchmark_tasks

from .conftest import REPO_ROOT
from .helpers.cache_files import committed
from .helpers.hashing_encoder import HashingEncoder

# Seconds each (dataset builds, subprocesses, models): out of `scripts/check -m "not slow"`.
pytestmark = pytest.mark.slow


def test_run_writes_mteb_layout_and_skips_finished(small_suite: Path, tmp_path: Path) -> None:
    encoder = HashingEncoder()
    report = run(
        encoder, output_dir=tmp_path, cache_dir=tmp_path / "emb", progress=False, log=lambda m: None
    )
    assert set(report.statuses.values()) == {"done"} and len(report.statuses) == 7
    folder = tmp_path / "test__hashing-trigrams" / ("1" * 40)
    assert report.results_dir == folder
    result = json.loads((folder / "PipChemWikiRetrieval.json").read_text())
    assert result["task_name"] == "PipChemWikiRetrieval"
    entry = result["scores"]["test"][0]
    assert entry["main_score"] == entry["ndcg_at_10"] and entry["hf_subset"] == "default"
    assert {"model_meta.json", "runs.jsonl"} <= {p.name for p in folder.iterdir()}
    assert "run_meta.json" not in {p.name for p in folder.iterdir()}  # MTEB reads every .json
    enc = report.encoding
    assert enc["unique"] <= enc["requested"] and enc["encoded"] == enc["unique"]

    again = run(
        encoder, output_dir=tmp_path, cache_dir=tmp_path / "emb", progress=False, log=lambda m: None
    )
    assert set(again.statuses.values()) == {"skipped"}
    redo = run(
        HashingEncoder(),
        output_dir=tmp_path,
        cache_dir=tmp_path / "emb",
        overwrite=True,
        progress=False,
        log=lambda m: None,
    )
    assert redo.encoding["encoded"] == 0 and redo.encoding["cache_hits"] == redo.encoding["unique"]
    assert redo.main_scores == report.main_scores


def test_a_failing_task_is_recorded_and_the_run_goes_on(small_suite: Path, tmp_path: Path) -> None:
    good = benchmark_tasks("PipChem")[2]
    bad = Task(
        name="Missing",
        type="BitextMining",
        hf_path="nobody/nothing",
        revision="2" * 40,
        eval_splits=("test",),
        main_score="f1",
        collection="test",
    )
    import datasets.config
    from huggingface_hub import constants

    constants.HF_HUB_OFFLINE, saved = True, constants.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = True
    try:
        report = run(
            HashingEncoder(),
            tasks=[bad, good],
            output_dir=tmp_path,
            use_cache=False,
            progress=False,
            log=lambda m: None,
        )
    finally:
        constants.HF_HUB_OFFLINE = datasets.config.HF_HUB_OFFLINE = saved
    assert report.statuses == {"Missing": "failed", good.name: "done"}
    assert "nobody/nothing" in report.errors["Missing"]
    meta = run_record(report.results_dir)
    assert meta["tasks"]["Missing"] == "failed"


_CHILD = textwrap.dedent("""
    import sys, json
    sys.path.insert(0, {root!r})
    from tests.helpers.hashing_encoder import HashingEncoder
    from chemteb_eval.runner import run
    report = run(HashingEncoder(delay={delay}), output_dir={out!r}, cache_dir={cache!r}, batch_size=16,
                 progress=False, log=lambda m: None)
    print(json.dumps(report.main_scores, sort_keys=True))
""")


def _child(out: Path, cache: Path, delay: float) -> list[str]:
    code = _CHILD.format(root=str(REPO_ROOT), delay=delay, out=str(out), cache=str(cache))
    return [sys.executable, "-c", code]


def test_killed_run_resumes_from_the_cache_with_identical_scores(
    small_suite: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "emb"
    proc = subprocess.Popen(
        _child(tmp_path / "a", cache, 0.05), stdout=subprocess.PIPE, env=os.environ.copy()
    )
    # Wait until some batches are committed, then SIGKILL mid-encoding.
    deadline = time.time() + 120
    db = None
    while time.time() < deadline:
        dbs = list(cache.glob("*.vectors"))
        if dbs:
            import sqlite3

            db = dbs[0]
            try:
                n = committed(db)
            except sqlite3.OperationalError:
                n = 0
            if n >= 200:
                break
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert db is not None
    import sqlite3

    kept = committed(db)
    assert kept >= 200
    resumed = run(
        HashingEncoder(),
        output_dir=tmp_path / "b",
        cache_dir=cache,
        batch_size=16,
        progress=False,
        log=lambda m: None,
    )
    assert resumed.encoding["cache_hits"] >= kept
    fresh = run(
        HashingEncoder(),
        output_dir=tmp_path / "c",
        use_cache=False,
        batch_size=16,
        progress=False,
        log=lambda m: None,
    )
    assert resumed.main_scores == fresh.main_scores


def test_two_processes_sharing_a_cache_leave_it_consistent(
    small_suite: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "emb"
    procs = [
        subprocess.Popen(
            _child(tmp_path / name, cache, 0.0), stdout=subprocess.PIPE, env=os.environ.copy()
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    first, second = (json.loads(o.decode().strip().splitlines()[-1]) for o in outs)
    assert first == second
    again = run(
        HashingEncoder(),
        output_dir=tmp_path / "c",
        cache_dir=cache,
        progress=False,
        log=lambda m: None,
    )
    assert again.encoding["encoded"] == 0 and again.main_scores == first


def test_classification_encodes_only_the_probes_rows_and_scores_the_same(
    small_suite: Path, tmp_path: Path
) -> None:
    import numpy as np

    from chemteb_eval import scoring
    from chemteb_eval.data.loader import load_task
    from chemteb_eval.runner import _groups, _score

    task = benchmark_tasks("PipChem")[0]
    data = load_task(task)["default"]["test"]
    groups = _groups(data)
    assert len(groups["train"][0]) < len(data.train_texts)
    enc = HashingEncoder()
    full = scoring.score_classification(
        enc.encode(data.train_texts, prompt="", batch_size=64),
        data.train_labels,
        enc.encode(data.test_texts, prompt="", batch_size=64),
        data.test_labels,
    )
    partial = _score(
        data,
        {name: enc.encode(texts, prompt="", batch_size=64) for name, (texts, _) in groups.items()},
    )
    assert partial == full
    assert np.isfinite(partial["accuracy"])


def test_ctrl_c_keeps_the_finished_blocks_and_run_meta(small_suite: Path, tmp_path: Path) -> None:
    cache = tmp_path / "emb"
    with pytest.raises(KeyboardInterrupt):
        run(
            HashingEncoder(interrupt_at=40),
            output_dir=tmp_path / "a",
            cache_dir=cache,
            batch_size=16,
            progress=False,
            log=lambda m: None,
        )
    meta = run_record(tmp_path / "a" / "test__hashing-trigrams" / ("1" * 40))
    assert meta["encoding"]["encoded"] >= 512
    resumed = run(
        HashingEncoder(),
        output_dir=tmp_path / "a",
        cache_dir=cache,
        batch_size=16,
        progress=False,
        log=lambda m: None,
    )
    assert resumed.encoding["cache_hits"] >= 512
    fresh = run(
        HashingEncoder(),
        output_dir=tmp_path / "b",
        use_cache=False,
        progress=False,
        log=lambda m: None,
    )
    assert resumed.main_scores == fresh.main_scores
