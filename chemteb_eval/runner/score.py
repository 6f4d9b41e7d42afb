"""The score stage: every subset and split of each loaded task scored from the engine's
vectors, for the model and for each variant of its vectors (``--dims``/``--precisions``), each
result written as soon as it is scored (``write.write_result``); a failing task is recorded
and the run goes on."""

from __future__ import annotations

import hashlib
import time
import traceback
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from chemteb_eval import __version__
from chemteb_eval.data.fingerprint import data_fingerprint
from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.models._kernels import encoder_device
from chemteb_eval.results.schema import ResultFile
from chemteb_eval.scoring.compression import Compression
from chemteb_eval.tasks import Task
from chemteb_eval.tasks.kinds import KINDS

from .costs import CORPUS_CHUNK, sides, storage, transform, truncation
from .encode import Spill, task_keys, task_prompt
from .inspect import chemistry_block
from .kinds import KIND_RUNS, ScoreContext, score_split, split_texts
from .lexical import score_hybrid_split
from .values import Log, Plan, RunReport, tell
from .write import run_software, write_result, write_variant_meta

__all__ = ["Scoring", "evaluate_all", "evaluate_task"]

Folders = Mapping[Compression, tuple[Path, RunReport]]


@dataclass(frozen=True)
class Scoring:
    """What scores a run's tasks: the plan, the engine holding their vectors, the scoring
    context (the encoder, batch size, progress, beta), and where lines go."""

    plan: Plan
    engine: EmbeddingEngine
    context: ScoreContext
    log: Log


@dataclass
class _Scored:
    """One variant's scores of a task as they are computed, split by split."""

    scores: dict[str, list[Any]] = field(default_factory=dict)
    items: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    error: BaseException | None = None
    lexical_bytes: int = 0  # a hybrid's: what its lexical model's indexes weigh
    # the digest of the vectors every variant was computed from (``vectors_digest``)
    vectors: str | None = None


def _score_variants(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    wanted: Sequence[Compression],
) -> dict[Compression, _Scored]:
    """Every subset and split of one task scored for each variant in ``wanted`` (the plain
    vectors are ``Compression()``), each split's vectors read from the engine once. A variant
    that fails is recorded and left; the others go on. The plain one's seconds include reading
    the vectors (and re-encoding damaged cache rows is taken out); a variant's are its own
    compression and scoring."""
    encoder = context.encoder
    assert encoder is not None, "a task is scored with the run's encoder in its context"
    out = {v: _Scored() for v in wanted}
    digest = hashlib.blake2b(digest_size=8)
    context = replace(context, protocol=task.protocol)
    with Spill() as spill:
        for subset, by_split in data.items():
            for split, split_data in by_split.items():
                t0 = time.perf_counter()
                redo_before = engine.redo_seconds
                emb = {
                    group: spill.embed(engine, texts, task_prompt(encoder, task, role))
                    for group, (texts, role) in split_texts(split_data).items()
                }
                read = time.perf_counter() - t0 - (engine.redo_seconds - redo_before)
                _digest(digest, split, subset, emb)
                for variant, scored in out.items():
                    if scored.error is not None:
                        continue
                    t1 = time.perf_counter()
                    try:
                        metrics = _score_one(split_data, emb, variant, task, scored, context)
                    except Exception as exc:  # this variant's failure; the others go on
                        if variant.plain:
                            raise
                        scored.error = exc
                        continue
                    evidence = metrics.pop("items", None)
                    if evidence is not None:
                        scored.items[(split, subset)] = evidence
                    metrics["main_score"] = metrics[task.main_score]
                    metrics["hf_subset"] = subset
                    metrics["languages"] = ["eng-Latn"] if subset == "default" else []
                    scored.scores.setdefault(split, []).append(metrics)
                    scored.seconds += time.perf_counter() - t1 + (read if variant.plain else 0)
    for scored in out.values():
        scored.vectors = digest.hexdigest()
    return out


def _digest(digest: Any, split: str, subset: str, emb: Mapping[str, Any]) -> None:
    """Add one split's vectors to the task's digest: what a variant's file records of the
    vectors it came from, so that a reader can tell a variant left from other vectors (the
    model changed under its name and revision, its folder rescored without the variant)."""
    digest.update(f"{subset}\0{split}\0".encode())
    for group in sorted(emb):
        block = np.ascontiguousarray(emb[group])
        digest.update(f"{group}\0{block.dtype.str}\0{block.shape}\0".encode())
        digest.update(block.data)


def _score_one(
    split_data: Any,
    emb: dict[str, Any],
    variant: Compression,
    task: Task,
    scored: _Scored,
    context: ScoreContext,
) -> dict[str, Any]:
    """One split's scores for one variant: a hybrid's from the fused rankings (its lexical
    index's bytes kept in ``scored``); any other's from its vectors (a compressed one's zero
    rows score 0, as MTEB's similarity gives them)."""
    if variant.hybrid is not None:
        metrics, size = score_hybrid_split(split_data, emb, task)
        scored.lexical_bytes += size
        return metrics
    # a retrieval corpus's variant: its rows made as the scorer reads them, a chunk at a time
    # (costs.CompressedRows), never the whole corpus at once
    vectors: dict[str, Any] = {
        g: transform(e, variant, chunk=CORPUS_CHUNK if g == "corpus" else None)
        for g, e in emb.items()
    }
    return score_split(
        split_data, vectors, context if variant.plain else replace(context, zero_rows="zero")
    )


def evaluate_task(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    owners: Mapping[str, int] | None = None,
    items: dict[tuple[str, str], dict[str, Any]] | None = None,
    data_identity: str | None = None,
) -> ResultFile:
    """Score every subset and split of one task into its result file (not yet written);
    ``items``, if given, receives each split's per-item evidence by ``(split, subset)``."""
    scored = _score_variants(task, data, engine, context, [Compression()])[Compression()]
    if items is not None:
        items.update(scored.items)
    files = _result_files(
        task, data, engine, context, owners, data_identity, {Compression(): scored}
    )
    return files[Compression()]


def _result_files(
    task: Task,
    data: TaskData,
    engine: EmbeddingEngine,
    context: ScoreContext,
    owners: Mapping[str, int] | None,
    data_identity: str | None,
    scored: Mapping[Compression, _Scored],
) -> dict[Compression, ResultFile]:
    """Each variant's result file from its scores.

    ``evaluation_time`` is what MTEB's is, encoding included: this task's share of the
    encoding seconds (a text several tasks embed splits its cost between them, ``owners``
    counting them, so the tasks' encode seconds add up to the run's) plus its scoring seconds.
    The cache keeps each vector's cost, so a warm rerun reports the same encode seconds. A
    variant's vectors cost what the model's did: the same encode seconds, its own scoring.
    Each file records the texts the model cut (``truncation``) and what its index weighs
    (``storage``)."""
    encoder = context.encoder
    assert encoder is not None
    keys = task_keys(encoder, task, data)
    costs, hits = engine.costs(keys)
    encode_seconds = sum(costs[k] / (owners or {}).get(k, 1) for k in keys)
    texts, cut, chemistry = _measured(encoder, task, data, bool(keys))
    software = run_software(encoder.meta.framework, encoder_device(encoder))
    out = {}
    for variant, one in scored.items():
        extra: dict[str, Any] = {
            "mteb_version": None,
            "chemteb_eval_version": __version__,
            "kg_co2_emissions": None,
            # Beside MTEB's keys (its readers ignore them): where the time went.
            "encode_seconds": encode_seconds,
            # which vectors it was scored from: a variant of other vectors than its model's
            # current result is left out by the readers (results.board)
            "vectors": one.vectors,
            "score_seconds": one.seconds,
            "n_texts": len(keys),
            "n_cache_hits": hits,
            # what the scores were computed from, beside the data's identity: a rerun of
            # another declaration (a column, a prompt, a split) is scored again
            "task_declaration": task.declaration_digest(),
            # every library whose version can move these numbers (the vectors', the scoring's):
            # rank, compare and the Space say when results compared were computed under others
            "software": software,
        }
        if cut is not None:  # NER embeds its words through the model, not the text cache
            extra["truncation"] = cut
            extra["storage"] = _storage(variant, encoder.meta.embedding_dim, texts, one)
            extra["chemistry"] = chemistry
        out[variant] = ResultFile(
            task_name=task.name,
            scores=one.scores,
            # a local task (no Hub commit) names its data by content: other data's results differ
            dataset_revision=data_identity or task.revision or data_fingerprint(data),
            evaluation_time=encode_seconds + one.seconds,
            extra=extra,
        )
    return out


def _measured(encoder: Any, task: Task, data: TaskData, embeds: bool) -> tuple[Any, Any, Any]:
    """The task's texts by side, those the model cut (``costs.truncation``) and how its
    tokenizer cuts chemical strings (``inspect.chemistry_block``: why a row is low); nothing
    for a task that embeds no text through the cache (NER)."""
    if not embeds:
        return {}, None, None
    texts = sides(data, lambda role: task_prompt(encoder, task, role))
    return texts, truncation(encoder, texts), chemistry_block(encoder, data)


def _storage(variant: Compression, full_dim: int, texts: Any, one: _Scored) -> dict[str, Any]:
    """What the variant's index weighs (``costs.storage``); a hybrid's is its vectors and its
    lexical index, both kept to answer a query."""
    out = storage(variant, full_dim, texts)
    if variant.hybrid is not None:
        out.update(lexical_index=variant.hybrid, lexical_index_bytes=one.lexical_bytes)
        out["index_bytes"] += one.lexical_bytes
    return out


@dataclass
class _Targets:
    """Where each variant's results of the run go (the model's own: ``Compression()``), the
    ``model_meta.json`` of each variant's folder (written with its first result: ``met``), and
    what every task's texts cost (``owners``: how many tasks embed each text)."""

    every: dict[Compression, tuple[Path, RunReport]]
    metas: Mapping[Compression, dict[str, Any]]
    owners: Counter[str]
    identities: Mapping[str, str]
    met: set[Compression] = field(default_factory=set)


def evaluate_all(
    scoring: Scoring,
    loaded: dict[str, TaskData],
    report: RunReport,
    identities: Mapping[str, str] | None = None,
    folders: Folders | None = None,
    metas: Mapping[Compression, dict[str, Any]] | None = None,
) -> None:
    """Score each loaded task for the model (into ``report.results_dir``) and for each variant
    of its vectors in ``folders`` (into its experiment folder, whose ``model_meta.json`` from
    ``metas`` is written with its first result), where that folder has no current result;
    write each result as soon as it is scored."""
    from tqdm.auto import tqdm

    plan, context = scoring.plan, scoring.context
    by_name = {t.name: t for t in plan.tasks}
    assert context.encoder is not None
    owners: Counter[str] = Counter()
    for name, data in loaded.items():
        owners.update(task_keys(context.encoder, by_name[name], data))
    every = {Compression(): (report.results_dir, report), **(folders or {})}
    targets = _Targets(every, metas or {}, owners, identities or {})
    through_model = [n for n in loaded if not KIND_RUNS[by_name[n].type].cached]
    if folders and through_model:
        scoring.log(
            f"{', '.join(through_model)}: embed(s) words through the model, not from cached "
            "vectors; scored for the model itself only, not for --dims/--precisions."
        )
    for name in tqdm(
        list(loaded), desc="tasks", unit="task", disable=not context.progress or not loaded
    ):
        wanted = [
            v
            for v, (_, r) in every.items()
            if r.statuses.get(name) != "skipped"
            and (v.plain or name not in through_model)
            and (v.hybrid is None or KINDS[by_name[name].type].ranks_documents)
        ]
        _evaluate_one(scoring, targets, by_name[name], loaded[name], wanted)


def _evaluate_one(
    scoring: Scoring, targets: _Targets, task: Task, data: TaskData, wanted: list[Compression]
) -> None:
    """One task scored for each variant in ``wanted``, each result written into its folder."""
    name, log = task.name, scoring.log
    try:
        scored = _score_variants(task, data, scoring.engine, scoring.context, wanted)
        identity = targets.identities.get(name)
        files = _result_files(
            task, data, scoring.engine, scoring.context, targets.owners, identity, scored
        )
    except Exception as exc:
        for v in wanted:
            _failed(targets.every[v][1], name, exc, log, v)
        return
    for variant, result in files.items():
        folder, its = targets.every[variant]
        error = scored[variant].error
        if error is not None:
            _failed(its, name, error, log, variant)
            continue
        try:
            if not variant.plain and variant not in targets.met:
                write_variant_meta(folder, targets.metas[variant])
                targets.met.add(variant)
            write_result(scoring.plan, task, result, scored[variant].items, folder, its)
        except Exception as exc:
            _failed(its, name, exc, log, variant)


def _failed(
    report: RunReport, name: str, exc: BaseException, log: Log, variant: Compression
) -> None:
    report.statuses[name] = "failed"
    report.errors[name] = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    label = "" if variant.plain else f" ({_variant_label(variant)})"
    tell(log, f"[failed] {name}{label}: {report.errors[name]}")


def _variant_label(variant: Compression) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(variant.kwargs().items()))
