"""``chemteb inspect`` on PipChem's seven tasks with all-MiniLM-L6-v2 (issue 48), measured as
a user runs it, and what the ``chemistry`` block adds to the default run.

Part 1, the report: per task (the full build), ``inspect_task``'s data quality (duplicates,
conflicting labels, overlap between splits, one molecule written two ways) and the model's
tokenization of its distinct texts per class of string; the seconds of each half per 10k
distinct texts (the data's load and the model's load excluded: a user pays those once).

Part 2, the run: ``chemteb run``'s default (all-MiniLM-L6-v2 on PipChem) into a fresh results
folder with a fresh embedding cache (cold: every text encoded), then rerun with ``--overwrite``
(warm: the vectors from the cache, every task rescored), the ``chemistry`` block's seconds
timed inside each; its share of each run is the same-run ratio.

Usage: python benchmarks/bench_inspect.py [--no-record]
Writes benchmarks/out/inspect.json and docs/figures.json["inspect"].
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import chemteb_eval.runner.score as score
from chemteb_eval.data import load_task
from chemteb_eval.data.quality import data_quality
from chemteb_eval.models import DEFAULT_MODEL, load_encoder
from chemteb_eval.runner import run
from chemteb_eval.runner.inspect import distinct_texts, tokenization
from chemteb_eval.tasks import benchmark_tasks, get_benchmark

REPO = Path(__file__).resolve().parent.parent


def _clock(fn: Any, *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - started


def _round(value: float | None, digits: int, scale: float = 1.0) -> float | None:
    return None if value is None else round(value * scale, digits)


def report() -> dict[str, Any]:
    """Part 1: each task's quality counts and tokenization, with their seconds."""
    encoder = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda _: None)
    tasks: dict[str, Any] = {}
    for task in benchmark_tasks(get_benchmark("PipChem")):
        data = load_task(task)
        quality, quality_s = _clock(data_quality, data)
        texts, texts_s = _clock(distinct_texts, data)
        tokens, tokens_s = _clock(tokenization, encoder, texts)
        assert isinstance(tokens, dict)  # MiniLM's tokenizer is ours to call
        issues = {
            split: {k: v for k, v in counts.items() if k != "rows" and v}
            for split, counts in quality["splits"].items()
        }
        tasks[task.name] = {
            "texts": len(texts),
            "faults": {k: v for k, v in issues.items() if v},
            "overlap": quality["overlap"],
            "same_molecule": quality["same_molecule"],
            "classes": {k: v["strings"] for k, v in tokens.items() if v.get("strings")},
            "smiles": tokens["smiles"] if tokens["smiles"]["strings"] else None,
            # as the pages print them
            "tokens_per_smiles": _round(tokens["smiles"]["mean_tokens"], 1),
            "unknown_per_smiles_pct": _round(tokens["smiles"]["unk_share"], 2, 100),
            "tokens_per_text": _round(tokens["text"]["mean_tokens"], 1),
            "quality_seconds": round(quality_s, 3),
            "tokenization_seconds": round(texts_s + tokens_s, 3),
        }
    texts = sum(t["texts"] for t in tasks.values())
    quality_s = sum(t["quality_seconds"] for t in tasks.values())
    tokens_s = sum(t["tokenization_seconds"] for t in tasks.values())
    return {
        "tasks": tasks,
        "texts": texts,
        "quality_seconds_per_ten_thousand": round(quality_s / texts * 1e4, 2),
        "tokenization_seconds_per_ten_thousand": round(tokens_s / texts * 1e4, 2),
    }


def chebi20() -> dict[str, Any] | None:
    """The issue's reference point: ChEBI-20's test SMILES (../shared, when present: a user's
    clone has none) through the same tokenization."""
    import csv

    path = REPO.parent / "shared" / "data" / "chebi20" / "test.txt"
    if not path.is_file():
        return None
    with path.open(newline="", encoding="utf-8") as f:
        smiles = [row["SMILES"] for row in csv.DictReader(f, delimiter="\t")]
    encoder = load_encoder(DEFAULT_MODEL, device="cpu", log=lambda _: None)
    found = tokenization(encoder, list(dict.fromkeys(smiles)))
    assert isinstance(found, dict)  # MiniLM's tokenizer is ours to call
    stats = found["smiles"]
    return {
        "smiles": stats["strings"],
        "tokens_per_smiles": _round(stats["mean_tokens"], 1),
        "p95_tokens": _round(stats["p95_tokens"], 1),
        "unknown_per_smiles_pct": _round(stats["unk_share"], 2, 100),
        "cut_pct": _round(stats["cut_share"], 2, 100),
    }


def in_the_run() -> dict[str, Any]:
    """Part 2: the default run, cold then warm, and the chemistry block's seconds in each."""
    spent: list[float] = []
    block = vars(score)["chemistry_block"]  # the name the run's stage calls

    def timed(*args: Any) -> Any:
        out, seconds = _clock(block, *args)
        spent.append(seconds)
        return out

    vars(score)["chemistry_block"] = timed
    quiet: dict[str, Any] = {"progress": False, "log": lambda _: None}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, overwrite in (("cold", False), ("warm", True)):
            spent.clear()
            _, seconds = _clock(
                lambda o=overwrite: run(
                    DEFAULT_MODEL,
                    output_dir=Path(tmp) / "results",
                    cache_dir=Path(tmp) / "cache",
                    overwrite=o,
                    **quiet,
                )
            )
            out[name] = {
                "run_seconds": round(seconds, 1),
                "chemistry_seconds": round(sum(spent), 2),
                "share_pct": round(100 * sum(spent) / seconds, 1),
            }
    vars(score)["chemistry_block"] = block
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-record", action="store_true", help="leave docs/figures.json as is")
    args = parser.parse_args()
    found = {"model": DEFAULT_MODEL, **report(), "chebi20": chebi20(), "run": in_the_run()}
    smiles = {k: v["smiles"] for k, v in found["tasks"].items() if v["smiles"]}
    for stats in smiles.values():
        for key in ("mean_tokens", "p95_tokens", "unk_share", "cut_share"):
            stats[key] = round(stats[key], 4) if stats[key] is not None else None
    from _figures import publish

    publish("inspect", found, to_docs=not args.no_record)


if __name__ == "__main__":
    main()
