"""Scores into a model's card: ``model-index`` entries the way MTEB writes them, merged into the
card's existing metadata, and the Hub's newer per-result files (``.eval_results/<Task>.yaml``).

Re-running is idempotent: when nothing changed, nothing is committed. Entries of other tasks,
other tools and every other card field stay as they were.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemteb_eval import __version__
from chemteb_eval.results.ranking import DETAIL_KEYS
from chemteb_eval.tasks import Task
from chemteb_eval.tasks.registry import list_tasks

from ._errors import hub_errors, require_token

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

__all__ = [
    "HF_TASK_TYPES",
    "PushReport",
    "TaskResult",
    "card_with_results",
    "eval_result_files",
    "eval_results",
    "find_task_results",
    "push_results",
]

# MTEB's map from its task types to the Hub's task categories (TaskMetadata._hf_task_type).
HF_TASK_TYPES = {
    "BitextMining": "translation",
    "Classification": "text-classification",
    "Clustering": "text-classification",
    "PairClassification": "text-classification",
    "Retrieval": "text-retrieval",
    "STS": "sentence-similarity",
    "NER": "token-classification",
}
_SKIP = {"model_meta.json", "run_meta.json"}


@dataclass(frozen=True)
class TaskResult:
    """One result file matched to its task record."""

    task: Task
    payload: dict[str, Any]
    path: Path


def _match_task(name: str, revision: str | None) -> Task | None:
    found = [t for t in list_tasks() if name == t.name or name in t.aliases]
    if len(found) <= 1:
        return found[0] if found else None
    by_revision = [
        t for t in found if revision is not None and t.revision_status(revision) != "unknown"
    ]
    if by_revision:
        return by_revision[0]
    # The same name in several collections and an unrecognised revision: MTEB's record (the one
    # MTEB's own result files would name) is the better guess than the release's.
    return next((t for t in found if t.collection == "mteb"), found[0])


def _result_files(path: Path) -> list[Path]:
    def tasks_in(folder: Path) -> list[Path]:
        return sorted(p for p in folder.glob("*.json") if p.name not in _SKIP)

    if not path.is_dir():
        raise ValueError(f"results: {path} is not a folder.")
    direct = tasks_in(path)
    if direct:
        return direct
    revisions = [d for d in sorted(path.iterdir()) if d.is_dir() and tasks_in(d)]
    if len(revisions) == 1:
        return tasks_in(revisions[0])
    if len(revisions) > 1:
        names = ", ".join(d.name for d in revisions)
        raise ValueError(f"results: {path} holds several revisions ({names}); pass one of them.")
    models = [d for d in sorted(path.iterdir()) if d.is_dir() and any(d.glob("*/*.json"))]
    if len(models) == 1:
        return _result_files(models[0])
    if models:
        names = ", ".join(d.name for d in models)
        raise ValueError(
            f"results: {path} holds several models ({names}); pass one model's folder."
        )
    raise ValueError(f"results: no result files under {path}.")


def find_task_results(
    path: str | Path, *, log: Callable[[str], None] = print
) -> tuple[str | None, list[TaskResult]]:
    """The result files of one model under ``path`` (a results root holding one model, a model
    folder, or a revision folder), with the model id from ``model_meta.json`` if present.

    Files of tasks whose data is not on the Hub (PipChem) or unknown to the registry are skipped
    with a line on ``log``.
    """
    files = _result_files(Path(path))
    meta_path = files[0].parent / "model_meta.json"
    model = None
    if meta_path.is_file():
        try:
            model = json.loads(meta_path.read_text(encoding="utf-8")).get("name")
        except ValueError as exc:
            raise ValueError(f"results: {meta_path} is not valid JSON ({exc}).") from exc
    found = []
    for file in files:
        try:
            payload = json.loads(file.read_text(encoding="utf-8"))
            name = payload.get("task_name") or file.stem
            scores = payload["scores"]
            if not isinstance(scores, dict):
                raise TypeError("scores is not an object")
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"results: {file} is not a result file ({exc}).") from exc
        task = _match_task(name, payload.get("dataset_revision"))
        if task is None:
            log(f"skipped {file.name}: no task named {name} in the registry")
        elif task.hf_path is None:
            log(f"skipped {file.name}: {task.name}'s dataset is built locally, not on the Hub")
        else:
            found.append(TaskResult(task=task, payload=payload, path=file))
    return model, found


def _entries(result: TaskResult) -> Iterable[tuple[str, str, dict[str, Any]]]:
    for split, entries in result.payload["scores"].items():
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("main_score"), (int, float)):
                yield split, str(entry.get("hf_subset", "default")), entry


def eval_results(results: Iterable[TaskResult]) -> list[EvalResult]:
    """``model-index`` entries, as MTEB's ``TaskResult.get_hf_eval_results`` writes them: per
    split and subset, the main score (raw, 0-1), then the type's other scores present."""
    from huggingface_hub import EvalResult

    out = []
    for result in results:
        task = result.task
        revision = result.payload.get("dataset_revision") or task.revision
        for split, subset, entry in _entries(result):
            keys = [task.main_score, *(k for k in DETAIL_KEYS[task.type] if k != task.main_score)]
            for key in keys:
                value = entry["main_score"] if key == task.main_score else entry.get(key)
                if not isinstance(value, (int, float)):
                    continue
                out.append(
                    EvalResult(
                        task_type=HF_TASK_TYPES[task.type],
                        task_name=task.type,
                        dataset_type=str(task.hf_path),
                        dataset_name=f"{task.name} ({subset})",
                        dataset_config=subset,
                        dataset_split=split,
                        dataset_revision=revision,
                        metric_type=key,
                        metric_name=key,
                        metric_value=float(value),
                    )
                )
    return out


def eval_result_files(results: Iterable[TaskResult]) -> dict[str, str]:
    """``.eval_results/<Task>.yaml`` files (huggingface_hub's ``EvalResultEntry`` format), as
    MTEB pushes them: one entry per split and subset (main score x 100, 5 decimals) and the
    task's overall score (their mean) when every split of the file has a subset."""
    import yaml
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    files = {}
    notes = f"Obtained using chemteb-eval v{__version__}"
    for result in results:
        task = result.task
        revision = result.payload.get("dataset_revision") or task.revision
        entries, scores = [], []
        for split, subset, entry in _entries(result):
            scores.append(float(entry["main_score"]))
            entries.append(
                EvalResultEntry(
                    dataset_id=str(task.hf_path),
                    task_id=f"{task.name}_{subset}_{split}",
                    value=round(float(entry["main_score"]) * 100, 5),
                    dataset_revision=revision,
                    notes=notes,
                )
            )
        if not entries:
            continue
        entries.append(
            EvalResultEntry(
                dataset_id=str(task.hf_path),
                task_id=task.name,
                value=round(sum(scores) / len(scores) * 100, 5),
                dataset_revision=revision,
                notes=notes,
            )
        )
        files[f".eval_results/{task.name}.yaml"] = yaml.safe_dump(
            eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True
        )
    return files


def _key(r: EvalResult) -> tuple[Any, ...]:
    # Same task, dataset, subset, split and metric: the new value (and revision) replaces the old.
    return (r.task_type, r.dataset_type, r.dataset_config, r.dataset_split, r.metric_type)


def card_with_results(old_card: str | None, model_name: str, new: list[EvalResult]) -> str | None:
    """The card text with ``new`` merged into its ``model-index``, or ``None`` when the card
    already holds exactly these values (nothing to commit).

    Existing entries with another key and all other metadata and text are kept.
    """
    from huggingface_hub import ModelCard, ModelCardData

    card = ModelCard(old_card if old_card is not None else f"---\n---\n\n# {model_name}\n")
    data = card.data
    assert isinstance(data, ModelCardData)  # ModelCard always parses into ModelCardData
    existing = list(data.eval_results or [])
    merged = list(existing)
    index = {_key(r): i for i, r in enumerate(merged)}
    for result in new:
        if _key(result) in index:
            merged[index[_key(result)]] = result
        else:
            index[_key(result)] = len(merged)
            merged.append(result)
    if merged == existing and old_card is not None:
        return None
    data.eval_results = merged
    data.model_name = data.model_name or model_name
    return str(card)


@dataclass
class PushReport:
    """What push-results did (or would do in a dry run)."""

    repo_id: str
    card_diff: str = ""
    changed_files: list[str] = field(default_factory=list)
    unchanged_files: list[str] = field(default_factory=list)
    commit: str | None = None
    pr_url: str | None = None


def _remote_text(repo_id: str, path: str) -> str | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    try:
        local = hf_hub_download(repo_id, path)
    except RemoteEntryNotFoundError:
        return None
    return Path(local).read_text(encoding="utf-8")


def push_results(
    results: str | Path,
    repo_id: str,
    *,
    create_pr: bool = False,
    dry_run: bool = False,
    log: Callable[[str], None] = print,
) -> PushReport:
    """Add a model's ChemTEB scores to its model card (and ``.eval_results/``) on the Hub.

    Args:
        results: the model's results (a results root with one model, its folder, or a
            revision folder).
        repo_id: the model repository (``org/name``).
        create_pr: open a pull request instead of committing to ``main``.
        dry_run: print the card diff and the files that would change; change nothing.
        log: where progress lines go.

    Returns:
        The ``PushReport``.
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"repo_id: {repo_id!r} is not 'org/name'.")
    model, found = find_task_results(results, log=log)
    if not found:
        raise ValueError(f"results: no result file under {results} has a task on the Hub.")
    report = PushReport(repo_id=repo_id)
    files = eval_result_files(found)
    with hub_errors(f"read the card of {repo_id}", repo_id):
        old_card = _remote_text(repo_id, "README.md")
        remote = {path: _remote_text(repo_id, path) for path in files}
    new_card = card_with_results(old_card, model or repo_id, eval_results(found))
    operations = []
    if new_card is not None:
        report.card_diff = "".join(
            difflib.unified_diff(
                (old_card or "").splitlines(keepends=True),
                new_card.splitlines(keepends=True),
                fromfile=f"{repo_id}/README.md (Hub)",
                tofile=f"{repo_id}/README.md (with ChemTEB results)",
            )
        )
        report.changed_files.append("README.md")
        operations.append(CommitOperationAdd("README.md", new_card.encode("utf-8")))
    else:
        report.unchanged_files.append("README.md")
    for path, text in files.items():
        if remote.get(path) == text:
            report.unchanged_files.append(path)
        else:
            report.changed_files.append(path)
            operations.append(CommitOperationAdd(path, text.encode("utf-8")))
    tasks = sorted({r.task.name for r in found})
    if dry_run:
        log(report.card_diff or f"{repo_id}/README.md: unchanged")
        log(f"[dry run] would change: {', '.join(report.changed_files) or 'nothing'}")
        return report
    if not operations:
        log(
            f"{repo_id}: the card already holds these {len(tasks)} tasks' scores; nothing to commit."
        )
        return report
    require_token(f"push results to {repo_id}")
    with hub_errors(f"push results to {repo_id}", repo_id):
        info = HfApi().create_commit(
            repo_id,
            operations=operations,
            commit_message=f"Add ChemTEB results ({len(tasks)} tasks, chemteb-eval {__version__})",
            commit_description="Tasks: " + ", ".join(tasks),
            create_pr=create_pr,
        )
    report.commit = info.oid
    report.pr_url = info.pr_url
    log(
        f"{repo_id}: {len(report.changed_files)} file(s) committed at {info.oid}"
        + (f"; pull request {info.pr_url}" if info.pr_url else "")
    )
    return report
