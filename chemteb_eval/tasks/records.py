"""Frozen task and benchmark records: what a task is, where its data lives, how it is scored."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from types import MappingProxyType
from typing import Literal

from .declaration import Declaration, declaration_of
from .kinds import KINDS, TASK_TYPES, TaskType, kind

# The keys each type's scoring function reports; a task's main score must be one of them.
MAIN_SCORES: Mapping[str, frozenset[str]] = MappingProxyType(
    {name: k.main_scores for name, k in KINDS.items()}
)
CATEGORIES = frozenset({"s2s", "s2p", "p2p"})
# Local builders (``data/loader.py`` dispatches on them): the PipChem suite this project builds,
# the copies in ../shared/data, restricted sets a user holds (``--data-path``), and a user's own
# files declared by a task file (``--task-file``).
Builder = Literal["pipchem", "shared", "local", "custom"]
BUILDERS: tuple[Builder, ...] = ("pipchem", "shared", "local", "custom")
# The probe options a classification task's record may set (``score_classification``'s).
PROBE_OPTIONS = frozenset({"full_train", "n_experiments", "samples_per_label", "max_iter"})
_REVISION = re.compile(r"^[0-9a-f]{40}$")
#: How a task built locally names its data in result files: a content fingerprint
#: (``chemteb_eval.data.fingerprint``), never a 40-hex commit, so it cannot pass for one.
LOCAL_REVISION_PREFIX = "sha256:"
_LOCAL_REVISION = re.compile(r"^sha256:[0-9a-f]{16}$")  # the prefix and 16 hex digits


#: The fields of a ``Task`` that change a number it scores: its declaration's digest covers them.
DECLARATION_FIELDS = (
    "type",
    "hf_path",
    "eval_splits",
    "main_score",
    "subsets",
    "columns",
    "subset_columns",
    "train_split",
    "subsample",
    "concat_subsets",
    "builder",
    "subset_weight_key",
    "probe",
    "prompts",
    "data_format",
    "protocol",
)
#: How a task is scored where MTEB's versions differ. ``paper``: as the published ChemTEB
#: results (mteb 1.14.15) — a retrieval query with no relevant document is left out, the pair
#: threshold sweep may cut between equal scores. ``mteb2``: as MTEB 2.26 — such a query is
#: scored 0 on every metric, and the sweep never cuts between equal scores.
PROTOCOLS = ("paper", "mteb2")


def _plain(value: object) -> object:
    """A field as JSON: mappings as sorted dicts, tuples as lists."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def _default(f: Field[object]) -> object:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING  # a required field: always in the digest


def _frozen_map(value: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(value or {}))


@dataclass(frozen=True)
class Task:
    """One evaluation task: its data (Hub id, pinned revision, subsets, splits) and its scoring.

    Args:
        name: the task's name (unique in the registry).
        type: Classification, Clustering, PairClassification, BitextMining or Retrieval.
        hf_path: the Hub dataset id; ``None`` for datasets this project builds locally.
        revision: the pinned dataset revision (a 40-hex commit); ``None`` for local datasets.
        eval_splits: the splits scored.
        main_score: the key that ranks models on this task.
        subsets: the dataset configs (``("default",)`` for single-config datasets).
        columns: renames applied after loading, ``{source column: canonical column}``.
        subset_columns: per-subset renames, where subsets differ.
        train_split: the training split of a classification task.
        subsample: stratified subsample size for pair classification (seed 42), or ``None``.
        concat_subsets: concatenate all subsets' eval splits into one before scoring.
        category: s2s, s2p or p2p where known, else ``None``.
        source: where the texts come from (Wikipedia, PubChem, CoconutDB, SDS, HotpotQA, NQ,
            ChemRxiv, or the packages an offline task is built from).
        license: the dataset licence where known, else ``None``.
        n_samples: number of samples, where a reference gives it, else ``None``.
        split_sizes: per-split sizes as the reference states them, else empty.
        aliases: other names results of this task were recorded under.
        known_revisions: other revisions results of this task were made at (recognised, but
            reported as a mismatch).
        builder: how the data is made locally: ``pipchem`` (built from pip-installed
            packages), ``shared`` (read from ../shared/data), ``local`` (a restricted set the
            user brings with ``--data-path``).
        subset_weight_key: the result-entry key that weights the mean over subsets
            (``n_pairs``: a SemEval STS year's official figure, the pair-weighted mean of its
            subsets' Pearson); ``None``: MTEB's plain mean over subsets.
        probe: keyword arguments of the type's scoring function that this task's protocol
            sets (as MTEB's per-task ``n_experiments``/``samples_per_label``): document
            classification trains on the whole training split, ``{"full_train": True}``.
        obtain: for a ``local`` task, where to get the data and the format ``--data-path``
            expects (shown when it is missing).
        prompts: a user's task's own prompts, by role (``query``, ``document``): they replace
            the model's convention prompt for that side (``--task-file``'s ``prompts``).
        definition: a user's task's declaration (its task file, normalised), recorded beside
            its results so that ``rank`` and the Space know the task.
        description: one line on what the task measures.
        collection: the registry the record belongs to (``release``, ``mteb``, ``pipchem``):
            MTEB and the release both have, e.g., a ``ChemNQRetrieval``, at other revisions.
    """

    name: str
    type: TaskType
    hf_path: str | None
    revision: str | None
    eval_splits: tuple[str, ...]
    main_score: str
    collection: str
    subsets: tuple[str, ...] = ("default",)
    columns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    subset_columns: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    train_split: str | None = None
    subsample: int | None = None
    concat_subsets: bool = False
    category: str | None = None
    source: str | None = None
    license: str | None = None
    n_samples: int | None = None
    split_sizes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    aliases: tuple[str, ...] = ()
    known_revisions: tuple[str, ...] = ()
    builder: Builder | None = None
    description: str = ""
    subset_weight_key: str | None = None
    probe: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    obtain: str = ""
    prompts: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    definition: str = ""
    # how a task file's files are laid out (``beir``, ``hub``, ``csv``...): part of what it is
    data_format: str | None = None
    # how it is scored where MTEB's versions differ (``PROTOCOLS``): the paper's, or MTEB 2.26's
    protocol: str = "paper"

    def __post_init__(self) -> None:
        if not self.name or not re.match(r"^[A-Za-z0-9_.()\-]+$", self.name):
            raise ValueError(f"name: {self.name!r} is not a valid task name.")
        if self.type not in TASK_TYPES:
            raise ValueError(f"type: {self.type!r} for task {self.name}; use one of {TASK_TYPES}.")
        self._check_source()
        if not self.eval_splits:
            raise ValueError(f"eval_splits: task {self.name} has none.")
        if self.main_score not in MAIN_SCORES[self.type]:
            raise ValueError(
                f"main_score: {self.main_score!r} is not a {self.type} score; use one of "
                f"{sorted(MAIN_SCORES[self.type])}."
            )
        if self.protocol not in PROTOCOLS:
            raise ValueError(
                f"protocol: {self.protocol!r} for task {self.name}; use one of {list(PROTOCOLS)}."
            )
        if self.category is not None and self.category not in CATEGORIES:
            raise ValueError(
                f"category: {self.category!r}; use one of {sorted(CATEGORIES)} or None."
            )
        if kind(self.type).needs_train and not self.train_split:
            raise ValueError(f"train_split: {self.type} task {self.name} needs one (the probe's).")
        if self.subsample is not None and self.subsample < 1:
            raise ValueError(f"subsample: must be positive, got {self.subsample}.")
        if self.probe and (not kind(self.type).probe_options or set(self.probe) - PROBE_OPTIONS):
            raise ValueError(
                f"probe: {sorted(self.probe)} of task {self.name}; only Classification tasks "
                f"set probe options, from {sorted(PROBE_OPTIONS)}."
            )
        unknown = set(self.subset_columns) - set(self.subsets)
        if unknown:
            raise ValueError(f"subset_columns: {sorted(unknown)} are not subsets of {self.name}.")
        # Freeze the mappings so that a record cannot be changed after the fact.
        object.__setattr__(self, "columns", _frozen_map(self.columns))
        object.__setattr__(self, "split_sizes", _frozen_map(self.split_sizes))
        object.__setattr__(self, "probe", MappingProxyType(dict(self.probe)))
        object.__setattr__(self, "prompts", _frozen_map(self.prompts))
        object.__setattr__(
            self,
            "subset_columns",
            MappingProxyType({k: _frozen_map(v) for k, v in self.subset_columns.items()}),
        )

    def _check_source(self) -> None:
        """Where the data comes from: a Hub id at a 40-hex revision, or a local builder (a
        restricted set saying where to obtain it)."""
        if self.builder is not None and self.builder not in BUILDERS:
            raise ValueError(
                f"builder: {self.builder!r} for task {self.name}; use one of {BUILDERS}."
            )
        if self.hf_path is None and self.builder is None:
            raise ValueError(f"hf_path: task {self.name} needs a Hub id or a local builder.")
        if self.builder == "local" and not self.obtain:
            raise ValueError(f"obtain: local task {self.name} must say where to get its data.")
        # a user's own files are named by a fingerprint of their contents (``tasks.custom``)
        fingerprinted = self.builder == "custom" and _LOCAL_REVISION.match(self.revision or "")
        if self.revision is not None and not fingerprinted and not _REVISION.match(self.revision):
            raise ValueError(
                f"revision: {self.revision!r} of task {self.name} is not a 40-hex commit."
            )
        for rev in self.known_revisions:
            if not _REVISION.match(rev):
                raise ValueError(
                    f"known_revisions: {rev!r} of task {self.name} is not a 40-hex commit."
                )

    @property
    def declared(self) -> Declaration:
        """A user's task's declaration (``definition``) parsed, once per text
        (``tasks.declaration``): what the runner and the data loader read of it."""
        return declaration_of(self.definition)

    def declaration_digest(self) -> str:
        """``sha256:`` + 16 hex digits over every field that changes a number this task scores
        (``DECLARATION_FIELDS``): the same declaration gives the same digest on any machine, and
        an edited one (a column, a prompt, a split, the main score) another. The data is named
        apart (``revision``, or the fingerprint of what was scored), and so are the name,
        description, licence and sources, which change no number."""
        # a field at its default is left out: a field added later (with a default that keeps
        # today's scoring) changes no existing task's digest, so no result is rescored for it
        defaults = {f.name: _default(f) for f in fields(self)}
        facts = {
            name: _plain(getattr(self, name))
            for name in DECLARATION_FIELDS
            if _plain(getattr(self, name)) != _plain(defaults[name])
        }
        text = json.dumps(facts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return LOCAL_REVISION_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()[:16]

    def columns_for(self, subset: str) -> Mapping[str, str]:
        """The renames for one subset: the task's, overridden by the subset's own."""
        return {**self.columns, **self.subset_columns.get(subset, {})}

    def revision_status(self, revision: str | None) -> str:
        """How a results file's dataset revision relates to this task.

        Returns:
            ``"pinned"`` (the registry's revision), ``"known"`` (a revision published results
            were made at, which is not the pinned one), or ``"unknown"``. A task with no
            revision (built locally, as PipChem's are) has nothing pinned to mismatch: its
            files name their data by content fingerprint (``sha256:...``; which data that is
            only the data itself can tell) or, written before fingerprints, by nothing.
        """
        if revision == self.revision:
            return "pinned"
        if self.revision is None and revision is not None:
            return "pinned" if _LOCAL_REVISION.match(revision) else "unknown"
        if revision in self.known_revisions:
            return "known"
        return "unknown"

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view of the record."""
        return {
            "name": self.name,
            "type": self.type,
            "hf_path": self.hf_path,
            "revision": self.revision,
            "eval_splits": list(self.eval_splits),
            "main_score": self.main_score,
            "subsets": list(self.subsets),
            "columns": dict(self.columns),
            "subset_columns": {k: dict(v) for k, v in self.subset_columns.items()},
            "train_split": self.train_split,
            "subsample": self.subsample,
            "concat_subsets": self.concat_subsets,
            "category": self.category,
            "source": self.source,
            "license": self.license,
            "n_samples": self.n_samples,
            "split_sizes": dict(self.split_sizes),
            "aliases": list(self.aliases),
            "known_revisions": list(self.known_revisions),
            "builder": self.builder,
            "description": self.description,
            "collection": self.collection,
            "subset_weight_key": self.subset_weight_key,
            "probe": dict(self.probe),
            "obtain": self.obtain,
            "prompts": dict(self.prompts),
        }


@dataclass(frozen=True)
class Aggregation:
    """How a benchmark turns per-task scores into a ranking.

    Args:
        kind: ``"mean"`` (MTEB's leaderboard: mean over tasks, and mean per task type) or
            ``"rrf"`` (the ChemTEB paper: per task type the mean of the tasks' scores, models
            ranked per type, then Reciprocal Rank Fusion over the type ranks).
        rrf_k: the RRF constant (score = sum over types of 1 / (k + rank)).
    """

    kind: Literal["mean", "rrf"]
    rrf_k: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("mean", "rrf"):
            raise ValueError(f"kind: {self.kind!r}; use 'mean' or 'rrf'.")
        if self.kind == "rrf" and (self.rrf_k is None or self.rrf_k < 1):
            raise ValueError("rrf_k: Reciprocal Rank Fusion needs a positive k.")


@dataclass(frozen=True)
class Benchmark:
    """A named set of tasks with the splits and scores it ranks by.

    Args:
        name: the benchmark's name.
        collection: the task collection its task names refer to.
        tasks: task names, in display order.
        aggregation: the ranking protocol.
        description: what it is, in a sentence or two.
        main_scores: per-task overrides of the task's main score (the paper ranks
            classification by macro F1 and pair classification by max F1).
        eval_splits: per-task overrides of the scored splits.
        reference: a citation or URL.
        hub_repo: the benchmark's own dataset repo on the Hub (the ``eval.yaml`` repo the Hub's
            benchmark leaderboards read), under which a model's overall score is filed; ``None``
            while it has none (MTEB's ChemTEB benchmarks have none either).
        records: the task records themselves, for a benchmark of tasks no registry holds (a
            user's own, in a ``TaskCatalog``): the benchmark carries them, in ``tasks`` order.
    """

    name: str
    collection: str
    tasks: tuple[str, ...]
    aggregation: Aggregation
    description: str = ""
    main_scores: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    eval_splits: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    reference: str | None = None
    hub_repo: str | None = None
    records: tuple[Task, ...] = ()

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ValueError(f"tasks: benchmark {self.name} has none.")
        if self.records and tuple(t.name for t in self.records) != self.tasks:
            raise ValueError(f"records: benchmark {self.name}'s records are not its tasks.")
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"tasks: benchmark {self.name} lists a task twice.")
        for mapping_name in ("main_scores", "eval_splits"):
            extra = set(getattr(self, mapping_name)) - set(self.tasks)
            if extra:
                raise ValueError(f"{mapping_name}: {sorted(extra)} are not tasks of {self.name}.")
        object.__setattr__(self, "main_scores", MappingProxyType(dict(self.main_scores)))
        object.__setattr__(self, "eval_splits", MappingProxyType(dict(self.eval_splits)))
