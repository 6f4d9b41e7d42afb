"""Datasets in Hub layout, read with ``datasets.load_dataset`` at a pinned revision: one
transform per task type (``HUB_LOADERS``), MTEB's stratified 2048-row subsample, concatenated
subsets, BEIR's ``title + " " + text`` documents, queries without relevant documents dropped.

A room of its own below ``loader`` (which dispatches a task to its source) and ``custom`` (a
task file's files, which may be in Hub layout): both read through it, and it reads neither.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemteb_eval._env import cache_root, hub_reachable, offline_unless_reachable
from chemteb_eval.errors import ChemtebError, HubUnavailableError
from chemteb_eval.tasks.records import Task

from .types import (
    BitextData,
    ClassificationData,
    ClusteringData,
    ClusterSet,
    PairClassificationData,
    RetrievalData,
    SplitData,
    StsData,
    TaskData,
)

__all__ = [
    "HUB_LOADERS",
    "SNAPSHOT_PREFIX",
    "out_of_reach",
    "quiet_datasets",
    "stratified_subsample",
]

# Canonical column -> names it goes by in the wild (MTEB v1/v2 and the BASF-AI datasets).
_ALIASES: Mapping[str, tuple[str, ...]] = {
    "text": ("text",),
    "label": ("label", "labels"),
    "sentences": ("sentences", "text", "sentence"),
    "labels": ("labels", "label"),
    "sentence1": ("sentence1", "sent1"),
    "sentence2": ("sentence2", "sent2"),
    "id": ("_id", "id"),
    "query-id": ("query-id", "query_id"),
    "corpus-id": ("corpus-id", "corpus_id"),
    "score": ("score",),
}


@contextlib.contextmanager
def quiet_datasets() -> Iterator[None]:
    """``datasets``' own progress bars ("Generating test split", "Map", "Casting") and its
    info logging off while our loads run, as they were after: a run shows one bar per stage,
    not ten per cold load. Its warnings and errors still print."""
    import datasets
    from datasets.utils import logging as datasets_logging

    bars = datasets.is_progress_bar_enabled()
    verbosity = datasets_logging.get_verbosity()
    datasets.disable_progress_bars()
    datasets_logging.set_verbosity(max(verbosity, datasets_logging.WARNING))
    try:
        yield
    finally:
        datasets_logging.set_verbosity(verbosity)
        if bars:
            datasets.enable_progress_bars()


# The folder a task file's files are copied into while read (``data.custom.read_custom``).
SNAPSHOT_PREFIX = "chemteb-task-"


def out_of_reach(tasks: Sequence[Task]) -> list[Task]:
    """The tasks read from the Hub whose dataset cannot be had now: the Hub cannot be used
    (``HF_HUB_OFFLINE``, or no answer to one probe) and the dataset's card at the pinned
    revision is not in huggingface_hub's cache. Asked before a run loads its model, so that an
    offline ``-b ChemTEB`` is said once, at once, not once per task after the load."""
    hub = [t for t in tasks if t.builder is None and t.hf_path and t.revision]
    if not hub:
        return []
    from huggingface_hub import constants, try_to_load_from_cache

    if not constants.HF_HUB_OFFLINE and hub_reachable(timeout=2.0):
        return []
    return [
        t
        for t in hub
        if not isinstance(
            try_to_load_from_cache(
                str(t.hf_path), "README.md", revision=t.revision, repo_type="dataset"
            ),
            str,
        )
    ]


def _load(task: Task, path: str, config: str) -> Any:
    """``load_dataset(path, config, revision=pinned)`` with one clear error when it cannot."""
    import datasets
    from datasets.exceptions import DatasetNotFoundError

    name = None if config == "default" else config
    if Path(path).is_dir():
        # datasets keys its cache of a local folder by file names and modification times, not
        # by the folder, so two fresh folders with the same layout can read each other's cache;
        # a cache per folder rules that out. A task file's private copy (``data.custom``) is
        # read once: its cache lives and goes with the copy, never left behind in ours.
        folder = str(Path(path).resolve())
        cache = cache_root() / "datasets" / hashlib.sha256(folder.encode()).hexdigest()[:16]
        if Path(folder).parent.name.startswith(SNAPSHOT_PREFIX):
            cache = Path(folder).parent / "datasets-cache"
        return datasets.load_dataset(folder, name, cache_dir=str(cache))
    try:
        with offline_unless_reachable():
            return datasets.load_dataset(path, name, revision=task.revision)
    except (ConnectionError, DatasetNotFoundError, FileNotFoundError) as exc:
        offline = os.environ.get("HF_HUB_OFFLINE") or not hub_reachable(timeout=0.5)
        why = "the Hugging Face Hub cannot be reached" if offline else f"loading failed ({exc})"
        raise (HubUnavailableError if offline else ChemtebError)(
            f"dataset {path} (config {config}, revision {task.revision}) of task {task.name} is "
            f"not in the local cache and {why}. Run once with network access to cache it, or "
            f"fetch it with `hf download {path} --repo-type dataset --revision {task.revision}`; "
            "without the Hub, try the offline benchmark: `chemteb run --benchmark PipChem`."
        ) from exc


def _pick_split(dsdict: Any, split: str, where: str, *, beir: bool = False) -> Any:
    if split in dsdict:
        return dsdict[split]
    if beir and len(dsdict) == 1:  # BEIR corpora and queries live in a split of their own name
        return next(iter(dsdict.values()))
    raise ValueError(f"{where}: no split {split!r}; the dataset has {sorted(dsdict)}.")


def _canonical(ds: Any, renames: Mapping[str, str], required: Sequence[str], where: str) -> Any:
    """Apply the task's renames, then known aliases, and check the required columns."""
    present = set(ds.column_names)
    mine = {src: dst for src, dst in renames.items() if src in present and src != dst}
    ds = ds.rename_columns(mine) if mine else ds
    for col in required:
        if col in ds.column_names:
            continue
        alias = next((a for a in _ALIASES.get(col, ()) if a in ds.column_names), None)
        if alias is None:
            wanted = [s for s, d in renames.items() if d == col] or list(_ALIASES.get(col, (col,)))
            raise ValueError(
                f"{where}: missing column {col!r} (looked for {wanted}); the dataset has "
                f"{sorted(ds.column_names)}. Fix the task's column map."
            )
        ds = ds.rename_column(alias, col)
    return ds


def _column(ds: Any, col: str) -> list[Any]:
    values = list(ds[col])
    # MTEB v1 stored a whole split in one row of lists.
    if len(values) == 1 and isinstance(values[0], list):
        return list(values[0])
    return values


def _texts(task: Task, values: Any, where: str) -> list[str]:
    """A text column as text. A user's own files (a task file's Hub-layout folder) are checked
    as their rows are in every other format: an empty cell is refused with its row, never
    embedded as the word ``None``; registered datasets are read as they always were."""
    out = []
    for row, value in enumerate(values, start=1):
        if task.builder == "custom" and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{where}: row {row}: a text is {value!r}, not text.")
        out.append(str(value))
    return out


def stratified_subsample(ds: Any, n: int, *, seed: int = 42, label: str = "labels") -> Any:
    """MTEB's stratified subsample: ``train_test_split(test_size=n, seed, stratify)["test"]``.

    The label column is cast to a ClassLabel over its sorted string values first, as MTEB does,
    so that ``datasets`` can stratify. A split of ``n`` rows or fewer is returned unchanged.
    """
    from datasets import ClassLabel, Value

    if n >= len(ds):
        return ds
    names = sorted({str(x) for x in ds[label] if x is not None})
    ds = ds.cast_column(label, Value("string")).cast_column(label, ClassLabel(names=names))
    return ds.train_test_split(test_size=n, seed=seed, stratify_by_column=label)["test"]


def _one_row_per_pair(ds: Any) -> Any:
    """MTEB v1 stored a whole split in one row of lists; spread it out before subsampling."""
    import datasets

    if len(ds) == 1 and all(isinstance(ds[0][c], list) for c in ds.column_names):
        return datasets.Dataset.from_dict({c: ds[0][c] for c in ds.column_names})
    return ds


def _load_pairs(task: Task, path: str, splits: Sequence[str]) -> TaskData:
    import datasets

    required = ("sentence1", "sentence2", "labels")
    loaded: dict[str, dict[str, Any]] = {}
    for subset in task.subsets:
        dsdict = _load(task, path, subset)
        loaded[subset] = {
            split: _canonical(
                _pick_split(dsdict, split, f"{task.name}/{subset}"),
                task.columns_for(subset),
                required,
                f"{task.name} ({path}, {subset}, {split})",
            ).select_columns(list(required))
            for split in splits
        }
        loaded[subset] = {split: _one_row_per_pair(ds) for split, ds in loaded[subset].items()}
    if task.concat_subsets:
        loaded = {
            "default": {
                split: datasets.concatenate_datasets([loaded[s][split] for s in task.subsets])
                for split in splits
            }
        }
    out: TaskData = {}
    for subset, by_split in loaded.items():
        out[subset] = {}
        for split, ds in by_split.items():
            if task.subsample is not None:
                ds = stratified_subsample(ds, task.subsample)
            if task.builder == "custom" and not set(ds["labels"]) <= {0, 1}:
                raise ValueError(
                    f"{task.name} ({subset}, {split}): labels {sorted(set(ds['labels']))}; "
                    "a pair's label is 0 or 1."
                )
            out[subset][split] = PairClassificationData(
                _texts(task, ds["sentence1"], f"{task.name} ({subset}, {split}) sentence1"),
                _texts(task, ds["sentence2"], f"{task.name} ({subset}, {split}) sentence2"),
                [int(x) for x in ds["labels"]],
            )
    return out


def _load_retrieval_split(task: Task, path: str, subset: str, split: str) -> RetrievalData:
    prefix = "" if subset == "default" else f"{subset}-"
    where = f"{task.name} ({path}, {subset}, {split})"
    corpus = _canonical(
        _pick_split(_load(task, path, f"{prefix}corpus"), split, where, beir=True),
        {},
        ("id", "text"),
        where,
    )
    queries = _canonical(
        _pick_split(_load(task, path, f"{prefix}queries"), split, where, beir=True),
        {},
        ("id", "text"),
        where,
    )
    qrels_ds = _canonical(
        _pick_split(_load(task, path, f"{prefix}qrels" if prefix else "default"), split, where),
        {},
        ("query-id", "corpus-id", "score"),
        where,
    )
    qrels: dict[str, dict[str, int]] = {}
    custom = task.builder == "custom"  # a user's files: checked as BEIR's reader checks them
    for row, (q, d, s) in enumerate(
        zip(qrels_ds["query-id"], qrels_ds["corpus-id"], qrels_ds["score"], strict=True), start=1
    ):
        if custom and (isinstance(s, bool) or not float(s).is_integer() or s < 0):
            raise ValueError(f"{where}: qrels row {row}: score {s!r}; a grade is an integer >= 0.")
        if custom and str(d) in qrels.get(str(q), {}):
            raise ValueError(f"{where}: qrels row {row}: query {q!r}, document {d!r} judged twice.")
        qrels.setdefault(str(q), {})[str(d)] = int(s)
    if task.builder == "custom":  # a user's files: every judgement names what is there
        _check_judged(qrels, {str(i) for i in queries["id"]}, {str(i) for i in corpus["id"]}, where)
    # MTEB's documents are "title text"; queries without a relevant document are not scored
    # (under the mteb2 protocol, a judged one is: scored 0, as MTEB 2.26 does).
    titles = corpus["title"] if "title" in corpus.column_names else [""] * len(corpus)
    texts = [(f"{t or ''} {x or ''}").strip() for t, x in zip(titles, corpus["text"], strict=True)]
    _texts(task, texts, f"{where} corpus")  # a user's files: no empty document
    keep = {q for q, docs in qrels.items() if any(g > 0 for g in docs.values())}
    if task.protocol == "mteb2":
        keep = set(qrels) if keep else keep
    q_ids, q_texts = [], []
    for qid, text in zip(queries["id"], queries["text"], strict=True):
        if str(qid) in keep:
            q_ids.append(str(qid))
            q_texts.append(_texts(task, [text], f"{where} query {qid!r}")[0])
    if not q_ids:
        raise ValueError(f"{where}: no query has a relevant document in the qrels.")
    return RetrievalData(
        corpus_ids=[str(i) for i in corpus["id"]],
        corpus_texts=texts,
        query_ids=q_ids,
        query_texts=q_texts,
        qrels={q: qrels[q] for q in q_ids},
    )


def _check_judged(
    qrels: Mapping[str, Mapping[str, int]], queries: set[str], corpus: set[str], where: str
) -> None:
    """Every judgement of a user's files names a query and a document that are there (as the
    BEIR reader checks): a CSV read by ``datasets`` turns an all-digit id column into numbers
    (``001`` -> ``1``), and ids that no longer match would score 0 without a word."""
    for qid, docs in qrels.items():
        if qid not in queries:
            raise ValueError(
                f"{where}: the qrels judge query {qid!r}, which is not among the queries."
            )
        for did in docs:
            if did not in corpus:
                raise ValueError(
                    f"{where}: the qrels judge document {did!r} for query {qid!r}, which is not "
                    "in the corpus (an id column of digits read as numbers? quote it, or use "
                    "Parquet or BEIR's JSONL)."
                )


def _classification_split(task: Task, subset: str, dsdict: Any, ds: Any, where: str) -> SplitData:
    renames = task.columns_for(subset)
    assert task.train_split is not None  # TaskKind.needs_train: the record checked it
    train = _canonical(
        _pick_split(dsdict, task.train_split, where), renames, ("text", "label"), where
    )
    test = _canonical(ds, renames, ("text", "label"), where)
    return ClassificationData(
        _texts(task, train["text"], f"{where} train"),
        list(train["label"]),
        _texts(task, test["text"], where),
        list(test["label"]),
    )


def _clustering_split(task: Task, subset: str, dsdict: Any, ds: Any, where: str) -> SplitData:
    ds = _canonical(ds, task.columns_for(subset), ("sentences", "labels"), where)
    if len(ds) and isinstance(ds[0]["sentences"], list):
        sets = tuple(
            ClusterSet(_texts(task, row["sentences"], where), list(row["labels"])) for row in ds
        )
    else:
        sets = (ClusterSet(_texts(task, ds["sentences"], where), list(ds["labels"])),)
    return ClusteringData(sets)


def _bitext_split(task: Task, subset: str, dsdict: Any, ds: Any, where: str) -> SplitData:
    # sentence1 is matched against sentence2, as in MTEB
    renames = task.columns_for(subset)
    ds = _canonical(ds, renames, ("sentence1", "sentence2"), where)
    return BitextData(
        _texts(task, _column(ds, "sentence1"), where), _texts(task, _column(ds, "sentence2"), where)
    )


def _sts_split(task: Task, subset: str, dsdict: Any, ds: Any, where: str) -> SplitData:
    ds = _canonical(ds, task.columns_for(subset), ("sentence1", "sentence2", "score"), where)
    return StsData(
        _texts(task, _column(ds, "sentence1"), where),
        _texts(task, _column(ds, "sentence2"), where),
        [float(s) for s in _column(ds, "score")],
    )


_SplitTransform = Callable[[Task, str, Any, Any, str], SplitData]
_HubLoader = Callable[[Task, str, Sequence[str]], TaskData]


def _per_split(transform: _SplitTransform) -> _HubLoader:
    """A loader that reads each subset's dataset once and transforms each split of it."""

    def load(task: Task, path: str, splits: Sequence[str]) -> TaskData:
        out: TaskData = {}
        for subset in task.subsets:
            dsdict = _load(task, path, subset)
            out[subset] = {}
            for split in splits:
                where = f"{task.name} ({path}, {subset}, {split})"
                ds = _pick_split(dsdict, split, where)
                out[subset][split] = transform(task, subset, dsdict, ds, where)
        return out

    return load


def _load_retrieval(task: Task, path: str, splits: Sequence[str]) -> TaskData:
    return {
        subset: {split: _load_retrieval_split(task, path, subset, split) for split in splits}
        for subset in task.subsets
    }


#: How each task type loads from a dataset in Hub layout: one entry per ``TaskKind`` (the
#: structure test checks it is complete); ``None``: the type loads only from a local copy.
HUB_LOADERS: Mapping[str, _HubLoader | None] = {
    "Classification": _per_split(_classification_split),
    "Clustering": _per_split(_clustering_split),
    "PairClassification": _load_pairs,
    "BitextMining": _per_split(_bitext_split),
    "Retrieval": _load_retrieval,
    # a user's STS data published in Hub layout (the registered STS sets load from copies)
    "STS": _per_split(_sts_split),
    "NER": None,
    "WordSimilarity": None,
}
