"""What each model (and each variant of its vectors) costs beside what it scores: bytes per
vector, the index its tasks make, the encoder's texts per second, the texts it cut; and the
Pareto set of quality against size (and against speed). ``chemteb rank --frontier``, the
Space's Frontier tab and the run's summary read these rows.

Everything here reads result files and run records, which are untrusted: a value of the wrong
type, negative, NaN or absurd is left out (shown as unknown), never computed with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

import numpy as np

from chemteb_eval.scoring.compression import PRECISIONS, bytes_per_vector
from chemteb_eval.tasks import Benchmark, benchmark_tasks, main_score

from .board import ModelResults
from .schema import real_number

__all__ = [
    "NOTE_SHARE",
    "UNKNOWN",
    "FrontierRow",
    "cut_cell",
    "frontier",
    "truncated_share",
    "truncation_note",
    "truncation_share",
]

UNKNOWN = "unknown"  # a backend that cannot count its tokens (an API): said, never guessed
# A task where more than this share of one side's texts was cut gets a note: its score
# measures the start of those texts only.
NOTE_SHARE = 0.10
_MAX_DIM = 1 << 20  # no embedding has a million dimensions: a larger one is a damaged file
_MAX_BYTES = 1 << 60  # an index of an exabyte: any larger figure is a damaged file
_MAX_RATE = 1e9  # texts per second no encoder reaches
# The fewest texts a run must have encoded for its texts/s to stand for the encoder's speed.
MIN_TIMED = 100


def _count(value: object, *, zero: bool = False) -> TypeGuard[int]:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and (value >= 0 if zero else value > 0)
    )


def truncation_share(record: object) -> tuple[float, str] | str | None:
    """The largest share of one side's texts cut, with ``"split side"`` naming it; ``UNKNOWN``
    when any side is unknown; ``None`` for no record (a file written before truncation was
    measured, or by MTEB) or a malformed one."""
    if not isinstance(record, dict) or not record:
        return None
    worst: tuple[float, str] | None = None
    for split, sides in record.items():
        if not isinstance(sides, dict) or not sides:
            return None
        for side, one in sides.items():
            if one == UNKNOWN:
                return UNKNOWN
            texts = one.get("texts") if isinstance(one, dict) else None
            cut = one.get("truncated") if isinstance(one, dict) else None
            if not isinstance(texts, int) or not isinstance(cut, int):
                return None
            if not _count(texts) or not _count(cut, zero=True) or cut > texts:
                return None
            share = cut / texts
            if worst is None or share > worst[0]:
                worst = (share, f"{split} {side}")
    return worst


def truncation_note(task: str, record: object) -> str | None:
    """A line for a task where the model cut more than ``NOTE_SHARE`` of one side's texts."""
    worst = truncation_share(record)
    if not isinstance(worst, tuple) or worst[0] <= NOTE_SHARE:
        return None
    split, side = worst[1].split(" ", 1)
    one = record[split][side]  # type: ignore[index]
    tokens, cut, limit = one.get("tokens"), one.get("tokens_cut"), one.get("max_tokens")
    unread = (
        f", {cut / tokens:.0%} of their tokens unread"
        if _count(tokens) and _count(cut, zero=True) and cut <= tokens
        else ""
    )
    at = f" at its {limit} tokens" if _count(limit) else ""
    return (
        f"{task}: the model cut {worst[0]:.0%} of the {side} of split {split}{at}{unread}; "
        "its score measures the start of those texts only."
    )


def cut_cell(share: float | str | None) -> str:
    """A truncation share as a table cell: ``12%``, ``unknown``, or empty (not measured)."""
    if isinstance(share, str):
        return share
    if share is None:
        return ""
    # a share that rounds to 0% is not none: "<1%" says some texts were cut
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


@dataclass(frozen=True)
class FrontierRow:
    """One model or variant on the frontier table."""

    model: str  # as the ranking names it: "name (truncate_dim=256, output_dtypes=int8)"
    score: float | None  # mean main score over the benchmark's tasks (None: incomplete)
    interval: tuple[float, float] | None  # 95% of that mean, the tasks' items resampled
    fixed_tasks: tuple[str, ...]  # tasks the interval holds at their score (no items to redraw)
    rank_interval: tuple[int, int] | None  # from ``ranking.rank_uncertainty``
    dim: int | None
    precision: str | None
    bytes_per_vector: int | None
    index_bytes: int | None  # over the benchmark's tasks (None: some task's is unknown)
    task_index_bytes: Mapping[str, int]  # each task's index, where its file recorded it
    texts_per_second: float | None  # the encoder's, in the run that encoded the most texts
    truncated: float | str | None  # largest share of one side's texts cut; "unknown"
    pareto_size: bool = False  # no other row scores as well with fewer bytes per vector
    pareto_speed: bool = False  # no other row scores as well and encodes faster

    def to_dict(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in self.__dataclass_fields__}
        for key in ("interval", "rank_interval", "fixed_tasks"):
            out[key] = list(out[key]) if out[key] is not None else None
        out["task_index_bytes"] = dict(self.task_index_bytes)
        return out


def _vector_shape(m: ModelResults) -> tuple[int | None, str | None]:
    """The dimension and precision of a row's stored vectors: its model_meta.json's
    ``experiment_kwargs`` (``truncate_dim``, ``output_dtypes``) over its ``embedding_dim``
    (MTEB's ``embed_dim``); float32 when no precision is named."""
    meta = m.meta if isinstance(m.meta, dict) else {}
    kwargs = meta.get("experiment_kwargs")
    kwargs = kwargs if isinstance(kwargs, dict) else {}
    dim = kwargs.get("truncate_dim")
    if not _count(dim):
        dim = meta.get("embedding_dim", meta.get("embed_dim"))
    precision = kwargs.get("output_dtypes", "float32")
    dim = dim if _count(dim) and dim <= _MAX_DIM else None
    if dim is None and not _count(kwargs.get("truncate_dim")) and "output_dtypes" not in kwargs:
        return None, None  # no vectors said (BM25's row: terms, not vectors)
    return dim, precision if precision in PRECISIONS else None


def _task_index_bytes(m: ModelResults, tasks: Sequence[str]) -> dict[str, int]:
    """Each task's index size as its result file recorded it (``storage.index_bytes``),
    where that is a plausible count."""
    out = {}
    for name in tasks:
        file = m.files.get(name)
        stored = file.extra.get("storage") if file is not None else None
        value = stored.get("index_bytes") if isinstance(stored, dict) else None
        if _count(value, zero=True) and value <= _MAX_BYTES:
            out[name] = value
    return out


def _number(value: object, high: float) -> float | None:
    """A positive finite number no larger than ``high`` (an untrusted file's value); else
    ``None``. An int too large for a float is ``None``, not an ``OverflowError``."""
    number = real_number(value)
    return number if number is not None and 0 < number <= high else None


def _texts_per_second(m: ModelResults, tasks: Sequence[str]) -> float | None:
    """The encoder's speed: in the recorded run that encoded the most texts, where one encoded
    at least ``MIN_TIMED`` (a warm rerun encodes none; a handful of texts times nothing); else
    the tasks' texts over the encode seconds the cache kept from the run that made their
    vectors; else the best recorded run, however small."""
    best: tuple[int, float] | None = None
    for record in m.runs.values():
        enc = record.get("encoding") if isinstance(record, dict) else None
        if not isinstance(enc, dict):
            continue
        n, rate = enc.get("encoded"), _number(enc.get("texts_per_second"), _MAX_RATE)
        if _count(n) and rate is not None and (best is None or n > best[0]):
            best = (n, rate)
    if best is not None and best[0] >= MIN_TIMED:
        return best[1]
    texts, seconds = 0, 0.0
    for name in tasks:
        file = m.files.get(name)
        n = file.extra.get("n_texts") if file is not None else None
        spent = _number(file.extra.get("encode_seconds"), 1e9) if file is not None else None
        if not _count(n) or n > _MAX_BYTES or spent is None:
            return best[1] if best is not None else None
        texts, seconds = texts + n, seconds + spent
    rate = _number(texts / seconds, _MAX_RATE) if seconds else None
    return rate if rate is not None else best[1] if best is not None else None


def truncated_share(m: ModelResults, tasks: Sequence[str]) -> float | str | None:
    """The largest share of one side's texts the model cut over ``tasks`` (``UNKNOWN`` where
    its backend cannot count; ``None`` where no file recorded it)."""
    worst: float | None = None
    for name in tasks:
        file = m.files.get(name)
        if file is None or "truncation" not in file.extra:
            continue
        share = truncation_share(file.extra["truncation"])
        if share == UNKNOWN:
            return UNKNOWN
        if isinstance(share, tuple) and (worst is None or share[0] > worst):
            worst = share[0]
    return worst


def _mean_interval(
    m: ModelResults, bench: Benchmark, resamples: int, seed: int
) -> tuple[tuple[float, float] | None, tuple[str, ...]]:
    """A complete row's 95% interval of its mean over the benchmark's tasks: the items of each
    task whose score is a mean of items and whose run wrote them redrawn (each row on its own
    evidence, so one row's missing or damaged items never move another's); every other task
    held at its score, and named. ``(None, all tasks)`` when no task can be redrawn."""
    from .ranking import _mean_of_items, task_evidence

    tasks = benchmark_tasks(bench)
    drawn = {}
    for task in tasks:
        key = main_score(bench, task)
        evidence = task_evidence(m, bench, task, key) if _mean_of_items(task.type, key) else None
        if evidence is not None:
            drawn[task.name] = evidence
    fixed = tuple(t.name for t in tasks if t.name not in drawn)
    if not drawn:
        return None, fixed
    rng = np.random.default_rng(seed)
    means = []
    for _ in range(resamples):
        scores = [
            drawn[t.name].statistic(rng.integers(0, drawn[t.name].n, size=drawn[t.name].n))
            if t.name in drawn
            else m.scores[t.name]
            for t in tasks
        ]
        means.append(float(np.mean(scores)))
    if not all(math.isfinite(x) for x in means):
        return None, tuple(t.name for t in tasks)
    return (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))), fixed


def _pareto(points: Mapping[str, tuple[float, float]]) -> set[str]:
    """The rows no other row dominates: at least as good on both axes (higher is better on
    each) and better on one."""
    out = set()
    for name, (a, b) in points.items():
        if not any(
            (x >= a and y >= b) and (x > a or y > b)
            for other, (x, y) in points.items()
            if other != name
        ):
            out.add(name)
    return out


def frontier(
    models: list[ModelResults],
    bench: Benchmark,
    rank_intervals: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    resamples: int = 1000,
    seed: int = 0,
    size: str = "vector",
) -> list[FrontierRow]:
    """One row per model and variant, best score first: quality (the mean main score over the
    benchmark's tasks, with its 95% interval from the items, and the rank interval where given)
    against bytes per vector, index size and encoder speed, and the Pareto sets of quality
    against size and against speed (among complete rows). ``size``: what "smaller" means for
    the size set, bytes per ``"vector"`` (dense rows alike) or the whole ``"index"`` (BM25's
    and a hybrid's rows, which have no one vector's size: ``lexical.retrieval_part``)."""
    if size not in ("vector", "index"):
        raise ValueError(f"size: 'vector' or 'index', got {size!r}.")
    names = [t.name for t in benchmark_tasks(bench)]
    complete = [m for m in models if names and all(n in m.scores for n in names)]
    done_ids = {id(m) for m in complete}
    rows = []
    for m in models:
        dim, precision = _vector_shape(m)
        done = id(m) in done_ids
        interval, fixed = _mean_interval(m, bench, resamples, seed) if done else (None, ())
        each = _task_index_bytes(m, names)
        ci = (rank_intervals or {}).get(m.model)
        rows.append(
            FrontierRow(
                model=m.model,
                score=float(np.mean([m.scores[n] for n in names])) if done else None,
                interval=interval,
                fixed_tasks=fixed,
                rank_interval=(ci["rank_low"], ci["rank_high"]) if ci else None,
                dim=dim,
                precision=precision,
                bytes_per_vector=bytes_per_vector(dim, precision) if dim and precision else None,
                index_bytes=sum(each.values()) if len(each) == len(names) else None,
                task_index_bytes=each,
                texts_per_second=_texts_per_second(m, names),
                truncated=truncated_share(m, names),
            )
        )
    weight = {r.model: r.bytes_per_vector if size == "vector" else r.index_bytes for r in rows}
    by_size = _pareto(
        {
            r.model: (r.score, -float(weight[r.model] or 0))
            for r in rows
            if r.score is not None and weight[r.model]
        }
    )
    speed = _pareto(
        {
            r.model: (r.score, r.texts_per_second)
            for r in rows
            if r.score is not None and r.texts_per_second
        }
    )
    rows = [
        FrontierRow(
            **{**r.__dict__, "pareto_size": r.model in by_size, "pareto_speed": r.model in speed}
        )
        for r in rows
    ]
    return sorted(rows, key=lambda r: (r.score is None, -(r.score or 0.0), r.model))
