"""Read result folders (ours and MTEB's layout) and rank models under a benchmark's protocol."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, main_score
from chemteb_eval.tasks.records import TASK_TYPES

__all__ = [
    "DETAIL_KEYS",
    "ModelResults",
    "ScannedModel",
    "rank_models",
    "read_model_table",
    "read_results",
    "scan_results",
]

# Scores the per-task views show beside the main score, per task type (MTEB's key names).
DETAIL_KEYS: Mapping[str, tuple[str, ...]] = {
    "Classification": ("accuracy", "f1", "f1_weighted", "ap"),
    "Clustering": ("v_measure",),
    "PairClassification": ("max_f1", "max_ap", "max_accuracy", "cosine_f1", "cosine_ap"),
    "BitextMining": ("f1", "accuracy", "precision", "recall"),
    "Retrieval": ("ndcg_at_10", "map_at_10", "recall_at_10", "mrr_at_10", "ndcg_at_1"),
    "STS": ("cosine_spearman", "cosine_pearson", "coverage"),
    "NER": ("overall_f1", "overall_precision", "overall_recall", "overall_accuracy"),
}


@dataclass
class ScannedModel:
    """One model folder, its JSON files parsed once (so several benchmarks can be scored)."""

    folder: Path
    name: str
    meta: dict[str, Any] = field(default_factory=dict)  # model_meta.json, if any
    run_meta: dict[str, Any] = field(default_factory=dict)  # the newest run_meta.json, if any
    payloads: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)  # oldest first
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason


@dataclass
class ModelResults:
    """One model's main scores on a benchmark's tasks."""

    model: str
    folder: Path
    scores: dict[str, float] = field(default_factory=dict)  # task name -> main score
    revision_mismatches: int = 0
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason
    seconds: dict[str, float] = field(default_factory=dict)  # task -> evaluation_time
    details: dict[str, dict[str, float]] = field(default_factory=dict)  # task -> DETAIL_KEYS
    meta: dict[str, Any] = field(default_factory=dict)
    run_meta: dict[str, Any] = field(default_factory=dict)


def read_model_table(path: str | Path | None) -> dict[str, dict[str, str]]:
    """Rows of a model table (``paper_models.csv``'s columns), keyed by model id and folder.

    Raises:
        ValueError: when the file lacks a ``model_id`` column.
    """
    if path is None:
        return {}
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        if "model_id" not in (reader.fieldnames or []):
            raise ValueError(f"model_table: {path} has no 'model_id' column.")
        table: dict[str, dict[str, str]] = {}
        for row in reader:
            table[row["model_id"]] = row
            if row.get("results_dir"):
                table[row["results_dir"]] = row
    return table


def _model_table(path: Path | None) -> dict[str, str]:
    """Result folder name -> model id, from a model table beside the results (if any)."""
    if path is None or not path.is_file():
        return {}
    return {
        row["results_dir"]: row["model_id"]
        for row in read_model_table(path).values()
        if row.get("results_dir")
    }


def _split_mean(payload: Mapping[str, Any], key: str, splits: Iterable[str]) -> float | None:
    per_split = []
    for split in splits:
        entries = payload.get("scores", {}).get(split)
        if not entries:
            return None
        values = [e[key] for e in entries if isinstance(e, dict) and key in e]
        if len(values) != len(entries):
            return None
        mean = float(np.mean(values))  # mean over subsets
        if not np.isfinite(mean):
            raise ValueError(f"{key} is not a finite number")
        per_split.append(mean)
    return float(np.mean(per_split))  # mean over the benchmark's splits


def _task_score(task: Task, bench: Benchmark, payload: Mapping[str, Any]) -> float | None:
    return _split_mean(payload, main_score(bench, task), eval_splits(bench, task))


def _read_json_object(path: Path) -> dict[str, Any]:
    payload = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(payload, dict):
        raise ValueError("not a JSON object")
    return payload


def scan_results(
    roots: Iterable[str | Path], *, model_table: str | Path | None = None
) -> list[ScannedModel]:
    """Parse every result file under ``roots`` once.

    Layout: ``root/<model>/<revision>/<Task>.json`` (ours and MTEB's). Unreadable files are
    listed in ``skipped``, never fatal.

    Args:
        roots: result folders.
        model_table: a CSV with ``results_dir`` and ``model_id`` columns naming the folders (the
            paper's ``paper_models.csv``); default a ``paper_models.csv`` beside a root.

    Returns:
        One ``ScannedModel`` per model folder that holds JSON files.
    """
    scanned: list[ScannedModel] = []
    for root in map(Path, roots):
        if not root.is_dir():
            raise ValueError(f"results: {root} is not a folder.")
        table = _model_table(Path(model_table) if model_table else root.parent / "paper_models.csv")
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            files = sorted(folder.glob("*/*.json"), key=lambda p: p.stat().st_mtime)
            if not files:
                continue
            model = ScannedModel(
                folder=folder, name=table.get(folder.name) or folder.name.replace("__", "/")
            )
            for path in files:
                try:
                    payload = _read_json_object(path)
                except (OSError, ValueError) as exc:
                    model.skipped.append(f"{path}: {exc}")
                    continue
                if path.name == "model_meta.json":
                    model.meta = payload
                    name = payload.get("name")
                    if isinstance(name, str) and name:
                        model.name = name
                elif path.name == "run_meta.json":
                    model.run_meta = payload
                else:
                    model.payloads.append((path, payload))
            scanned.append(model)
    return scanned


def read_results(
    roots: Iterable[str | Path] | list[ScannedModel],
    bench: Benchmark,
    *,
    model_table: str | Path | None = None,
) -> list[ModelResults]:
    """Every model folder under ``roots`` with its scores on ``bench``'s tasks.

    A task file is matched to the benchmark by task name or alias; a dataset revision other than
    the pinned one counts as a mismatch. Malformed files are skipped and listed, never fatal.

    Args:
        roots: result folders, or what ``scan_results`` returned for them.
        bench: the benchmark.
        model_table: see ``scan_results``.

    Returns:
        One ``ModelResults`` per model folder (several revisions merge; the newest file wins).
    """
    items = list(roots)
    if items and all(isinstance(i, ScannedModel) for i in items):
        scanned = [i for i in items if isinstance(i, ScannedModel)]
    else:
        scanned = scan_results(
            [i for i in items if not isinstance(i, ScannedModel)], model_table=model_table
        )
    by_name: dict[str, Task] = {}
    for task in benchmark_tasks(bench):
        by_name[task.name] = task
        for alias in task.aliases:
            by_name[alias] = task
    models: list[ModelResults] = []
    for source in scanned:
        result = ModelResults(
            model=source.name,
            folder=source.folder,
            skipped=list(source.skipped),
            meta=source.meta,
            run_meta=source.run_meta,
        )
        for path, payload in source.payloads:
            try:
                found = by_name.get(payload.get("task_name") or path.stem)
                if found is None:
                    continue
                task = found
                score = _task_score(task, bench, payload)
            except (ValueError, TypeError, AttributeError, KeyError) as exc:
                result.skipped.append(f"{path}: {exc}")
                continue
            if score is None:
                result.skipped.append(
                    f"{path}: no {main_score(bench, task)} for the benchmark's splits"
                )
                continue
            result.scores[task.name] = score
            splits = eval_splits(bench, task)
            details = {}
            for key in DETAIL_KEYS[task.type]:
                try:
                    value = _split_mean(payload, key, splits)
                except (ValueError, TypeError):
                    value = None
                if value is not None:
                    details[key] = value
            result.details[task.name] = details
            seconds = payload.get("evaluation_time")
            if isinstance(seconds, (int, float)) and seconds > 0:
                result.seconds[task.name] = float(seconds)
            if task.revision_status(payload.get("dataset_revision")) != "pinned":
                result.revision_mismatches += 1
        models.append(result)
    return models


def _competition_ranks(values: Mapping[str, float]) -> dict[str, int]:
    """1 = best; ties share the lowest rank ("min" ranking)."""
    return {m: 1 + sum(1 for o in values.values() if o > v) for m, v in values.items()}


def rank_models(models: list[ModelResults], bench: Benchmark) -> list[dict[str, Any]]:
    """Per-type means, per-type ranks, RRF, Borda, overall rank and coverage.

    Per task type: the mean of the model's task scores; the rank among complete models (1 =
    best, ties share the lowest rank). RRF = sum over types of 1 / (k + rank) with the
    benchmark's k (10 if it has none). Borda: for every task, one point per model with a lower
    score. Complete models are ranked by RRF (``rrf`` benchmarks) or mean over tasks (``mean``);
    incomplete ones get ``rank: None`` and come after, their type ranks showing where they would
    stand among the complete models.

    Returns:
        One dict per model: model, means, ranks, rrf, borda, rank, complete, coverage,
        revision_mismatches, mean.
    """
    tasks = benchmark_tasks(bench)
    types = [t for t in TASK_TYPES if any(task.type == t for task in tasks)]
    k = bench.aggregation.rrf_k or 10
    rows: list[dict[str, Any]] = []
    for m in models:
        means = {
            t: float(
                np.mean([m.scores[x.name] for x in tasks if x.type == t and x.name in m.scores])
            )
            for t in types
            if any(x.type == t and x.name in m.scores for x in tasks)
        }
        rows.append(
            {
                "model": m.model,
                "means": means,
                "complete": all(x.name in m.scores for x in tasks),
                "coverage": f"{sum(x.name in m.scores for x in tasks)}/{len(tasks)}",
                "revision_mismatches": m.revision_mismatches,
                "mean": float(np.mean(list(m.scores.values()))) if m.scores else None,
                "_scores": m.scores,
            }
        )
    complete = [r for r in rows if r["complete"]]
    for r in rows:
        r["ranks"] = {
            t: 1 + sum(1 for c in complete if c is not r and c["means"][t] > r["means"][t])
            for t in r["means"]
        }
        r["rrf"] = float(sum(1.0 / (k + rank) for rank in r["ranks"].values()))
    for task in tasks:
        have = {id(r): r["_scores"][task.name] for r in rows if task.name in r["_scores"]}
        for r in rows:
            if id(r) in have:
                r["borda"] = r.get("borda", 0) + sum(1 for v in have.values() if v < have[id(r)])
    key = "rrf" if bench.aggregation.kind == "rrf" else "mean"
    overall = _competition_ranks({str(i): r[key] for i, r in enumerate(rows) if r["complete"]})
    for i, r in enumerate(rows):
        r["rank"] = overall.get(str(i))
        r.setdefault("borda", 0)
        del r["_scores"]
    rows.sort(key=lambda r: (r["rank"] is None, r["rank"] or 0, -(r[key] or 0.0)))
    return rows
