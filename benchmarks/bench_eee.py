"""Every Eval Ever records of the default run, and read back (issue 49): ``chemteb run``'s
default (all-MiniLM-L6-v2 on PipChem's full build, with its int8 variant; its vectors from the
embedding cache when an earlier run left them) and BM25 (``-m bm25s``) into a fresh results
folder, then

- ``chemteb export``: every record and every sidecar line validated against the 0.3.0 wheel's
  schemas (md5-pinned, as the tests do), the bytes per task;
- the round trip: ``chemteb rank --ci --json`` on the results folder and on the EEE folder,
  the two outputs compared whole (models, scores, order, rank intervals, the paired bootstrap
  against BM25 over its queries), and every task's 95% interval (the Space's column);
- the seconds of each, the EEE read as a ratio to the results folder's in the same run.

Usage: python benchmarks/bench_eee.py [--no-record]
Writes benchmarks/out/eee.json and docs/figures.json["eee"].
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _figures import publish

REPO = Path(__file__).resolve().parent.parent
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
sys.path.insert(0, str(REPO))


def _rank(folder: Path) -> tuple[Any, float]:
    """``chemteb rank FOLDER -b PipChem --ci --json``'s parsed output, and its seconds."""
    from chemteb_eval.cli import main

    out = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["rank", str(folder), "-b", "PipChem", "--ci", "--json"]) == 0
    return json.loads(out.getvalue()), time.perf_counter() - started


def _task_intervals(folder: Path) -> dict[tuple[str, str], Any]:
    """Every model's 95% interval of every task (the Space's "95% CI"), from its evidence."""
    from chemteb_eval.results.board import read_results
    from chemteb_eval.results.ranking import task_interval
    from chemteb_eval.tasks import benchmark_tasks, get_benchmark

    bench = get_benchmark("PipChem")
    return {
        (m.model, t.name): task_interval(m, bench, t)
        for m in read_results([folder], bench)
        for t in benchmark_tasks(bench)
    }


def measure() -> dict[str, Any]:
    import jsonschema

    from chemteb_eval.cli import main
    from tests.helpers.eee_schema import eee_schema

    with tempfile.TemporaryDirectory(prefix="bench-eee-") as tmp:
        results, out = Path(tmp, "results"), Path(tmp, "data")
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["run", "--output-dir", str(results), "--precisions", "int8"]) == 0
            assert main(["run", "-m", "bm25s", "--output-dir", str(results)]) == 0
            started = time.perf_counter()
            assert main(["export", str(results), "--output-dir", str(out)]) == 0
        export_s = time.perf_counter() - started
        aggregate = jsonschema.Draft7Validator(eee_schema())
        instance = jsonschema.Draft7Validator(eee_schema("instance"))
        records = sorted(out.rglob("*.json"))
        invalid = sum(not aggregate.is_valid(json.loads(p.read_text())) for p in records)
        per_task: dict[str, dict[str, int]] = {}  # the model's own record's sidecar
        lines = bad_lines = sidecar_bytes = 0
        for path in records:
            record = json.loads(path.read_text())
            sidecar = path.with_name(path.stem + "_samples.jsonl")
            sidecar_bytes += sidecar.stat().st_size
            for raw in sidecar.read_bytes().splitlines(keepends=True):
                line = json.loads(raw)
                lines += 1
                bad_lines += not instance.is_valid(line)
                if record["model_info"]["name"] == MODEL:
                    task = per_task.setdefault(line["evaluation_name"], {"lines": 0, "bytes": 0})
                    task["lines"] += 1
                    task["bytes"] += len(raw)
        mine, mine_s = _rank(results)
        theirs, theirs_s = _rank(out)
        intervals = _task_intervals(results) == _task_intervals(out)
        record_bytes = sum(p.stat().st_size for p in records)
    return {
        "model": MODEL,
        "records": len(records),
        "records_invalid": invalid,
        "record_bytes": record_bytes,
        "lines": lines,
        "lines_invalid": bad_lines,
        "sidecars_bytes": sidecar_bytes,  # the three records'
        "model_sidecar_bytes": sum(t["bytes"] for t in per_task.values()),
        "model_sidecar_mb": round(sum(t["bytes"] for t in per_task.values()) / 1e6, 1),
        "model_lines": sum(t["lines"] for t in per_task.values()),
        "per_task": per_task,
        "round_trip_equal": mine == theirs,
        "task_intervals_equal": intervals,
        "models": len(theirs),
        "export_s": round(export_s, 2),
        "rank_results_s": round(mine_s, 2),
        "rank_eee_s": round(theirs_s, 2),
        "rank_eee_ratio": round(theirs_s / mine_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json be")
    args = parser.parse_args()
    publish("eee", measure(), to_docs=not args.no_record)


if __name__ == "__main__":
    main()
