"""Every Eval Ever records read back as results (issue 49): a folder of 0.3.0 records (ours, or
anyone's embedding records that follow docs/eee.md's mapping) becomes scanned models beside MTEB
folders, so ``rank``, ``compare``, ``export`` and the Space read it as they read a results
folder, and their intervals rest on the per-item sidecars.

Every file is untrusted. A record that fails the schema (``eee_check``) is skipped with one line
naming it and its first problem. A sidecar is read only when an interval asks for it, and only
from the record's own folder: its path must name that folder, its bytes the record's checksum,
its lines the record's row count, evaluation, model and tasks, each sample once; anything else
leaves that record's evidence out, said, and its intervals resample tasks (as a results folder
without items files does).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from chemteb_eval._files import open_regular, parse_json
from chemteb_eval.errors import short_repr

from .eee_check import check_instance, check_record
from .io import experiment_name
from .model_folder import ScannedModel, one_line
from .schema import RECORD_NAME, ItemsSource, ResultFile, is_record, read_json, real_number

__all__ = ["DEPTH", "MAX_SIDECAR_BYTES", "is_record", "read_eee", "record_files"]

# <datastore>/data/<benchmark>/<developer>/<model>/<uuid>.json: a record lies at most 5 below
# the folder named (the datastore, its data/, a benchmark's, a developer's or a model's folder)
DEPTH = 5
# PipChem's seven tasks come to 10.8 MB for 11,986 items (~0.9 kB a line); 256 MiB is ~290k
# items, as MAX_ITEMS_BYTES bounds a results folder's evidence
MAX_SIDECAR_BYTES = 256 * 2**20
_MAX_LINE = 2**20  # the longest line written is ~2 kB (a retrieval query's 20 metrics)
_OURS = "chemteb-eval"
Samples = dict[str, list[tuple[str, dict[str, str]]]]  # task -> (sample_id, metadata), in order
Sidecar = tuple[Path, Callable[[], Samples]]  # the file, and its samples read once when asked
_INT_META = ("embedding_dim", "max_tokens", "n_parameters")
_NOT_SCORES = ("main_score", "evaluation_time_seconds", "encode_seconds", "software", "chemistry")


def record_files(root: Path) -> list[Path]:
    """The EEE records at most ``DEPTH`` folders below ``root`` (``root`` itself when it is a
    record), by path; links to folders are not followed."""
    if not root.is_dir():
        return [root] if is_record(root) else []
    found = []
    base = len(root.parts)
    for folder, dirs, files in os.walk(root):
        if len(Path(folder).parts) - base >= DEPTH - 1:
            dirs.clear()  # records lie at most DEPTH below root
        found += [Path(folder, name) for name in files if RECORD_NAME.fullmatch(name)]
    return sorted(found)


def read_eee(root: Path, paths: Iterable[Path]) -> tuple[list[ScannedModel], list[str]]:
    """The models the records at ``paths`` (under ``root``) hold, and one line for each record
    skipped. Records of one model (its id, revision, weights and variant: ``_identity``) merge
    into one row when no task is in two of them (a benchmark's record beside another's); where
    they overlap, each record is a row of its own, told apart by its file, as are rows that
    share a name."""
    skipped: list[str] = []
    checked = []
    for path in paths:
        try:
            record = read_json(path)
            check_record(record)
        except (OSError, ValueError) as exc:
            skipped.append(f"{path}: {exc}")
            continue
        checked.append((path, record))
    # of two copies of one record, the one in the folder its sidecar's path names is read
    checked.sort(key=lambda found: (not _at_home(*found), str(found[0])))
    rows: dict[tuple[str, ...], list[ScannedModel]] = {}
    for path, record in _once(checked, skipped):
        try:
            model = _model(root, path, record)
        except ValueError as exc:
            skipped.append(f"{path}: {exc}")
            continue
        rows.setdefault(_identity(model), []).append(model)
    out = [m for same in rows.values() for m in _merged(same)]
    shown = Counter(m.name for m in out)
    for model in out:  # rows of one name (another revision...): each named by its record file
        if shown[model.name] > 1 and model.files:
            model.source = model.files[0].path
    # a results folder's order: by model folder, the model before its variants
    return sorted(out, key=_order), skipped


def _once(
    checked: list[tuple[Path, Any]], skipped: list[str]
) -> list[tuple[Path, Mapping[str, Any]]]:
    """Each record once: of copies of one record (one uuid or ``evaluation_id``, the same
    content) the first is read, the others named; records that share a uuid or an
    ``evaluation_id`` but not their content conflict, and none of them is read."""
    bodies: dict[str, set[str]] = {}  # uuid or evaluation_id -> the contents that carry it
    keyed = []
    for path, record in checked:
        body, keys = (
            json.dumps(record, sort_keys=True),
            (path.stem.lower(), record["evaluation_id"]),
        )
        keyed.append((path, record, keys))
        for key in keys:
            bodies.setdefault(key, set()).add(body)
    first: dict[str, Path] = {}
    kept = []
    for path, record, keys in keyed:
        if any(len(bodies[k]) > 1 for k in keys):
            skipped.append(
                f"{path}: another record has its uuid or evaluation_id with other content: "
                "none of them is read (which one is the evaluation?)"
            )
        elif keys[0] in first or keys[1] in first:
            skipped.append(f"{path}: a copy of {first.get(keys[0]) or first[keys[1]]}; read once")
        else:
            first[keys[0]] = first[keys[1]] = path
            kept.append((path, record))
    return kept


def _identity(model: ScannedModel) -> tuple[str, ...]:
    """What makes two records one model's: its id, revision, weights and variant."""
    meta = model.meta
    kwargs = json.dumps(meta.get("experiment_kwargs") or {}, sort_keys=True)
    return meta["name"], str(meta.get("revision")), str(meta.get("weights")), kwargs


def _order(model: ScannedModel) -> tuple[str, bool, str, str]:
    kwargs = model.meta.get("experiment_kwargs")
    variant = experiment_name(kwargs) if isinstance(kwargs, dict) and kwargs else ""
    return model.folder.name, bool(variant), variant, str(model.source)


def _at_home(path: Path, record: Mapping[str, Any]) -> bool:
    """Whether the record lies in the folder its sidecar's path names (one without a sidecar
    names none: it is where it is)."""
    link = record.get("detailed_evaluation_results")
    return link is None or link["file_path"].split("/")[1:4] == list(path.parent.parts[-3:])


def _merged(same: list[ScannedModel]) -> list[ScannedModel]:
    """One model's rows: one, merged, when no task is in two records; else each its own."""
    if len(same) == 1:
        return same
    names = [f.task_name for m in same for f in m.files]
    if len(names) != len(set(names)):
        for model in same:  # told apart by their files, not their shared folder
            model.source = model.files[0].path if model.files else model.source
        return same
    first = same[0]
    for other in same[1:]:
        first.files += other.files
        first.skipped += other.skipped
        first.notes += other.notes
        first.runs |= other.runs
    paths = ", ".join(str(m.files[0].path) for m in same if m.files)
    first.notes.append(f"{first.name}: its {len(same)} records read as one row: {paths}")
    return [first]


def _model(root: Path, path: Path, record: Mapping[str, Any]) -> ScannedModel:
    """One record as a scanned model: its results as MTEB-layout result files (each its
    main score, and the detail scores our export records beside it) and its model's facts."""
    info = record["model_info"]
    name, ident = info["name"], info["id"]
    for field, value in (("name", name), ("id", ident)):
        if not one_line(value):
            raise ValueError(f"model_info.{field} is {short_repr(value)}, not a model on one line")
    folder_name = ident.replace("/", "__").strip()
    folder = root / (folder_name if folder_name not in ("", ".", "..") else "unnamed")
    # where it is shown from beside another folder's row of the model: its record's folder
    model = ScannedModel(folder=folder, name=name, meta=_meta(info), source=path.parent)
    sidecar = _sidecar(path, record, model.skipped)
    library = record["eval_library"]
    version = library["version"] if library["name"] == _OURS else None
    by_task: dict[str, list[Mapping[str, Any]]] = {}
    for result in record["evaluation_results"]:
        by_task.setdefault(result["evaluation_name"], []).append(result)
    run = None
    if "evaluation_timestamp" in record:  # the run that made it, as a run record says when
        run = f"eee:{record['evaluation_id']}"
        model.runs[run] = {"run_id": run, "finished": record["evaluation_timestamp"]}
    for task, results in by_task.items():
        model.files.append(_file(path, task, results, version, sidecar, run))
    return model


def _meta(info: Mapping[str, Any]) -> dict[str, Any]:
    """``model_meta.json``'s facts from ``model_info`` (its strings read back as our export
    wrote them: JSON where the value was not a string)."""
    details = info["additional_details"]
    meta: dict[str, Any] = {"name": info["id"]}
    for key, value in details.items():
        if key in ("deployment_type", "model_availability"):
            continue
        if key in _INT_META:
            number = real_number(_json(value))
            if number is not None and number == int(number):
                meta[key] = int(number)
        elif key == "experiment_kwargs":
            kwargs = _json(value)
            if isinstance(kwargs, dict):
                meta[key] = kwargs
        else:
            meta[key] = value
    availability = details["model_availability"]
    if availability != "unknown":
        meta["open_weights"] = availability == "open_weights"
    engine = info.get("inference_engine")
    if isinstance(engine, dict) and isinstance(engine.get("name"), str):
        meta["framework"] = engine["name"]
    return meta


def _json(text: str) -> Any:
    """A details string's JSON value; ``None`` for text that is none (or nests past the
    recursion limit: ``parse_json``)."""
    try:
        return parse_json(text)
    except ValueError:
        return None


def _file(
    path: Path,
    task: str,
    results: list[Mapping[str, Any]],
    version: str | None,
    sidecar: Sidecar | None,
    run: str | None,
) -> ResultFile:
    """A task's results as one MTEB-layout result file: its splits and subsets as the record's
    source data names them, each entry the main score and the details recorded beside it."""
    data = results[0]["source_data"]
    facts = data.get("additional_details", {})
    splits = [s for s in facts.get("splits", data.get("hf_split", "test")).split(",") if s]
    subsets = [s for s in facts.get("subsets", "default").split(",") if s]
    entry: dict[str, Any] = {}
    main = None
    for result in results:
        details = result["score_details"].get("details", {})
        key = details.get("main_score") or result["metric_config"].get("metric_name")
        if not isinstance(key, str) or not key:
            raise ValueError(f"{task}: no metric_name or main_score names its score")
        if key in entry:
            raise ValueError(f"{task}: its {key} is in two evaluation_results")
        entry[key] = result["score_details"]["score"]
        main = main or (key if details.get("main_score") == key else None)
    for result in results:  # the detail scores our export records beside the main one
        for name, text in result["score_details"].get("details", {}).items():
            number = real_number(_json(text))
            if name not in _NOT_SCORES and number is not None:
                entry.setdefault(name, number)
    main = main or next(iter(entry))
    entry["main_score"] = entry[main]
    revision = facts.get("dataset_revision")
    details = results[0]["score_details"].get("details", {})
    extra: dict[str, Any] = {}
    if version is not None and version != "unknown":
        extra["chemteb_eval_version"] = version
    if run is not None:
        extra["chemteb_run_id"] = run
    for key in ("task_declaration",):
        if key in facts:
            extra[key] = facts[key]
    for key in ("truncation", "storage", "encode_seconds"):
        if key in details:
            extra[key] = _json(details[key])
    extra |= _computed_by(details)
    items = None
    if sidecar is not None and len(splits) * len(subsets) == 1:
        said = results[0]["score_details"].get("uncertainty", {}).get("num_samples")
        items = ItemsSource(sidecar[0], _task_items(sidecar[1], task, splits[0], subsets[0], said))
    return ResultFile(
        task_name=task,
        scores={
            s: [{**entry, "hf_subset": sub, "languages": []} for sub in subsets] for s in splits
        },
        dataset_revision=revision if revision not in (None, "None") else None,
        evaluation_time=real_number(_json(details.get("evaluation_time_seconds", "null"))),
        extra=extra,
        path=path,
        items=items,
        over=tuple(splits),
    )


def _computed_by(details: Mapping[str, str]) -> dict[str, Any]:
    """The ``software`` and ``chemistry`` records ``eee``'s export writes as JSON text, as a
    result file holds them, where they are of their type (versions an object, a tokenization
    block an object or ``"unknown"``); anything else is no record, as in a result file
    (``software.software_of`` and ``diagnostics`` read their insides as untrusted)."""
    out: dict[str, Any] = {}
    software = _json(details.get("software", "null"))
    if isinstance(software, dict):
        out["software"] = software
    chemistry = _json(details.get("chemistry", "null"))
    if isinstance(chemistry, dict) or chemistry == "unknown":
        out["chemistry"] = chemistry
    return out


def _task_items(
    sidecar: Callable[[], Samples],
    task: str,
    split: str,
    subset: str,
    samples: int | None,
) -> Callable[[str, str], dict[tuple[str, str], dict[str, Any]]]:
    def read(task_type: str, key: str) -> dict[tuple[str, str], dict[str, Any]]:
        from .eee_items import evidence_of

        lines = sidecar().get(task)
        if not lines:
            raise ValueError(f"the sidecar holds no samples of {task}")
        if samples is not None and len(lines) != samples:
            raise ValueError(f"{len(lines):,} samples of {task}; its record says {samples:,}")
        return {(split, subset): evidence_of(task_type, key, lines, split)}

    return read


def _sidecar(path: Path, record: Mapping[str, Any], skipped: list[str]) -> Sidecar | None:
    """The record's sidecar, read once when first asked for (``None`` without one): each task's
    samples as ``(sample_id, metadata)``; ``ValueError`` naming what is wrong with it."""
    link = record.get("detailed_evaluation_results")
    if link is None:
        return None
    parts = link["file_path"].split("/")
    if not _at_home(path, record):
        skipped.append(
            f"{path}: its sidecar {link['file_path']!r} is not in the record's own folder "
            f"({'/'.join(path.parent.parts[-3:])}); evidence left out"
        )
        return None
    sidecar = path.with_name(parts[-1])
    found: list[Any] = []

    def read() -> Samples:
        if not found:
            try:
                found.append(_read_sidecar(sidecar, record))
            except ValueError as exc:
                found.append(exc)
            except OSError as exc:  # named once, by the caller's line
                found.append(ValueError(exc.strerror or type(exc).__name__))
        if isinstance(found[0], ValueError):
            raise found[0]
        result: Samples = found[0]
        return result

    return sidecar, read


def _read_sidecar(sidecar: Path, record: Mapping[str, Any]) -> Samples:
    """Every line checked (``check_instance``) and tied to the record; the bytes to its
    checksum, the lines to its row count."""
    link = record["detailed_evaluation_results"]
    info = sidecar.lstat()
    if stat.S_ISLNK(info.st_mode) and sidecar.resolve().parent != sidecar.parent.resolve():
        raise ValueError("it links outside the record's folder")
    digest = hashlib.new(link.get("hash_algorithm", "sha256"))
    tasks: dict[str, set[str]] = {}  # each evaluation's result ids
    for result in record["evaluation_results"]:
        result_ids = tasks.setdefault(result["evaluation_name"], set())
        result_ids.add(result.get("evaluation_result_id", ""))
    out: Samples = {}
    ids: set[tuple[str, str]] = set()
    rows = 0
    with io.BufferedReader(open_regular(sidecar), 1 << 20) as handle:  # unbuffered: 23 s
        size = os.fstat(handle.fileno()).st_size
        if size > MAX_SIDECAR_BYTES:
            raise ValueError(f"{size:,} bytes, over the {MAX_SIDECAR_BYTES:,} a sidecar may hold")
        for raw in iter(lambda: handle.readline(_MAX_LINE + 1), b""):
            rows += 1
            if len(raw) > _MAX_LINE:
                raise ValueError(f"line {rows} is over {_MAX_LINE:,} bytes")
            digest.update(raw)
            try:
                line = check_instance(parse_json(raw))
                sample = _tied(line, record, tasks)
            except ValueError as exc:
                raise ValueError(f"line {rows}: {exc}") from None
            if sample in ids:
                raise ValueError(f"line {rows}: sample {sample[1]!r} of {sample[0]} again")
            ids.add(sample)
            out.setdefault(sample[0], []).append((sample[1], dict(line.get("metadata") or {})))
    if "total_rows" in link and rows != link["total_rows"]:
        raise ValueError(f"{rows:,} lines; the record says {link['total_rows']:,}")
    if "checksum" in link and digest.hexdigest() != link["checksum"].lower():
        raise ValueError(f"its {digest.name} is not the record's checksum (changed or torn?)")
    return out


def _tied(
    line: Mapping[str, Any], record: Mapping[str, Any], tasks: Mapping[str, set[str]]
) -> tuple[str, str]:
    """The line's (task, sample), when it is one of the record's."""
    for key, theirs in (
        ("evaluation_id", record["evaluation_id"]),
        ("model_id", record["model_info"]["id"]),
    ):
        if line[key] != theirs:
            raise ValueError(f"its {key} {short_repr(line[key])} is not the record's")
    if line["evaluation_name"] not in tasks:
        raise ValueError(
            f"its evaluation {short_repr(line['evaluation_name'])} is not in the record"
        )
    result = line.get("evaluation_result_id")
    if result is not None and result not in tasks[line["evaluation_name"]]:
        raise ValueError(f"its evaluation_result_id {short_repr(result)} is not the record's")
    return line["evaluation_name"], line["sample_id"]
