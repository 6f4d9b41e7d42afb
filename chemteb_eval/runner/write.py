"""The write stage: a task's result file with its per-item evidence and, for a task file's
task, its recorded declaration (``tasks.recorded``); a variant folder's ``model_meta.json``
(``results.model_folder``); and the run's record in ``runs.jsonl`` (``results.runs``) — each
format written by its home module, which this stage asks."""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from chemteb_eval import __version__
from chemteb_eval._env import SCORE_SOFTWARE, installed_versions
from chemteb_eval.models._kernels import encoder_device
from chemteb_eval.models.backends import vector_software
from chemteb_eval.results.model_folder import write_model_meta
from chemteb_eval.results.runs import append_run
from chemteb_eval.results.schema import ResultFile, items_path, write_items
from chemteb_eval.scoring.compression import Compression
from chemteb_eval.tasks import Task
from chemteb_eval.tasks.recorded import write_recorded_task

from .plan import cached_plan
from .values import Log, Opened, Plan, Prepared, RunReport

__all__ = [
    "run_software",
    "write_records",
    "write_result",
    "write_run_record",
    "write_variant_meta",
]


def write_result(
    plan: Plan,
    task: Task,
    result: ResultFile,
    items: Mapping[tuple[str, str], dict[str, Any]],
    folder: Path,
    report: RunReport,
) -> None:
    """One result file, its per-item evidence and a task file's declaration, into ``folder``;
    the task done in ``report``, with its summary's main score."""
    # the run (hardware, settings) that timed it, in runs.jsonl beside the file
    result = replace(result, extra={**result.extra, "chemteb_run_id": report.run_id})
    # the per-item evidence beside the MTEB file, for intervals and compare; written first, so
    # that a run killed in between leaves no result without its evidence (the task is pending)
    if items:
        write_items(items_path(folder / f"{task.name}.json"), items)
    result.write(folder)
    if task.definition:  # a task file's task: its declaration, for rank and the Space
        write_recorded_task(folder, task, result.dataset_revision)
    report.statuses[task.name] = "done"
    if "truncation" in result.extra:
        report.truncation[task.name] = result.extra["truncation"]
    try:  # the summary's number: the plan's main score, over the plan's splits
        score = result.score(plan.main_score(task), plan.splits(task), task.subset_weight_key)
    except ValueError:
        score = None
    if score is not None:
        report.main_scores[task.name] = score


def write_variant_meta(folder: Path, meta: Mapping[str, Any]) -> None:
    """A variant's folder, made with its ``model_meta.json`` (before its first result)."""
    folder.mkdir(parents=True, exist_ok=True)
    write_model_meta(folder, meta)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run_software(framework: str | None, device: str | None = None) -> dict[str, str]:
    """The installed versions of every library that can move a run's numbers: what computes its
    model's vectors (``vector_software``: torch, transformers, tokenizers... and the kernel set
    on ``device``) and what scores them (numpy, SciPy, scikit-learn), sorted by name."""
    found = vector_software(framework, device) if framework is not None else {}
    found.update(installed_versions(SCORE_SOFTWARE))
    return dict(sorted(found.items()))


def _hardware() -> dict[str, Any]:
    """What the timings were measured on: CPU model and cores, GPUs, library versions."""
    info: dict[str, Any] = {"platform": platform.platform(), "python": platform.python_version()}
    info["cpu"] = _cpu_model()
    info["cpus"] = os.cpu_count()
    try:
        import torch

        info["torch"] = torch.__version__
        info["cuda_version"] = torch.version.cuda
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        info["gpu_count"] = gpus
        info["cuda"] = torch.cuda.get_device_name(0) if gpus else None
    except ImportError:  # an API model on the core install: no torch, no GPU facts
        pass
    return info


def write_run_record(
    out_dir: Path,
    plan: Plan,
    report: RunReport,
    settings: Mapping[str, Any],
    log: Log = print,
    device: str | None = None,
) -> None:
    """Record the run: hardware, settings (batch size, precision, backend), encoding statistics
    and throughput (texts/s, tokens/s), per-task status and errors.

    Every run's record is appended to ``runs.jsonl`` (so an earlier run's GPU and its timings
    are never lost; result files name their run by ``chemteb_run_id``); ``results.runs`` reads
    them back. A folder's legacy ``run_meta.json`` is first moved into it, so that MTEB's
    loaders, which take every ``.json`` there for a task result, read the folder."""
    record = {
        "run_id": report.run_id,
        "chemteb_eval_version": __version__,
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "benchmark": plan.benchmark.name if plan.benchmark is not None else None,
        "hardware": _hardware(),
        "software": run_software(settings.get("backend"), device),
        "settings": dict(settings),
        "seconds": report.seconds,
        "encoding": report.encoding,
        "tasks": report.statuses,
        "errors": report.errors,
    }
    append_run(out_dir, record, log)


def write_records(
    prepared: Prepared,
    opened: Opened,
    report: RunReport,
    folders: Mapping[Compression, tuple[Path, RunReport]],
) -> None:
    """The run's record beside the model's results, and beside each variant's (with the
    model's speed and hardware, and the variant's compression)."""
    options = prepared.options
    settings = {
        "batch_size": options.batch_size,
        "precision": prepared.variant.precision,
        "device": options.device,
        "backend": opened.encoder.meta.framework,  # what ran (after any fallback)
        "beta": options.beta,
        "requested_backend": prepared.requested,
    }
    device = encoder_device(opened.encoder)
    write_run_record(opened.out_dir, prepared.plan, report, settings, options.log, device)
    for variant, (folder, its) in folders.items():
        its.encoding, its.seconds = report.encoding, report.seconds
        if folder.is_dir():  # the model's speed and hardware beside the variant's files
            more = {**settings, "compression": variant.kwargs()}
            plan = cached_plan(prepared.plan, its.task_types)
            write_run_record(folder, plan, its, more, options.log, device)
