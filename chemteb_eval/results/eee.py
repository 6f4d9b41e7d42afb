"""Our results as Every Eval Ever records (``eval.schema.json`` 0.3.0, evaleval/every_eval_ever):
the record the Hub's community evals ingest. One record per model (and per variant of its
vectors) on a benchmark, one ``evaluation_results`` entry per task, each with the 95% interval
and standard error of its score from the run's per-item evidence where the run wrote it.

Written by hand: the ``every-eval-ever`` package needs Python 3.12 and pulls duckdb, pandas and
matplotlib for what is one JSON object here. ``tests/test_eee.py`` validates every record we
write against the schema files of the package's 0.3.0 wheel.

The layout is EEE's: ``<out>/<benchmark>/<developer>/<model>/<uuid>.json``. The uuid is drawn
from the record's content (every field but its timestamps): exporting the same results again
rewrites the same file, and other data (another dataset fingerprint, another task declaration)
makes another record; EEE's duplicate check hashes the same fields.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval import __version__
from chemteb_eval._files import write_json_atomic, write_text_atomic
from chemteb_eval.scoring.uncertainty import bootstrap_draws
from chemteb_eval.tasks import Benchmark, Task, benchmark_tasks, eval_splits, main_score

from .board import DETAIL_KEYS, ModelResults
from .eee_check import SCHEMA_VERSION
from .io import experiment_label, experiment_name
from .model_folder import one_line

__all__ = ["SCHEMA_VERSION", "eee_record", "write_eee"]

RESAMPLES = 1000  # as rank's and the Space's task intervals: the same seed, the same interval
# scores that are correlations run from -1; every other main score from 0 (all end at 1)
_FROM_MINUS_ONE = re.compile(r"(pearson|spearman|kendall)")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _text(value: object) -> str:
    """An ``additional_details`` value: EEE wants strings."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _uncertainty(model: ModelResults, bench: Benchmark, task: Task) -> dict[str, Any] | None:
    """The bootstrap of the task's items (the run's evidence) where its score is a mean of
    items: EEE's standard error (the draws' standard deviation), percentile interval, item
    count and resamples; ``None`` where the run wrote no evidence or the score is not a mean
    of items (a threshold sweep, k-means)."""
    from .ranking import _mean_of_items, task_evidence

    key = main_score(bench, task)
    evidence = task_evidence(model, bench, task, key) if _mean_of_items(task.type, key) else None
    if evidence is None or evidence.n < 2:
        return None
    # task_interval's draws (bootstrap_ci's, seed 0), so the interval is rank's
    draws = bootstrap_draws(evidence.statistic, evidence.n, resamples=RESAMPLES, seed=0)
    if not np.all(np.isfinite(draws)):
        return None
    low, high = np.quantile(draws, [0.025, 0.975])
    method = "bootstrap: the task's items resampled with replacement, percentile interval"
    return {
        "standard_error": {"value": float(np.std(draws, ddof=1)), "method": "bootstrap"},
        "confidence_interval": {
            "lower": float(low),
            "upper": float(high),
            "confidence_level": 0.95,
            "method": method,
        },
        "num_samples": int(evidence.n),
        "num_bootstrap_samples": RESAMPLES,
    }


def _source_data(task: Task, file: Any, splits: tuple[str, ...]) -> dict[str, Any]:
    """Where the task's data came from, with what identifies it: the Hub commit, or the
    fingerprint of the very bytes scored (a task file's, a local build's), and the digest of
    the task's declaration."""
    # the subsets the file scored (a SemEval year scored on three of its four: those three)
    scored = [
        e.get("hf_subset", "default")
        for s in splits
        for e in file.scores.get(s, [])
        if isinstance(e, dict)
    ]
    subsets = [s for s in dict.fromkeys(map(str, scored)) if s] or list(task.subsets)
    details = {
        "dataset_revision": str(file.dataset_revision),
        "task_type": task.type,
        "splits": ",".join(splits),
        "subsets": ",".join(subsets),
    }
    declaration = file.extra.get("task_declaration")
    if isinstance(declaration, str):
        details["task_declaration"] = declaration
    if task.hf_path:
        out: dict[str, Any] = {
            "dataset_name": task.name,
            "source_type": "hf_dataset",
            "hf_repo": task.hf_path,
            "additional_details": details,
        }
        if len(splits) == 1:
            out["hf_split"] = splits[0]
        return out
    return {"dataset_name": task.name, "source_type": "other", "additional_details": details}


def _result(model: ModelResults, bench: Benchmark, task: Task) -> dict[str, Any] | None:
    file = model.files.get(task.name)
    score = model.scores.get(task.name)
    if file is None or score is None or not math.isfinite(score):
        return None
    key = main_score(bench, task)
    splits = eval_splits(bench, task)
    details = {"main_score": key, "evaluation_time_seconds": _text(file.evaluation_time)}
    for extra in ("truncation", "storage", "encode_seconds"):
        if extra in file.extra:
            details[extra] = _text(file.extra[extra])
    details |= _computed_by(file.extra)
    # the scores the leaderboard shows beside the main one (DETAIL_KEYS), read back by eee_read
    found = model.details.get(task.name, {})
    details |= {k: repr(float(found[k])) for k in DETAIL_KEYS[task.type] if k in found}
    score_details: dict[str, Any] = {"score": float(score), "details": details}
    uncertainty = _uncertainty(model, bench, task)
    if uncertainty is not None:
        score_details["uncertainty"] = uncertainty
    return {
        "evaluation_result_id": f"{task.name}/{key}",
        "evaluation_name": task.name,
        "source_data": _source_data(task, file, splits),
        "metric_config": {
            "evaluation_description": task.description or f"{task.name} ({task.type})",
            "metric_id": f"mteb.{key}",
            "metric_name": key,
            "metric_kind": key.split("_at_")[0].removeprefix("cosine_").removeprefix("max_"),
            "metric_unit": "proportion",
            "lower_is_better": False,
            "score_type": "continuous",
            "min_score": -1.0 if _FROM_MINUS_ONE.search(key) else 0.0,
            "max_score": 1.0,
        },
        "score_details": score_details,
    }


def _computed_by(extra: Mapping[str, Any]) -> dict[str, str]:
    """The result file's ``software`` (the library versions that computed it: ``rank``'s note
    where they differ) and ``chemistry`` (how the tokenizer cut its chemical strings: ``rank
    --diagnostics``) as ``details`` strings (JSON; EEE wants strings), which ``eee_read`` reads
    back. Only what a reader would read of them: the versions ``software_of`` keeps, a
    tokenization block (an object) or ``"unknown"`` (an API's)."""
    from .diagnostics import UNKNOWN
    from .software import software_of

    out = {}
    versions = software_of(extra)
    if versions:
        out["software"] = json.dumps(versions, sort_keys=True)
    chemistry = extra.get("chemistry")
    if isinstance(chemistry, dict) or chemistry == UNKNOWN:
        out["chemistry"] = json.dumps(chemistry, sort_keys=True, allow_nan=False)
    return out


def _model_info(model: ModelResults) -> dict[str, Any]:
    meta = model.meta if isinstance(model.meta, dict) else {}
    name = meta.get("name")
    ident = name if isinstance(name, str) and name.strip() else model.folder.name
    ident = ident.replace("__", "/", 1) if "/" not in ident else ident
    details = {
        k: _text(meta[k])
        for k in (
            "revision",
            "embedding_dim",
            "max_tokens",
            "n_parameters",
            "experiment_kwargs",
            "weights",
            "license",
        )
        if meta.get(k) is not None
    }
    # the model's own name and variant, never the "[folder]" that tells two local folders apart
    # (a path of the exporter's machine in a record meant for publishing)
    out: dict[str, Any] = {"name": ident + _variant_label(meta), "id": ident}
    if "/" in ident:
        out["developer"] = ident.split("/", 1)[0]
    framework = meta.get("framework")
    if isinstance(framework, str) and framework:
        out["inference_engine"] = {"name": framework}
    out["additional_details"] = {**details, **_availability(meta)}
    return out


def _availability(meta: Mapping[str, Any]) -> dict[str, str]:
    """EEE 0.3.0's two required facts of a model, as its results know them: weights this run
    loaded (``open_weights``: true, which chemteb writes for exactly those) were deployed by
    whoever ran it; weights said closed are closed; anything else is ``unknown``, not guessed
    (an API's deployment, another tool's folder)."""
    weights = meta.get("open_weights")
    return {
        "deployment_type": "self_deployed" if weights is True else "unknown",
        "model_availability": (
            "open_weights"
            if weights is True
            else "closed_weights"
            if weights is False
            else "unknown"
        ),
    }


def _run_time(model: ModelResults) -> str | None:
    """When the newest run that scored these files finished (ISO 8601), if recorded."""
    ids = {f.extra.get("chemteb_run_id") for f in model.files.values()}
    times = [r.get("finished") for i, r in model.runs.items() if i in ids and isinstance(r, dict)]
    stamps = sorted(t for t in times if isinstance(t, str))
    return stamps[-1] if stamps else None


def _created(model: ModelResults, now: float) -> str:
    """The record's ``retrieved_timestamp`` (Unix seconds): when its results were made, the
    newest run that scored them finished, so that exporting the same results again writes the
    same bytes (its sidecar's lines carry the id it is part of); ``now`` for results without a
    run record (another tool's)."""
    from datetime import datetime

    finished = _run_time(model)
    try:
        stamp = datetime.fromisoformat(finished).timestamp() if finished else now
    except ValueError:  # a hand-edited record: the export's own time
        stamp = now
    return f"{stamp:.0f}"


def eee_record(
    model: ModelResults,
    bench: Benchmark,
    *,
    organization: str = "unknown",
    relationship: str = "third_party",
    now: float | None = None,
) -> dict[str, Any] | None:
    """One model's (or variant's) Every Eval Ever record on ``bench``: every task it has a
    score on; ``None`` when it has none."""
    results = [r for t in benchmark_tasks(bench) if (r := _result(model, bench, t)) is not None]
    if not results:
        return None
    info = _model_info(model)
    retrieved = _created(model, time.time() if now is None else now)
    versions = {f.extra.get("chemteb_eval_version") for f in model.files.values()}
    version = next(iter(versions)) if len(versions) == 1 else None
    variant = _variant(model)
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": f"{bench.name}/{info['id']}{variant}/{retrieved}",
        "retrieved_timestamp": retrieved,
        "source_metadata": {
            "source_name": "chemteb-eval",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
            "additional_details": {"benchmark": bench.name},
        },
        "eval_library": {
            "name": "chemteb-eval",
            "version": version if isinstance(version, str) else "unknown",
            "additional_details": {"exported_by": __version__, "result_layout": "mteb"},
        },
        "model_info": info,
        "evaluation_results": results,
    }
    finished = _run_time(model)
    if finished is not None:
        record["evaluation_timestamp"] = finished
    return record


def _variant_label(meta: Mapping[str, Any]) -> str:
    kwargs = meta.get("experiment_kwargs")
    if not isinstance(kwargs, dict) or not kwargs:
        return ""
    return f" ({experiment_label(meta, experiment_name(kwargs))})"


def _variant(model: ModelResults) -> str:
    """``__<MTEB experiment name>`` for a variant of a model (its vectors compressed, another
    backend or dtype), which is an evaluation of its own; ``""`` for the model itself."""
    kwargs = model.meta.get("experiment_kwargs") if isinstance(model.meta, dict) else None
    return f"__{experiment_name(kwargs)}" if isinstance(kwargs, dict) and kwargs else ""


def _content_uuid(record: Mapping[str, Any]) -> str:
    """A uuid (version-4 form, as EEE's file names are) drawn from everything in the record
    but its id, its timestamps and the tasks' timings."""
    body = {
        k: v
        for k, v in record.items()
        if k not in ("evaluation_id", "retrieved_timestamp", "evaluation_timestamp")
    }
    # timings differ between two runs that scored the same: the same evaluation, one file
    body["evaluation_results"] = [
        {**r, "score_details": {**r["score_details"], "details": _untimed(r["score_details"])}}
        for r in body["evaluation_results"]
    ]
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _untimed(details: Mapping[str, Any]) -> dict[str, Any]:
    timings = ("evaluation_time_seconds", "encode_seconds")
    return {k: v for k, v in details.get("details", {}).items() if k not in timings}


def _part(text: str) -> str:
    """A name as one safe path part (never ``..``, a slash or an empty name): where EEE's
    datastore refuses a name, the folder name written instead."""
    safe = _UNSAFE.sub("_", text).strip("._") or "unnamed"
    return safe[:120]


# EEE's datastore path rules (every_eval_ever 0.3.0, helpers/io.py: _required_path_component),
# written again because the package needs Python 3.12; tests/test_eee.py holds them to it
_INVALID = re.compile(r'[<>:"\\|?*\x00-\x1f]')
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"{p}{i}" for p in ("COM", "LPT") for i in range(1, 10))}


def _component(text: str) -> str | None:
    """One datastore folder name as EEE makes it; ``None`` where EEE refuses the name."""
    value = text.strip()
    if not value or value.lower() == "unknown":
        return None
    value = value.replace(":", "_")
    bad = value in (".", "..", "data") or "/" in value or _INVALID.search(value)
    if bad or value.endswith((".", " ")) or value.split(".", 1)[0].upper() in _RESERVED:
        return None
    return value


REFUSED = "EEE's datastore refuses"  # how a note that a folder must be renamed begins


def _safe(text: str) -> str:
    """A folder name EEE's path rules take, for a name they refuse (``data``, ``CON``...):
    ``_part``'s, with ``_`` after it where that alone is still refused."""
    safe = _part(text)
    return safe if _component(safe) is not None else f"{safe}_"


def _flat(text: str) -> str | None:
    """A slash-separated identity as one folder name, EEE's way (its parts joined by ``_``)."""
    parts = [_component(p) if p else None for p in text.strip().split("/")]
    return "_".join(p for p in parts if p) if all(parts) else None


def datastore_parts(bench: str, model_id: str) -> tuple[tuple[str, str, str], str | None]:
    """``(<benchmark>, <developer>, <model>)``: EEE's datastore folders for a record
    (``datastore_path_components``: the developer is the id's namespace, the rest flattened;
    a variant of a model shares its folder), and what EEE would refuse, if anything, with the
    folder name written instead (``_part``)."""
    namespace, _, rest = model_id.strip().partition("/")
    wanted = (_flat(bench), _component(namespace) if rest else None, _flat(rest or namespace))
    fallback = (_safe(bench), _safe(namespace) if rest else "unknown_", _safe(rest or namespace))
    parts = tuple(w or f for w, f in zip(wanted, fallback, strict=True))
    said = (
        repr(bench),
        repr(namespace) if rest else "(the id names none)",
        repr(rest or namespace),
    )
    refused = [f"{what} {text}" for what, text, w in zip(("benchmark", "developer", "model"),
               said, wanted, strict=True) if w is None]  # fmt: skip
    problem = (
        f"{REFUSED} its {', '.join(refused)} as a folder name (a model id names "
        f"its developer as 'org/name'); written to {'/'.join(parts)}: rename it (and the id) "
        "before you submit it"
        if refused
        else None
    )
    return (parts[0], parts[1], parts[2]), problem


def write_eee(
    models: list[ModelResults],
    bench: Benchmark,
    out: Path,
    *,
    organization: str = "unknown",
    relationship: str = "third_party",
) -> list[Path]:
    """Each model's record under ``out/<benchmark>/<developer>/<model>/<uuid>.json`` (EEE's
    datastore layout: ``datastore_parts``) and its per-item sidecar beside it
    (``<uuid>_samples.jsonl``, where the run wrote evidence); the paths written, sidecars first.
    A name EEE's datastore would refuse is said in the model's notes."""
    written = []
    now = time.time()
    for model in models:
        record = eee_record(
            model, bench, organization=organization, relationship=relationship, now=now
        )
        if record is None:
            continue
        info = record["model_info"]
        if not (one_line(info["name"]) and one_line(info["id"])):
            model.skipped.append(
                f"{model.folder}: its model is named {info['name']!r}, not on one line: no "
                "record written (a reader refuses it); fix the name its results folder records"
            )
            continue
        parts, problem = datastore_parts(bench.name, info["id"])
        if problem is not None:
            model.notes.append(f"{record['model_info']['name']}: {problem}")
        folder = out.joinpath(*parts)
        samples = _samples(model, bench, record)
        text = "".join(json.dumps(line, sort_keys=True, allow_nan=False) + "\n" for line in samples)
        checksum = hashlib.sha256(text.encode("utf-8")).hexdigest()
        # named by the record's content and its items' (not their evaluation_id, which holds
        # the record's time): other evidence is another file, the same results the same one
        items = [{k: v for k, v in line.items() if k != "evaluation_id"} for line in samples]
        content = hashlib.sha256(json.dumps(items, sort_keys=True).encode()).hexdigest()
        key = _content_uuid({**record, "samples": content if samples else None})
        if samples:
            sidecar = folder / f"{key}_samples.jsonl"
            write_text_atomic(sidecar, text)
            record["detailed_evaluation_results"] = {
                "format": "jsonl",
                # EEE's datastore path: DIR is its data/ folder
                "file_path": "/".join(("data", *parts, sidecar.name)),
                "hash_algorithm": "sha256",
                "checksum": checksum,
                "total_rows": len(samples),
            }
            written.append(sidecar)
        path = folder / f"{key}.json"
        write_json_atomic(path, record)
        written.append(path)
    return written


def _samples(model: ModelResults, bench: Benchmark, record: Mapping[str, Any]) -> list[Any]:
    """The record's per-item lines, task after task, from each task's checked evidence (none
    where the run wrote none): ``eee_items``'s mapping."""
    from .eee_items import instance_lines
    from .ranking import task_evidence

    tasks = {t.name: t for t in benchmark_tasks(bench)}
    lines: list[Any] = []
    for result in record["evaluation_results"]:
        task = tasks[result["evaluation_name"]]
        key = main_score(bench, task)
        evidence = task_evidence(model, bench, task, key)
        if evidence is None:
            continue
        lines += instance_lines(
            task.type,
            evidence.items,
            key,
            eval_splits(bench, task)[0],
            task=task.name,
            evaluation_id=record["evaluation_id"],
            model_id=record["model_info"]["id"],
            result_id=result["evaluation_result_id"],
        )
    return lines
