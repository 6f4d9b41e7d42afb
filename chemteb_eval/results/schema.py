"""The result file: one frozen type for what the runner writes and what ranking, the leaderboard
and the model-card code read — MTEB's layout, ``{out}/{org__model}/{revision}/{Task}.json``.

Reading never trusts a file: only a regular file under 32 MiB is opened (a FIFO named ``.json``
would block forever, a link loop raise), its JSON must be an object whose ``scores`` map splits to
lists of entries, and a score counts only if it is a real, finite number in [-1, 1].
"""

from __future__ import annotations

import math
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval._files import parse_json, shared_mode
from chemteb_eval.errors import short_repr
from chemteb_eval.tasks import Task, list_tasks

from .io import write_json_atomic

__all__ = [
    "MAX_RESULT_BYTES",
    "RECORD_NAME",
    "SCORE_RANGE",
    "ItemsSource",
    "ResultFile",
    "check_score",
    "is_record",
    "items_path",
    "match_task",
    "read_items",
    "read_json_object",
    "real_number",
    "write_items",
]

# Every score ChemTEB ranks (accuracy, F1, V-measure, AP, nDCG, correlations) lies in [-1, 1].
SCORE_RANGE = (-1.0, 1.0)
# A result file is a few kilobytes; anything this large is not one (and would stall a Space).
MAX_RESULT_BYTES = 32 * 2**20


def real_number(value: Any) -> float | None:
    """``value`` as a finite float if it is a real JSON number (not a bool, a string, a list or
    a 400-digit integer beyond float's range), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def check_score(key: str, value: Any) -> float:
    """``value`` as a float if it is a score (a finite real number in ``SCORE_RANGE``);
    ``ValueError`` naming ``key`` otherwise."""
    number = real_number(value)
    if number is None:
        raise ValueError(f"{key} is {short_repr(value)}, not a finite number")
    low, high = SCORE_RANGE
    if not low <= number <= high:
        raise ValueError(f"{key} is {number:.4g}, outside [{low:g}, {high:g}]")
    return number


def read_json(path: Path) -> Any:
    """One JSON file's value; ``ValueError`` or ``OSError`` (never a hang or a crash) for
    anything else: a FIFO or device named ``.json``, a dangling link or a link loop, a huge or
    binary file, JSON nested deeper than Python's recursion limit."""
    info = path.stat()  # follows links: a dangling link or a loop raises OSError here
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    if info.st_size > MAX_RESULT_BYTES:
        raise ValueError(f"{info.st_size} bytes: too large for a result file")
    return parse_json(path.read_bytes())


def read_json_object(path: Path) -> dict[str, Any]:
    """One JSON file's object (``read_json``); ``ValueError`` for any other value."""
    payload = read_json(path)
    if not isinstance(payload, dict):
        raise ValueError("not a JSON object")
    return payload


@dataclass(frozen=True)
class ItemsSource:
    """Where a result's per-item evidence is read from when it is no items file beside it (an
    Every Eval Ever record's sidecar, ``eee_read``): the file a message names, and its reader
    of the items of one task type for one score key, ``{(split, subset): {name: array}}``
    (unchecked, as an items file's arrays: ``evidence.check_evidence`` checks them)."""

    path: Path
    read: Callable[[str, str], dict[tuple[str, str], dict[str, Any]]]


@dataclass(frozen=True)
class ResultFile:
    """One task's scores, as MTEB's result files hold them.

    Args:
        task_name: the task (or an alias it was recorded under); the file name when absent.
        scores: ``{split: [entry, ...]}``, one entry per subset: MTEB's metric keys plus
            ``main_score``, ``hf_subset`` and ``languages``.
        dataset_revision: the dataset revision scored.
        evaluation_time: seconds, if recorded.
        extra: every other top-level key (``mteb_version``, ``kg_co2_emissions``, ...), kept.
        path: where it was read from.
        items: where its per-item evidence is read from, when not ``items_path(path)``.
        over: the splits whose mean each of its scores is, when it holds no split's own.
    """

    task_name: str
    scores: Mapping[str, list[Any]]
    dataset_revision: str | None = None
    evaluation_time: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None
    items: ItemsSource | None = field(default=None, compare=False, repr=False)
    # the splits its one score per key is a mean over, where the file holds no split's own
    # (an EEE record: the task's score over its splits and subsets, each weighted as it was)
    over: tuple[str, ...] | None = None

    @classmethod
    def from_dict(cls, payload: Mapping[str, Any], path: Path | None = None) -> ResultFile:
        """Check and wrap a parsed result file; ``ValueError`` naming what is wrong."""
        name = payload.get("task_name") or (path.stem if path is not None else None)
        if not isinstance(name, str):
            raise ValueError(f"task_name is {short_repr(name)}, not a string")
        scores = payload.get("scores")
        if not isinstance(scores, Mapping):
            raise ValueError("scores is not an object")
        for split, entries in scores.items():
            if not isinstance(entries, list):
                raise ValueError(f"scores of split {split!r} are not a list")
        revision = payload.get("dataset_revision")
        extra = {
            k: v
            for k, v in payload.items()
            if k not in ("task_name", "scores", "dataset_revision", "evaluation_time")
        }
        return cls(
            task_name=name,
            scores=scores,
            dataset_revision=revision if isinstance(revision, str) else None,
            evaluation_time=real_number(payload.get("evaluation_time")),
            extra=extra,
            path=path,
        )

    @classmethod
    def read(cls, path: Path) -> ResultFile:
        """Read and check one file (see ``read_json_object``)."""
        return cls.from_dict(read_json_object(path), path)

    def to_dict(self) -> dict[str, Any]:
        """MTEB's layout, keys in the order our runner has always written them."""
        out: dict[str, Any] = {
            "dataset_revision": self.dataset_revision,
            "task_name": self.task_name,
        }
        out.update({k: v for k, v in self.extra.items() if k == "mteb_version"})
        out.update({k: v for k, v in self.extra.items() if k == "chemteb_eval_version"})
        out["scores"] = {split: list(entries) for split, entries in self.scores.items()}
        out["evaluation_time"] = self.evaluation_time
        out.update({k: v for k, v in self.extra.items() if k not in out})
        return out

    def write(self, folder: Path) -> Path:
        """Write ``folder/<task_name>.json`` atomically; returns its path."""
        path = Path(folder) / f"{self.task_name}.json"
        write_json_atomic(path, self.to_dict())
        return path

    def entries(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """``(split, subset, entry)`` for every entry with a numeric ``main_score``."""
        for split, entries in self.scores.items():
            for entry in entries:
                if isinstance(entry, dict) and isinstance(entry.get("main_score"), (int, float)):
                    yield split, str(entry.get("hf_subset", "default")), entry

    def score(self, key: str, splits: Iterable[str], weight_key: str | None = None) -> float | None:
        """The mean over ``splits`` of the mean over subsets of ``key``; ``None`` when a split
        or an entry lacks it; ``ValueError`` for a value that is not a score (see
        ``SCORE_RANGE``).

        ``weight_key`` names the entry key that weights the mean over subsets (a task's
        ``subset_weight_key``: ``n_pairs`` makes a SemEval STS year's figure, the size-weighted
        mean of its subsets' Pearson); ``None`` is MTEB's plain mean. An entry without a positive
        whole-number weight gives ``None``.

        A file that holds one score over its splits (``over``) gives it for those splits
        alone; ``ValueError`` for others (no split's own score can be read from a mean)."""
        splits = tuple(splits)
        if self.over is not None:
            if sorted(splits) != sorted(self.over):
                raise ValueError(
                    f"it holds one score over the splits {', '.join(self.over)}, not one over "
                    f"{', '.join(splits)}; rank its results folder for that"
                )
            first = self.scores.get(self.over[0]) or [{}]
            value = first[0].get(key) if isinstance(first[0], dict) else None
            return None if value is None else check_score(key, value)
        per_split = []
        for split in splits:
            entries = self.scores.get(split)
            if not entries:
                return None
            values = [check_score(key, e[key]) for e in entries if isinstance(e, dict) and key in e]
            if len(values) != len(entries):
                return None
            if weight_key is None:
                per_split.append(float(np.mean(values)))  # mean over subsets
                continue
            weights = [_weight(e.get(weight_key)) for e in entries]
            sizes = [w for w in weights if w is not None]
            if len(sizes) != len(weights):
                return None
            per_split.append(float(np.average(np.asarray(values), weights=np.asarray(sizes))))
        return float(np.mean(per_split))  # mean over the splits


def _weight(value: Any) -> float | None:
    """A subset's size as a weight: a positive whole number below 2**53, else ``None``."""
    number = real_number(value)
    if number is None or number <= 0 or number != int(number) or number >= 2**53:
        return None
    return number


# An Every Eval Ever record's file name (``<uuid>.json``): never a task's result file, wherever
# it lies (``eee_read`` reads it; a model folder's reader passes it by)
RECORD_NAME = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json", re.IGNORECASE
)


def is_record(path: Path) -> bool:
    """Whether ``path`` is named as an Every Eval Ever record is (``<uuid>.json``)."""
    return bool(RECORD_NAME.fullmatch(path.name))


ITEMS_SUFFIX = ".items.npz"


def items_path(result_path: Path) -> Path:
    """``<Task>.items.npz`` beside ``<Task>.json``: the per-item evidence of its scores."""
    return result_path.with_name(result_path.stem + ITEMS_SUFFIX)


def write_items(path: Path, items: Mapping[tuple[str, str], Mapping[str, Any]]) -> None:
    """Write ``{(split, subset): {name: array}}`` as one compressed ``.npz``, atomically."""
    import os
    import tempfile

    arrays = {
        f"{split}/{subset}/{name}": np.asarray(value)
        for (split, subset), named in items.items()
        for name, value in named.items()
    }
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".npz", dir=path.parent)
    os.close(fd)
    try:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, allow_pickle=False, **arrays)
        os.chmod(tmp, shared_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_items(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """What ``write_items`` wrote; ``ValueError`` for a file that is not one. The checked
    reader (sizes from the headers first) is ``evidence.read_items``: this is it."""
    from .evidence import read_items as checked

    return dict(checked(path))


def match_task(
    name: str, revision: str | None = None, tasks: Iterable[Task] | None = None
) -> Task | None:
    """The task a result file recorded as ``name`` (its name or an alias) at ``revision``.

    Args:
        name: the file's task name.
        revision: its dataset revision, used only when several records share the name.
        tasks: where to look (a benchmark's tasks); default every registered task.

    Returns:
        The record, or ``None``. Several records with the name (the release and MTEB both have a
        ``ChemNQRetrieval``): the one that knows the revision, else MTEB's (the one MTEB's own
        result files would name).
    """
    pool = list(tasks) if tasks is not None else list_tasks()
    found = [t for t in pool if name == t.name or name in t.aliases]
    if len(found) <= 1:
        return found[0] if found else None
    by_revision = [
        t for t in found if revision is not None and t.revision_status(revision) != "unknown"
    ]
    if by_revision:
        return by_revision[0]
    return next((t for t in found if t.collection == "mteb"), found[0])
