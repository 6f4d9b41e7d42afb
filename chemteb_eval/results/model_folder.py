"""One model's result folder, read once: MTEB's ``<model>/<revision>/<Task>.json`` layout (ours
too), its experiments (``<revision>/experiments/<name>/``: another backend or dtype of the model),
its ``model_meta.json``, its run records and the tasks its task-file runs recorded.

This module is the home of ``model_meta.json``: it alone reads and writes the file, and decides
which folder holds which weights' results (``weights_folder``); the runner builds the record and
asks it. Run records are ``runs``'s; recorded task declarations are ``tasks.recorded``'s.

The middle layer of three, as MTEB's ``task_result -> model_result -> benchmark_results``: a
result file is ``schema.ResultFile``'s; a folder of model folders is ``scan``'s; a benchmark's
board is ``board``'s. ``hub.model_card`` reads a model's folder with the same pieces.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from chemteb_eval._files import write_json_atomic
from chemteb_eval.errors import ChemtebError, short_repr
from chemteb_eval.tasks import Task
from chemteb_eval.tasks.recorded import recorded_tasks

from .io import EXPERIMENTS, experiment_label, model_dir
from .runs import LEGACY_RUN_META, latest_run, read_runs, record_files
from .schema import ResultFile, is_record, read_json, read_json_object

__all__ = [
    "META_FILE",
    "NOT_RESULTS",
    "ScannedModel",
    "folder_meta_name",
    "folder_variant",
    "meta_name",
    "model_metas",
    "model_name",
    "one_line",
    "read_model_folder",
    "recorded_tasks",
    "remove_lone_meta",
    "result_dirs",
    "result_paths",
    "weights_folder",
    "write_model_meta",
]

# A results folder's record of the model that made it (MTEB's name for it).
META_FILE = "model_meta.json"
# The JSON files of a results folder that are not a task's result.
NOT_RESULTS = frozenset({META_FILE, LEGACY_RUN_META})


def result_paths(folder: Path) -> list[Path]:
    """The task result files directly in ``folder`` (one revision's or experiment's), by name."""
    return sorted(
        p for p in folder.glob("*.json") if p.name not in NOT_RESULTS and not is_record(p)
    )


def model_name(folder: Path, meta: Mapping[str, Any] | None, table: Mapping[str, str]) -> str:
    """A model folder's model id: ``model_meta.json``'s ``name``, else the model table's id
    for the folder, else the folder name with ``__`` read as ``/``. (What prints it makes it
    safe to show; a model card, where it heads the card, also wants one line: ``meta_name``.)"""
    name = (meta or {}).get("name")
    if isinstance(name, str) and name:
        return name
    return table.get(folder.name) or folder.name.replace("__", "/")


def one_line(name: object) -> TypeGuard[str]:
    """Whether ``name`` can name a model: text on one line, not blank (a model card's heading,
    a row of a table, an EEE record's ``model_info``)."""
    return isinstance(name, str) and bool(name.strip()) and len(name.splitlines()) == 1


def meta_name(meta_path: Path) -> str | None:
    """``model_meta.json``'s ``name``, checked to be one line of text (it names a model card's
    ``model-index`` entry and heads a new card); ``None`` when the file has none. ``ValueError``
    naming the file otherwise."""
    try:
        meta = read_json(meta_path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"results: {meta_path} is not valid JSON ({exc}).") from None
    name = meta.get("name") if isinstance(meta, dict) else None
    if name is None:
        return None
    if not one_line(name):
        raise ValueError(
            f"results: {meta_path}: 'name' is {short_repr(name)}, not a model id on one line; "
            "fix it (or delete the key to use the repo id)."
        )
    return name


@dataclass
class ScannedModel:
    """One model folder, its JSON files parsed once (so several benchmarks can be scored)."""

    folder: Path
    name: str
    meta: dict[str, Any] = field(default_factory=dict)  # model_meta.json, if any
    run_meta: dict[str, Any] = field(default_factory=dict)  # the newest folder's latest_run
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)  # runs.jsonl: run id -> record
    files: list[ResultFile] = field(default_factory=list)  # oldest first
    skipped: list[str] = field(default_factory=list)  # unreadable files, with the reason
    notes: list[str] = field(default_factory=list)  # what a reader should know; nothing skipped
    custom: list[Task] = field(default_factory=list)  # tasks its task-file runs recorded
    # MTEB's experiment folder name (another backend or dtype of the model), None for the model
    experiment: str | None = None
    # the file a row was read from where its folder cannot tell it apart: an Every Eval Ever
    # record (``eee_read``) beside another record of the same model
    source: Path | None = None


def _by_mtime(files: Iterable[Path], skipped: list[str]) -> list[Path]:
    """``files`` oldest first; a file that cannot be stat-ed is skipped with the reason."""
    dated = []
    for path in files:
        try:
            dated.append((path.stat().st_mtime, str(path), path))
        except OSError as exc:
            skipped.append(f"{path}: {exc.strerror or exc}")
    return [path for *_, path in sorted(dated)]


def result_dirs(folder: Path) -> list[tuple[str | None, list[Path]]]:
    """A model folder's result folders: its revision folders (``None``: the model as it is),
    then each experiment's (MTEB's ``<revision>/experiments/<name>/``: another backend or
    compute dtype of the model, which is another row, never mixed into the model's)."""
    revisions = sorted(p for p in folder.iterdir() if p.is_dir())
    out: list[tuple[str | None, list[Path]]] = [(None, revisions)]
    names = sorted({e.name for r in revisions for e in (r / EXPERIMENTS).glob("*") if e.is_dir()})
    out += [(name, [r / EXPERIMENTS / name for r in revisions]) for name in names]
    return out


def read_model_folder(
    folder: Path,
    experiment: str | None,
    dirs: list[Path],
    table: Mapping[str, str],
    problem: str,
) -> ScannedModel | None:
    """One model's (or one experiment's) files, parsed once; ``None`` when it has none."""
    unreadable: list[str] = []
    # run records (a legacy run_meta.json too) are _read_runs's
    # an Every Eval Ever record among them is eee_read's, never a task's result
    found = (
        p for d in dirs for p in d.glob("*.json") if p.name != LEGACY_RUN_META and not is_record(p)
    )
    files = _by_mtime(found, unreadable)
    if not files and not unreadable:
        return None
    if problem:
        unreadable.insert(0, problem)
    model = ScannedModel(folder=folder, name=model_name(folder, None, table), skipped=unreadable)
    model.experiment = experiment
    for path in files:
        try:
            payload = read_json_object(path)
            if path.name == META_FILE:
                model.meta = payload
                model.name = model_name(folder, payload, table)
            else:
                model.files.append(ResultFile.from_dict(payload, path))
        except (OSError, ValueError) as exc:
            model.skipped.append(f"{path}: {exc}")
    if experiment is not None:  # MTEB's own way to name it: "model (backend=onnx-int8)"
        model.name = f"{model.name} ({experiment_label(model.meta, experiment)})"
    _read_runs(dirs, model)
    model.custom = recorded_tasks(dirs, model.skipped)
    return model


def _read_runs(dirs: list[Path], model: ScannedModel) -> None:
    """Every run's record (``runs.jsonl`` in each revision folder, or a legacy
    ``run_meta.json``), by run id; ``run_meta``, the newest folder's ``latest_run``."""
    seen: set[Path] = set()
    for path in _by_mtime(record_files(dirs), model.skipped):
        if path.parent in seen:
            continue
        seen.add(path.parent)
        records, problems = read_runs(path.parent)
        model.skipped.extend(problems)
        for record in records:
            if isinstance(record.get("run_id"), str):
                model.runs[record["run_id"]] = record
        if records:
            model.run_meta = latest_run(records)


# -- model_meta.json: written by the runner through these, read above --------------------------


def write_model_meta(folder: Path, record: Mapping[str, Any]) -> None:
    """Write ``folder``'s ``model_meta.json`` (atomically); ``OSError`` when it cannot be."""
    write_json_atomic(folder / META_FILE, record)


def remove_lone_meta(folder: Path) -> None:
    """Remove ``folder``'s ``model_meta.json`` when it is all the folder holds (a run that
    stopped before its first task wrote it); anything else, or an error, leaves it."""
    with contextlib.suppress(OSError):
        if [p.name for p in folder.iterdir()] == [META_FILE]:
            (folder / META_FILE).unlink()


def folder_meta_name(folder: Path) -> str | None:
    """``meta_name`` of ``folder``'s ``model_meta.json``; ``None`` when it has none."""
    path = folder / META_FILE
    return meta_name(path) if path.is_file() else None


def model_metas(root: Path, most: int = 5_000) -> list[dict[str, Any]]:
    """The ``model_meta.json`` of each revision folder under results ``root``
    (``<model>/<revision>/``), at most ``most`` of them (a results root is untrusted); those
    that cannot be read, or are no JSON object, are left out."""
    out = []
    for path in itertools.islice(root.glob(f"*/*/{META_FILE}"), most):
        try:
            out.append(read_json_object(path))
        except (OSError, ValueError):
            continue
    return out


def folder_variant(folder: Path) -> Any:
    """The ``experiment_kwargs`` ``folder``'s ``model_meta.json`` records (a variant of the
    model: its vectors compressed, another backend or dtype); ``None`` when it records none or
    cannot be read."""
    path = folder / META_FILE
    if not path.is_file():
        return None
    try:
        return read_json_object(path).get("experiment_kwargs")
    except (OSError, ValueError):
        return None


def weights_folder(
    output_dir: Path,
    name: str,
    revision: str | None,
    source: str,
    weights: str | None,
    log: Callable[[str], None],
    experiment: str | None = None,
    aliases: tuple[str, ...] = (),
) -> Path:
    """Where the results of model ``name`` at ``revision`` go: ``model_dir`` of them (and below
    it ``experiments/<experiment>`` for another backend or dtype of the model); for local
    weights or an API model's probe (``weights``), a folder that holds no other weights'
    results — neither in the revision folder nor in the experiment's. A folder made by other
    weights of the same name (``exp1/final`` then ``exp2/final``, or a retrained ``final``) is
    left alone and the run writes to ``<name>-<fingerprint>`` instead, so two models' scores
    never mix. ``source`` is where the model was loaded from (a folder written before
    fingerprints were recorded is this model's when its meta names the same source;
    ``aliases``: other labels the same weights were known by, whose folders are theirs)."""
    out = model_dir(output_dir, name, revision)

    def inside(folder: Path) -> Path:
        return folder / EXPERIMENTS / experiment if experiment else folder

    if weights is None:  # a Hub model by its commit: never into an API model's folder
        owners = _owners(out, source, "") | {_folder_weights(inside(out), source, "")}
        if any(isinstance(o, str) and o.startswith(("api:", "probe:")) for o in owners):
            raise ChemtebError(
                f"--output-dir: {out} holds the results of a model served by an API under the "
                f"name {name} and revision {revision}; this model is another: pass another "
                "--output-dir."
            )
        return inside(out)
    alternative = model_dir(output_dir, f"{name}-{weights.split(':')[-1][:10]}", revision)
    for candidate in (out, alternative):
        owners = _owners(candidate, source, weights) | {
            _folder_weights(inside(candidate), source, weights)
        }
        if owners <= {None, weights, *aliases}:
            if candidate is alternative:
                served = weights.startswith(("probe:", "api:"))
                other = "another model served" if served else "other weights"
                log(f"{out} holds results of {other} named {name}; this model's go to {candidate}")
            return inside(candidate)
    raise ChemtebError(  # a fingerprint-prefix collision: not seen, but never mix
        f"--output-dir: {out} and {alternative} both hold other weights' results; pass "
        "another --output-dir."
    )


def _owners(folder: Path, source: str, weights: str) -> set[str | None]:
    """The weights that made a revision folder's results and those of every experiment below
    it (another backend or dtype of a model is still that model: a plain run of other weights
    must not adopt them as its own variants)."""
    inside = folder / EXPERIMENTS
    below = [p for p in inside.iterdir() if p.is_dir()] if inside.is_dir() else []
    return {_folder_weights(f, source, weights) for f in (folder, *below)}


def _folder_weights(folder: Path, source: str, weights: str) -> str | None:
    """The weights a results folder was made by: its ``model_meta.json``'s fingerprint; for a
    folder written before fingerprints were recorded, ``weights`` (this model's) when it names
    this model's own ``source``; ``None`` for a folder with no results; ``"unknown"`` for
    results whose owner cannot be told (no readable ``model_meta.json``)."""
    path = folder / META_FILE
    if not path.exists():
        held = [p for p in folder.glob("*.json")] if folder.is_dir() else []
        return "unknown" if held else None
    try:
        recorded = read_json_object(path)
    except (OSError, ValueError):
        return "unreadable"  # never write into a folder whose owner cannot be told
    owner = recorded.get("weights")
    if isinstance(owner, str):
        return owner
    if recorded.get("source") == source:
        return weights  # an earlier version's folder of this very model
    return "unknown"
