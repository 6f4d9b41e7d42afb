"""Scores into a model's card: ``model-index`` entries the way MTEB writes them, merged into the
card's existing metadata, and the Hub's newer per-result files (``.eval_results/<Task>.yaml``).

Re-running is idempotent: when nothing changed, nothing is committed. Entries of other tasks,
other tools and every other card field stay as they were.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chemteb_eval import __version__
from chemteb_eval.errors import HubUnavailableError
from chemteb_eval.results.board import DETAIL_KEYS
from chemteb_eval.results.markup import md
from chemteb_eval.results.model_folder import meta_name, recorded_tasks, result_paths
from chemteb_eval.results.runs import read_runs
from chemteb_eval.results.schema import ResultFile, check_score, match_task
from chemteb_eval.tasks import (
    BENCHMARKS,
    KINDS,
    Benchmark,
    Task,
    benchmark_tasks,
    eval_splits,
    main_score,
)
from chemteb_eval.tasks.catalog import BUILTIN, TaskCatalog

from ._errors import hub_errors, require_token
from ._repo import check_repo_id

if TYPE_CHECKING:
    from huggingface_hub import EvalResult

__all__ = [
    "HF_TASK_TYPES",
    "CardMergeError",
    "PushReport",
    "TaskResult",
    "benchmark_means",
    "card_with_results",
    "eval_result_files",
    "eval_results",
    "find_task_results",
    "project_url",
    "push_results",
]

# MTEB's map from its task types to the Hub's task categories (TaskMetadata._hf_task_type).
HF_TASK_TYPES = {name: k.hf_task for name, k in KINDS.items()}


@dataclass(frozen=True)
class TaskResult:
    """One result file matched to its task record."""

    task: Task
    file: ResultFile

    @property
    def revision(self) -> str | None:
        return self.file.dataset_revision or self.task.revision


def _result_files(path: Path) -> list[Path]:
    """The result files of the one model under ``path``: a revision folder, a model folder with
    one revision, or a results root with one model (``model_folder.result_paths`` reads each)."""
    if not path.is_dir():
        raise ValueError(f"results: {path} is not a folder.")
    try:
        return _result_files_in(path, result_paths)
    except OSError as exc:  # an unreadable folder inside (permissions, a dangling mount)
        raise ValueError(f"results: cannot read {exc.filename or path} ({exc.strerror}).") from None


def _result_files_in(path: Path, tasks_in: Callable[[Path], list[Path]]) -> list[Path]:
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


def _recorded_catalog(folder: Path, log: Callable[[str], None]) -> TaskCatalog:
    """The registered tasks and those a task-file run recorded beside these results, so that
    their files match (a Hub-sourced one goes on the card under its dataset and commit)."""
    problems: list[str] = []
    found = recorded_tasks([folder], problems)  # the reader ``rank`` and the Space use
    for problem in problems:
        log(f"skipped {problem}")
    try:
        return TaskCatalog.with_tasks(found)
    except ValueError as exc:  # a recorded name that a registered task has
        log(f"skipped the recorded tasks of {folder}: {exc}")
        return BUILTIN


def find_task_results(
    path: str | Path, *, log: Callable[[str], None] = print
) -> tuple[str | None, list[TaskResult]]:
    """The result files of one model under ``path`` (a results root holding one model, a model
    folder, or a revision folder), with the model id from ``model_meta.json`` if present.

    Files of tasks whose data is not on the Hub (PipChem) or unknown to the registry are skipped
    with a line on ``log``.
    """
    files = _result_files(Path(path))
    catalog = _recorded_catalog(files[0].parent, log)
    meta_path = files[0].parent / "model_meta.json"
    model = None
    if meta_path.is_file():
        model = meta_name(meta_path)
    found = []
    for path in files:
        try:
            file = ResultFile.read(path)
        except (OSError, ValueError, RecursionError) as exc:
            raise ValueError(f"results: {path} is not a result file ({exc}).") from exc
        task = match_task(file.task_name, file.dataset_revision, catalog.list_tasks())
        if task is None:
            log(f"skipped {path.name}: no task named {file.task_name} in the registry")
        elif task.hf_path is None and task.builder == "custom":
            log(
                f"skipped {path.name}: {task.name} was scored on your own files, not a Hub "
                "dataset; publish them (chemteb publish-dataset --task-file ...) and run the "
                "task from its Hub source to put its score on a card"
            )
        elif task.hf_path is None:
            log(f"skipped {path.name}: {task.name}'s dataset is built locally, not on the Hub")
        else:
            _check_scores(path, file, task)
            found.append(TaskResult(task=task, file=file))
    return model, found


def _check_scores(path: Path, file: ResultFile, task: Task) -> None:
    """Every score a card would carry is a real number in ``SCORE_RANGE`` (``rank`` skips a
    file that is not; a card must not publish ``.nan``, ``true`` as 100 or 42 as 4200)."""
    for split, subset, entry in file.entries():
        for key in ("main_score", *DETAIL_KEYS[task.type]):
            if key in entry:
                try:
                    check_score(key, entry[key])
                except ValueError as exc:
                    raise ValueError(
                        f"results: {path}: {exc} (split {split}, subset {subset}); fix or "
                        "remove the file"
                    ) from None


def eval_results(results: Iterable[TaskResult]) -> list[EvalResult]:
    """``model-index`` entries, as MTEB's ``TaskResult.get_hf_eval_results`` writes them: per
    split and subset, the main score (raw, 0-1), then the type's other scores present."""
    from huggingface_hub import EvalResult

    out = []
    for result in results:
        task = result.task
        revision = result.revision
        for split, subset, entry in result.file.entries():
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


def eval_result_files(
    results: Iterable[TaskResult],
    *,
    benchmark_repos: Mapping[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> dict[str, str]:
    """``.eval_results/<Task>.yaml`` files (huggingface_hub's ``EvalResultEntry`` format), as
    MTEB pushes them: one entry per split and subset (main score x 100, 5 decimals) and the
    task's overall score (their mean) when every split of the file has a subset. Each entry
    names its ``source`` (chemteb-eval, with a link) and its ``date`` (when the run that wrote
    the file finished, from ``runs.jsonl``; an MTEB file's own ``date``; none when unknown, so
    the Hub shows the commit's time). A benchmark with every one of its tasks here gets
    ``.eval_results/<benchmark>.yaml``, its mean over tasks, as MTEB's ``push_eval_results``
    writes one — when it has a Hub dataset (``benchmark_repos``: name -> repo) to file it under.
    """
    import yaml
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    results = list(results)
    files = {}
    notes = f"Obtained using chemteb-eval v{__version__}"
    source = {"source_url": project_url(), "source_name": f"chemteb-eval v{__version__}"}
    dates = _RunDates()
    for result in results:
        task = result.task
        revision = result.revision
        date = dates.of(result.file)
        entries, scores = [], []
        for split, subset, entry in result.file.entries():
            scores.append(float(entry["main_score"]))
            entries.append(
                EvalResultEntry(
                    dataset_id=str(task.hf_path),
                    task_id=f"{task.name}_{subset}_{split}",
                    value=round(float(entry["main_score"]) * 100, 5),
                    dataset_revision=revision,
                    date=date,
                    notes=notes,
                    **source,
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
                date=date,
                notes=notes,
                **source,
            )
        )
        files[f".eval_results/{task.name}.yaml"] = yaml.safe_dump(
            eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True
        )
    means = {
        bench.name: (bench, mean, date) for bench, mean, date in benchmark_means(results, dates)
    }
    for name in sorted(set(benchmark_repos or {}) - set(means)):
        log(
            f"{name}: --benchmark-repo given, but not every task of it is here at the "
            "benchmark's revisions; no benchmark mean written"
        )
    for bench, mean, date in means.values():
        repo = (benchmark_repos or {}).get(bench.name) or bench.hub_repo
        if repo is None:
            log(
                f"{bench.name}: all {len(bench.tasks)} tasks are here, but the benchmark has no "
                f"dataset on the Hub to file its mean under; pass --benchmark-repo "
                f"'{bench.name}=ORG/NAME' to add .eval_results/{bench.name}.yaml (one already "
                "on the repo is left as it is)"
            )
            continue
        overall = EvalResultEntry(
            dataset_id=repo,
            task_id=bench.name,
            value=round(mean * 100, 5),
            date=date,
            notes=f"Mean over the {len(bench.tasks)} tasks of the scores {bench.name} ranks "
            f"by; {notes}",
            **source,
        )
        files[f".eval_results/{bench.name}.yaml"] = yaml.safe_dump(
            eval_result_entries_to_yaml([overall]), sort_keys=False, allow_unicode=True
        )
    return files


def benchmark_means(
    results: Iterable[TaskResult], dates: _RunDates | None = None
) -> list[tuple[Benchmark, float, str | None]]:
    """Each registered benchmark all of whose tasks are among ``results`` at the revision it
    pins (a file of another revision is other data), on every split the benchmark scores: its
    mean over tasks of the scores the benchmark ranks by (``main_score``: ChemTEB(paper) ranks
    classification by F1, which the files' MTEB ``main_score`` is not), and the newest of the
    files' dates (``None`` if any is unknown)."""
    by_name = {r.task.name: r for r in results}
    dates = dates or _RunDates()  # the caller's: each folder's runs.jsonl read once
    out = []
    for bench in BENCHMARKS.values():
        if not all(name in by_name for name in bench.tasks):
            continue
        values, when = [], []
        for task in benchmark_tasks(bench):
            file = by_name[task.name].file
            if task.revision_status(file.dataset_revision) != "pinned":
                break
            try:
                value = file.score(
                    main_score(bench, task), eval_splits(bench, task), task.subset_weight_key
                )
            except ValueError:
                value = None
            if value is None:
                break
            values.append(value)
            when.append(dates.of(file))
        else:
            newest = None if None in when else max(w for w in when if w is not None)
            out.append((bench, sum(values) / len(values), newest))
    return out


def project_url() -> str:
    """chemteb-eval's home page, as the installed package's metadata names it (pyproject's
    ``[project.urls] Homepage``)."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        for entry in metadata("chemteb-eval").get_all("Project-URL") or []:
            label, _, url = entry.partition(",")
            if label.strip().lower() == "homepage" and url.strip():
                return str(url.strip())
    except PackageNotFoundError:  # run from a source tree that was never installed
        pass
    return _HOMEPAGE


_HOMEPAGE = "https://huggingface.co/chemteb"  # the same as pyproject's, for uninstalled trees


class _RunDates:
    """When each result file was made, as an ISO-8601 UTC time (``2026-12-01T12:00:00Z``): the
    ``finished`` of the run that wrote it (``chemteb_run_id`` in ``runs.jsonl`` beside it), or
    the file's own ``date`` (MTEB 2's files: a POSIX time or an ISO string). Untrusted values
    that are not a time are dropped, never passed on."""

    def __init__(self) -> None:
        self._runs: dict[Path, dict[Any, dict[str, Any]]] = {}

    def of(self, file: ResultFile) -> str | None:
        run_id = file.extra.get("chemteb_run_id")
        if isinstance(run_id, str) and file.path is not None:
            folder = file.path.parent
            if folder not in self._runs:
                records, _ = read_runs(folder)
                self._runs[folder] = {
                    r["run_id"]: r for r in records if isinstance(r.get("run_id"), str)
                }
            found = _iso_time(self._runs[folder].get(run_id, {}).get("finished"))
            if found is not None:
                return found
        return _iso_time(file.extra.get("date"))


def _iso_time(value: Any) -> str | None:
    from datetime import datetime, timezone

    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            moment = datetime.fromtimestamp(value, tz=timezone.utc)
        elif isinstance(value, str) and len(value) <= 64:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        else:
            return None
        if moment.tzinfo is None:  # a naive time: the writer's clock, zone unknown; read as UTC
            moment = moment.replace(tzinfo=timezone.utc)
        moment = moment.astimezone(timezone.utc)  # year 1 at +14:00 is out of range: dropped
    except (ValueError, OverflowError, OSError):
        return None
    # isoformat pads the year to four digits (strftime's %Y gives "999"), so these sort as times
    return moment.replace(microsecond=0, tzinfo=None).isoformat() + "Z"


# What a writer meant as front matter though the Hub's pattern (huggingface_hub's
# REGEX_YAML_BLOCK, "the exact same regex as in the Hub server") does not read it: an opening
# '---' with trailing blanks, no line between the markers, or YAML's document end marker '...'
# as the closing line. Such a card's licence and tags are invisible on the Hub; we rewrite its
# two marker lines as '---' so that they, and our results, are read.
_LOOSE_FRONT = re.compile(
    r"\A(\s*)---[ \t]*(\r\n|\r|\n)(?:(.*?)(?:\r\n|\r|\n))??(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)",
    re.S,
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_DOCUMENT_END = re.compile(r"^\.\.\.[ \t]*\r?$", re.M)


class CardMergeError(ValueError):
    """The card's metadata cannot take our results without rewriting what is not ours."""


def _metric_key(result: Mapping[str, Any]) -> tuple[Any, ...]:
    # Same task type, dataset, subset and split: one result block; a metric within it by type.
    task, data = result.get("task"), result.get("dataset")
    task = task if isinstance(task, Mapping) else {}
    data = data if isinstance(data, Mapping) else {}
    return (task.get("type"), data.get("type"), data.get("config"), data.get("split"))


def _merge_results(old: list[Any], new: list[dict[str, Any]]) -> list[Any]:
    """``old`` results with ``new`` ones merged in: a metric of the same block and type gets the
    new value (its other keys stay); new blocks and metrics are appended; nothing is removed."""
    merged = copy.deepcopy(old)
    blocks = {_metric_key(r): r for r in merged if isinstance(r, dict)}
    for block in new:
        target = blocks.get(_metric_key(block))
        if target is None:
            merged.append(copy.deepcopy(block))
            blocks[_metric_key(block)] = merged[-1]
            continue
        if not isinstance(target.get("dataset"), dict) or not isinstance(
            target.get("metrics"), list
        ):
            raise CardMergeError("a model-index result block has no dataset or metrics list")
        if block["dataset"].get("revision") is not None:
            target["dataset"]["revision"] = block["dataset"]["revision"]
        metrics = {m.get("type"): m for m in target["metrics"] if isinstance(m, dict)}
        for metric in block["metrics"]:
            if metric["type"] in metrics:
                metrics[metric["type"]]["value"] = metric["value"]
            else:
                target["metrics"].append(dict(metric))
    return merged


@dataclass(frozen=True)
class _Card:
    """A card cut where the Hub cuts it: ``head`` (a BOM, blank lines, the opening ``---``
    line), ``front`` (the YAML we merge into; empty or ending with a line break) and ``tail``
    (from the closing marker on: the body). ``normalized``: the markers were rewritten."""

    head: str
    front: str
    tail: str
    normalized: bool = False

    @property
    def text(self) -> str:
        return self.head + self.front + self.tail


def _split_card(text: str) -> _Card:
    """The card cut as the Hub reads it (a card without front matter gets an empty one)."""
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    # huggingface_hub reads cards as utf-8-sig (the Hub server's JavaScript \s takes a BOM too).
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    hub = REGEX_YAML_BLOCK.search(body)
    if hub is not None:
        return _hub_block(bom, body, hub)
    loose = _LOOSE_FRONT.match(body)
    if loose is not None:
        nl = loose.group(2)
        front = "" if loose.group(3) is None else loose.group(3) + nl
        tail = "---" + nl + body[loose.end() :]
        return _Card(bom + loose.group(1) + "---" + nl, front, tail, normalized=True)
    return _Card(bom + "---\n", "", "---\n" + body)


def _hub_block(bom: str, body: str, match: re.Match[str]) -> _Card:
    """The card around the Hub's match; a document end marker ``...`` inside the block ends
    the YAML we write into (what follows it up to ``---`` may only be comments, else the Hub
    cannot read the block at all)."""
    # The Hub's pattern starts its closing group with the line break that ends the YAML.
    found = _LINE_BREAK.match(match.group(3))
    nl = found.group() if found is not None else ""
    front = match.group(2) + nl
    tail = body[match.start(3) + len(nl) :]
    end = _DOCUMENT_END.search(front)
    if end is not None:
        after = front[end.end() :].splitlines()
        if any(line.strip() and not line.lstrip().startswith("#") for line in after):
            line = body[: match.start(2) + end.start()].count("\n") + 1
            raise CardMergeError(
                f"the card's metadata goes on after YAML's end marker '...' (line {line}), so "
                "the Hub cannot read it; end the metadata with '---' there, then retry."
            )
        front, tail = front[: end.start()], front[end.start() :] + tail
    return _Card(bom + body[: match.start(2)], front, tail)


def _check_lossless(yaml_text: str, start: int, end: int) -> None:
    """Raise ``CardMergeError`` if re-writing ``yaml_text[start:end]`` from its data would lose
    something: a comment, an anchor or alias, or a plain value whose text would change
    (``0755`` is read as 493, ``no`` as false, by the YAML 1.1 the Hub's tools use)."""
    import yaml

    scalars: list[tuple[int, int]] = []
    for token in yaml.scan(yaml_text, Loader=yaml.SafeLoader):
        if token.end_mark.index <= start or token.start_mark.index >= end:
            continue
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken, yaml.TagToken)):
            raise CardMergeError("our model-index entry uses YAML anchors, aliases or tags")
        if isinstance(token, yaml.ScalarToken):
            scalars.append((token.start_mark.index, token.end_mark.index))
            if token.plain and not _reads_alike(token.value):
                raise CardMergeError(
                    f"the value {token.value!r} in our model-index entry would be rewritten as "
                    f"{_dump_scalar(yaml.safe_load(token.value))!r}"
                )
    # A comment: '#' at a line start or after white space, outside every scalar.
    for i, char in enumerate(yaml_text[start:end], start):
        if (
            char == "#"
            and (i == 0 or yaml_text[i - 1] in " \t\n")
            and not any(a <= i < b for a, b in scalars)
        ):
            raise CardMergeError("our model-index entry holds YAML comments")


# Plain scalars that YAML 1.1 (PyYAML, which we write with) and YAML 1.2 (the Hub's reader) read
# as the same value, so re-writing them changes no meaning: decimal numbers, true/false, null.
_PORTABLE_NUMBER = re.compile(r"[-+]?(0|[1-9][0-9]*)(\.[0-9]*)?([eE][-+]?[0-9]+)?|[-+]?\.[0-9]+")
_PORTABLE_WORDS = {"true", "false", "True", "False", "TRUE", "FALSE", "null", "Null", "NULL", "~"}


def _reads_alike(text: str) -> bool:
    import yaml

    value = yaml.safe_load(text)
    if isinstance(value, str):
        return True  # a string stays that string (perhaps quoted when written back)
    if isinstance(value, bool) or value is None:
        return text in _PORTABLE_WORDS
    return isinstance(value, (int, float)) and _PORTABLE_NUMBER.fullmatch(text) is not None


def _dump_scalar(value: Any) -> str:
    import yaml

    return str(yaml.safe_dump(value, default_flow_style=True)).removesuffix("\n...\n").strip()


def _dump_block(data: Any, indent: int) -> str:
    import yaml

    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def card_with_results(
    old_card: str | None,
    model_name: str,
    new: list[EvalResult],
    *,
    aliases: Iterable[str] = (),
) -> str | None:
    """The card text with ``new`` merged into its ``model-index``, or ``None`` when the card
    already holds exactly these values (nothing to commit).

    The front matter is found as the Hub finds it (huggingface_hub's ``REGEX_YAML_BLOCK``);
    one it would not read (closed by ``...``, an opening ``---`` with trailing blanks) gets its
    two marker lines rewritten as ``---``. Only our ``model-index`` entry is written: the one
    named ``model_name`` (or one of ``aliases``, e.g. the repo id), or a new entry. Every other
    byte of the card stays as it was: other entries, other metadata (comments, quoting,
    ``0755``, ``no``), the text, a BOM. Within our entry, metrics of other tools and unknown
    keys are kept; a metric we computed again gets the new value. The result is read back the
    way huggingface_hub reads cards and must equal the old metadata with our entry merged in.

    Raises:
        CardMergeError: (a ``ValueError``) the front matter is not valid YAML, not a mapping,
            repeats a key, its ``model-index`` is not a list, several entries are ours, or
            rewriting ours would lose comments or change how values are written: merge by hand.
    """
    from huggingface_hub.repocard_data import eval_results_to_model_index

    ours = eval_results_to_model_index(model_name, new)[0]["results"] if new else []
    new_entry = {"name": model_name, "results": _merge_results([], ours)}
    if old_card is None:
        # the name is recorded text (model_meta.json): escaped as the Space escapes it
        heading = f"# {md(model_name)}\n"
        fresh = "---\nmodel-index:\n" + _dump_block([new_entry], 0) + f"---\n\n{heading}"
        _check_reads_back(fresh, {"model-index": [new_entry]})
        return fresh
    card = _split_card(old_card)
    nodes, data = _parse_front(card.front, lines_before=card.head.count("\n"))
    merged = _merged_front(card.front, nodes, data, model_name, new_entry, {model_name, *aliases})
    if merged is None and not card.normalized:
        return None
    front, index = merged if merged is not None else (card.front, data.get("model-index"))
    text = card.head + front + card.tail
    _check_reads_back(text, {**data, "model-index": index})
    return text


def _merged_front(
    front: str,
    nodes: Any,
    data: dict[str, Any],
    model_name: str,
    new_entry: dict[str, Any],
    names: set[str],
) -> tuple[str, list[Any]] | None:
    """``front`` with our entry merged and the ``model-index`` it then holds, or ``None`` when
    our entry already holds these values."""
    index = data.get("model-index")
    if index is None:
        return _with_index(front, nodes, "model-index" in data, new_entry), [new_entry]
    if not isinstance(index, list):
        raise CardMergeError("the card's model-index is not a list; fix it on the Hub first.")
    mine = [i for i, e in enumerate(index) if isinstance(e, dict) and str(e.get("name")) in names]
    if len(mine) > 1:
        raise CardMergeError(
            f"the card has {len(mine)} model-index entries named {model_name}; merge them by "
            "hand first."
        )
    seq = _top_level_value_node(nodes, "model-index")
    if seq.flow_style or any(getattr(item, "flow_style", False) for item in seq.value):
        raise CardMergeError(
            "the card's model-index is written in flow style ([...] / {...}); merge by hand."
        )
    if not mine:
        return _append_entry(front, seq.value[-1], new_entry), [*index, new_entry]
    entry = index[mine[0]]
    results = entry.get("results", [])
    if not isinstance(results, list):
        raise CardMergeError(f"model-index entry {model_name}: results is not a list.")
    merged = _merge_results(results, new_entry["results"])
    if merged == results:
        return None
    ours = {**entry, "results": merged}
    index = [*index[: mine[0]], ours, *index[mine[0] + 1 :]]
    return _replace_entry(front, seq.value[mine[0]], ours), index


def _hub_metadata(card: str) -> Any:
    """The card's metadata as huggingface_hub reads it (``metadata_load``, ``ModelCard``: the
    Hub's pattern, YAML's safe loader, a BOM dropped); ``None`` when it finds no block."""
    import yaml
    from huggingface_hub.repocard import REGEX_YAML_BLOCK

    match = REGEX_YAML_BLOCK.search(card.removeprefix("\ufeff"))
    if match is None:
        return None
    return yaml.safe_load(match.group(2))


def _check_reads_back(card: str, expected: dict[str, Any]) -> None:
    """Raise ``CardMergeError`` unless the Hub would read ``card``'s metadata as ``expected``
    (the old metadata, every key of it, with our entry merged): never commit a card the Hub
    reads differently from what we meant."""
    import yaml

    try:
        read = _hub_metadata(card)
    except (yaml.YAMLError, RecursionError):
        read = None

    def canonical(value: Any) -> str:
        # JSON text compares NaN equal to itself and ignores key order, as meaning does.
        return json.dumps(value, sort_keys=True, default=str)

    if not isinstance(read, dict) or canonical(read) != canonical(expected):
        raise CardMergeError(
            "the merged card would not read back on the Hub as its metadata plus our results; "
            "merge the new scores by hand (see --dry-run)."
        )


def _parse_front(front: str, lines_before: int = 1) -> tuple[Any, dict[str, Any]]:
    """The front matter's node tree (with positions) and its data, or ``CardMergeError``
    (``lines_before``: the card's lines above ``front``, for line numbers)."""
    import yaml

    try:
        nodes = yaml.compose(front, Loader=yaml.SafeLoader) if front.strip() else None
        data = yaml.safe_load(front) if front.strip() else {}
    except (yaml.YAMLError, RecursionError) as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1 + lines_before})" if where is not None else ""
        raise CardMergeError(
            f"the card's metadata is not valid YAML{line}: "
            f"{getattr(exc, 'problem', None) or exc}; fix it on the Hub first."
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise CardMergeError("the card's metadata is not a YAML mapping; fix it on the Hub first.")
    twice = _repeated_key(nodes)
    if twice is not None:
        key, first, second = twice
        raise CardMergeError(
            f"the card's metadata has the key {key!r} twice (lines {first + 1 + lines_before} "
            f"and {second + 1 + lines_before}); YAML readers keep only one of them (or refuse "
            "the card): delete the other on the Hub, then retry."
        )
    return nodes, data


def _repeated_key(root: Any) -> tuple[str, int, int] | None:
    """The first key some mapping of the node tree repeats, with both (0-based) lines: a safe
    loader keeps the last silently, so merging into one of them would lose the other."""
    import yaml

    stack, seen_nodes = [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:  # aliases share nodes
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            lines: dict[tuple[str, str], int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != "tag:yaml.org,2002:merge":
                    if (key.tag, key.value) in lines:
                        return key.value, lines[key.tag, key.value], key.start_mark.line
                    lines[key.tag, key.value] = key.start_mark.line
                stack.append(value)
    return None


def _with_index(front: str, nodes: Any, empty_key: bool, entry: dict[str, Any]) -> str:
    """``front`` with a new ``model-index`` holding ``entry``: appended at the end, or in place
    of a ``model-index:`` line that has no value."""
    block = "model-index:\n" + _dump_block([entry], 0)
    if empty_key:
        start, end = _top_level_value_span(nodes, "model-index")
        line_start = front.rfind("\n", 0, start) + 1
        return front[:line_start] + block + front[end:].lstrip(" \t")
    sep = "" if not front or front.endswith("\n") else "\n"
    return front + sep + block


def _append_entry(front: str, last: Any, entry: dict[str, Any]) -> str:
    """``front`` with ``entry`` added after the last ``model-index`` item, at its indentation."""
    dash = front.rfind("-", 0, last.start_mark.index)
    column = dash - (front.rfind("\n", 0, dash) + 1)
    end = _line_end(front, last.end_mark.index)
    sep = "" if end == 0 or front[end - 1] == "\n" else "\n"
    return front[:end] + sep + _dump_block([entry], column) + front[end:]


def _replace_entry(front: str, node: Any, entry: dict[str, Any]) -> str:
    """``front`` with our entry's text (``node``'s span) written anew from ``entry``, if that
    loses nothing (see ``_check_lossless``)."""
    start, end = node.start_mark.index, _line_end(front, node.end_mark.index)
    try:
        _check_lossless(front, start, end)
    except CardMergeError as exc:
        raise CardMergeError(f"{exc}; merge the new scores by hand (see --dry-run).") from None
    column = node.start_mark.column
    text = _dump_block(entry, column)[column:]  # the first line continues after "- "
    return front[:start] + text + front[end:]


def _line_end(text: str, index: int) -> int:
    """``index`` moved back over trailing blank space to just after the last line break."""
    while index > 0 and text[index - 1] in " \t\n\r":
        index -= 1
    newline = text.find("\n", index)
    return len(text) if newline < 0 else newline + 1


def _top_level_value_node(nodes: Any, key: str) -> Any:
    for k, v in nodes.value:
        if k.value == key:
            return v
    raise KeyError(key)


def _top_level_value_span(nodes: Any, key: str) -> tuple[int, int]:
    for k, v in nodes.value:
        if k.value == key:
            return k.start_mark.index, v.end_mark.index
    raise KeyError(key)


@dataclass
class PushReport:
    """What push-results did (or would do in a dry run)."""

    repo_id: str
    card_diff: str = ""
    changed_files: list[str] = field(default_factory=list)
    unchanged_files: list[str] = field(default_factory=list)
    commit: str | None = None
    pr_url: str | None = None


def _operations(
    report: PushReport,
    old_card: str | None,
    new_card: str | None,
    files: dict[str, str],
    remote: dict[str, bytes | None],
    *,
    old_label: str = "Hub",
) -> list[Any]:
    """The commit's file operations (changed files only), noted in ``report`` with the card's
    diff."""
    from huggingface_hub import CommitOperationAdd

    operations = []
    if new_card is not None:
        report.card_diff = "".join(
            difflib.unified_diff(
                (old_card or "").splitlines(keepends=True),
                new_card.splitlines(keepends=True),
                fromfile=f"{report.repo_id}/README.md ({old_label})",
                tofile=f"{report.repo_id}/README.md (with ChemTEB results)",
            )
        )
        report.changed_files.append("README.md")
        operations.append(CommitOperationAdd("README.md", new_card.encode("utf-8")))
    else:
        report.unchanged_files.append("README.md")
    for path, text in files.items():
        if remote.get(path) == text.encode("utf-8"):
            report.unchanged_files.append(path)
        else:
            report.changed_files.append(path)
            operations.append(CommitOperationAdd(path, text.encode("utf-8")))
    return operations


def _remote_bytes(repo_id: str, path: str) -> bytes | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import RemoteEntryNotFoundError

    try:
        local = hf_hub_download(repo_id, path)
    except RemoteEntryNotFoundError:
        return None
    return Path(local).read_bytes()


def _card_text(repo_id: str, data: bytes | None) -> str | None:
    """The card's text (a BOM kept: the merge writes it back); a card that is not UTF-8 cannot
    be merged into without guessing, so it is named, with the place."""
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CardMergeError(
            f"{repo_id}/README.md is not UTF-8 text (byte {exc.start}, line {line}); the Hub "
            "shows it garbled: save it as UTF-8 on the Hub, then retry."
        ) from None


def _read_remote(
    repo_id: str, paths: Iterable[str], *, dry_run: bool, log: Callable[[str], None]
) -> tuple[str | None, dict[str, bytes | None], bool]:
    """The card's text and our other files' bytes on the Hub, and whether they could be read.

    A dry run that cannot reach the Hub (offline, network down) says so in one line and goes
    on as for a repo without a card, so that it still shows what we would write.
    """
    try:
        with hub_errors(f"read the card of {repo_id}", repo_id):
            card = _remote_bytes(repo_id, "README.md")
            remote = {path: _remote_bytes(repo_id, path) for path in paths}
    except HubUnavailableError as exc:
        if not dry_run:
            raise
        log(f"[dry run] {exc} Shown below: what a repo without a card would get.")
        return None, {}, False
    return _card_text(repo_id, card), remote, True


def push_results(
    results: str | Path,
    repo_id: str,
    *,
    create_pr: bool = False,
    dry_run: bool = False,
    benchmark_repos: Mapping[str, str] | None = None,
    log: Callable[[str], None] = print,
) -> PushReport:
    """Add a model's ChemTEB scores to its model card (and ``.eval_results/``) on the Hub.

    Args:
        results: the model's results (a results root with one model, its folder, or a
            revision folder).
        repo_id: the model repository (``org/name``).
        create_pr: open a pull request instead of committing to ``main``.
        dry_run: print the card diff and the files that would change; change nothing. With the
            Hub unreachable it shows the card a repo without one would get.
        benchmark_repos: benchmark name -> the Hub dataset its overall score is filed under
            (``.eval_results/<benchmark>.yaml``, written when all its tasks are present);
            default the registry's (none of ChemTEB's benchmarks has one yet).
        log: where progress lines go.

    Returns:
        The ``PushReport``.
    """
    from huggingface_hub import HfApi

    check_repo_id(repo_id)
    model, found = find_task_results(results, log=log)
    if not found:
        raise ValueError(f"results: no result file under {results} has a task on the Hub.")
    report = PushReport(repo_id=repo_id)
    for name, repo in (benchmark_repos or {}).items():
        if name not in BENCHMARKS:
            raise ValueError(
                f"--benchmark-repo: {name!r} is not a benchmark; use one of {', '.join(BENCHMARKS)}."
            )
        check_repo_id(repo, "--benchmark-repo")
    files = eval_result_files(found, benchmark_repos=benchmark_repos, log=log)
    old_card, remote, read = _read_remote(repo_id, files, dry_run=dry_run, log=log)
    try:
        new_card = card_with_results(
            old_card, model or repo_id, eval_results(found), aliases=[repo_id]
        )
    except CardMergeError as exc:
        raise CardMergeError(f"{repo_id}/README.md: {exc}") from None
    label = "Hub" if read else "not read: Hub unreachable"
    operations = _operations(report, old_card, new_card, files, remote, old_label=label)
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
            commit_description="Tasks: " + ", ".join(md(t) for t in tasks),  # Markdown
            create_pr=create_pr,
        )
    report.commit = info.oid
    report.pr_url = info.pr_url
    log(
        f"{repo_id}: {len(report.changed_files)} file(s) committed at {info.oid}"
        + (f"; pull request {info.pr_url}" if info.pr_url else "")
    )
    return report
