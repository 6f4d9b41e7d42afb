"""BM25 beside the dense models (issue 47): which row is the lexical reference, which rows are
a model's hybrid (``chemteb run --hybrid bm25s``), and on each retrieval task whether a dense
model beats BM25 — and whether its hybrid beats both — as ``chemteb compare`` decides: a paired
bootstrap over the task's queries (each query's nDCG@10 from the per-item evidence), 95%.

``rank``, the run's summary and the Space's "Versus BM25" tab show these verdicts; the BM25
row is badged, ranked with the others, and never hidden by a filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from chemteb_eval.tasks import Benchmark, benchmark_tasks
from chemteb_eval.tasks.kinds import RANKED_TYPES

from .board import ModelResults, experiment_kwargs_of, variant_base
from .compare import paired_task_interval
from .markup import shown

__all__ = [
    "BM25_MODEL",
    "REFERENCE_BADGE",
    "Verdict",
    "hybrid_base",
    "is_reference",
    "lexical_rows",
    "retrieval_part",
    "verdict_lines",
    "versus_bm25",
    "with_verdicts",
]

# MTEB's name of its BM25 model (models.bm25.BM25_NAME: a test holds the two equal; this room
# may not import the models room). Its published rows and ours carry it.
BM25_MODEL = "mteb/baseline-bm25s"
REFERENCE_BADGE = "BM25 reference"


def is_reference(m: ModelResults) -> bool:
    """Whether the row is BM25 itself (ours or MTEB's published folder), not a variant: its
    folder is MTEB's for that name (``mteb__baseline-bm25s``) and its ``model_meta.json``, if
    any, names it. A folder elsewhere that only says it is BM25 is not taken at its word."""
    meta = m.meta if isinstance(m.meta, dict) else {}
    named = meta.get("name", BM25_MODEL) == BM25_MODEL
    return m.folder.name == BM25_MODEL.replace("/", "__") and named and not experiment_kwargs_of(m)


def hybrid_base(m: ModelResults, models: Sequence[ModelResults]) -> ModelResults | None:
    """The dense row a hybrid row fuses (``board.variant_base``). ``None`` for a row that is no
    hybrid."""
    return variant_base(m, models) if "hybrid" in experiment_kwargs_of(m) else None


@dataclass(frozen=True)
class Verdict:
    """One row's main score minus another's on one retrieval task, with its 95% paired
    interval over the task's queries and what it says: ``better``, ``worse``, ``can't tell``
    (the interval holds 0), or ``no interval`` (``why``: no per-query evidence for both, or
    other queries)."""

    model: str
    task: str
    against: str  # the other row's name (BM25's, or a hybrid's own model's)
    score: float
    other: float
    difference: float
    low: float | None
    high: float | None
    verdict: str
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _verdict(
    a: ModelResults, b: ModelResults, task: Any, bench: Benchmark, resamples: int, seed: int
) -> Verdict:
    paired, why = paired_task_interval(task, bench, a, b, resamples, seed)
    score, other = a.scores[task.name], b.scores[task.name]
    if paired is None:
        return Verdict(
            a.model, task.name, b.model, score, other, score - other, None, None, "no interval", why
        )
    said = "better" if paired.low > 0 else "worse" if paired.high < 0 else "can't tell"
    return Verdict(
        a.model, task.name, b.model, score, other, paired.difference, paired.low, paired.high, said
    )


def versus_bm25(
    models: Sequence[ModelResults], bench: Benchmark, *, resamples: int = 1000, seed: int = 0
) -> list[Verdict]:
    """For each retrieval task of ``bench`` that a BM25 row scored: every other row against
    each BM25 row (two BM25 folders ranked together: against each, so no folder's is chosen
    by its name's sort order), and every hybrid against its own model. Rows on other data
    than a BM25 row's (a local task built twice) are not compared with it."""
    references = [m for m in models if is_reference(m)]
    if not references:
        return []
    out = []
    for task in benchmark_tasks(bench):
        if task.type not in RANKED_TYPES or not any(task.name in r.scores for r in references):
            continue
        for m in models:
            if m in references or task.name not in m.scores:
                continue
            for bm25 in references:
                if task.name in bm25.scores and _same_data(m, bm25, task.name):
                    out.append(_verdict(m, bm25, task, bench, resamples, seed))
            base = hybrid_base(m, models)
            if base is not None and task.name in base.scores and _same_data(m, base, task.name):
                out.append(_verdict(m, base, task, bench, resamples, seed))
    return out


def _same_data(a: ModelResults, b: ModelResults, task: str) -> bool:
    revisions = [m.files[task].dataset_revision if task in m.files else None for m in (a, b)]
    return None in revisions or revisions[0] == revisions[1]


def _cell(v: Verdict) -> str:
    if v.low is None or v.high is None:
        return f"{v.difference:+.4f} ({v.verdict}: {v.why})"
    return f"{v.difference:+.4f} [{v.low:+.4f}, {v.high:+.4f}] {v.verdict}"


def verdict_lines(found: Sequence[Verdict], references: Sequence[str] = (BM25_MODEL,)) -> list[str]:
    """``rank``'s section: per retrieval task, each row's difference to BM25 (each BM25 row's
    name in ``references``) and a hybrid's to its model, with its interval and verdict."""
    if not found:
        return []
    width = max(len(shown(v.model)) for v in found)
    named = ", ".join(shown(r) for r in references)
    lines = [
        f"Versus BM25 ({named}): main score minus BM25's per retrieval task, 95% paired "
        "bootstrap over its queries (better / worse / can't tell: the interval holds 0)."
    ]
    if len(references) > 1:
        lines.append(f"[note] {len(references)} BM25 rows: each row is compared with each.")
    by_task: dict[str, list[Verdict]] = {}
    for v in found:
        by_task.setdefault(v.task, []).append(v)
    for task, rows in by_task.items():
        scores = dict.fromkeys(f"{v.other:.4f}" for v in rows if v.against in references)
        lines.append(f"{shown(task)}" + (f" (BM25 {', '.join(scores)})" if scores else ""))
        for v in rows:
            if v.against not in references:
                what = "vs its model"
            elif len(references) > 1:
                what = f"vs {shown(v.against)}"
            else:
                what = "vs BM25"
            lines.append(f"  {shown(v.model):<{width}}  {v.score:.4f}  {what}: {_cell(v)}")
    return lines


def with_verdicts(
    rows: list[dict[str, Any]], badges: Mapping[str, str], found: Sequence[Verdict]
) -> list[dict[str, Any]]:
    """``rank --json``'s rows with ``reference`` (the BM25 row's badge, else null) and, where a
    BM25 row is among them, ``versus_bm25``: the row's verdicts (against BM25, and a hybrid's
    against its model)."""
    out = []
    for row in rows:
        row = {**row, "reference": badges.get(row["model"])}
        if found:
            row["versus_bm25"] = [v.to_dict() for v in found if v.model == row["model"]]
        out.append(row)
    return out


def lexical_rows(models: Sequence[ModelResults]) -> bool:
    """Whether BM25 or a hybrid is among the rows (then ``rank --frontier`` adds the
    retrieval part, where they are complete)."""
    return any(is_reference(m) or "hybrid" in experiment_kwargs_of(m) for m in models)


def retrieval_part(bench: Benchmark) -> Benchmark | None:
    """``bench`` restricted to its retrieval tasks, with their main scores and splits: where
    BM25 and the hybrids, which score retrieval only, have a mean to place on the frontier.
    ``None`` when it has none."""
    keep = tuple(t.name for t in benchmark_tasks(bench) if t.type in RANKED_TYPES)
    if not keep:
        return None
    return replace(
        bench,
        name=f"{bench.name} (retrieval)",
        tasks=keep,
        main_scores={k: v for k, v in bench.main_scores.items() if k in keep},
        eval_splits={k: v for k, v in bench.eval_splits.items() if k in keep},
        records=tuple(t for t in bench.records if t.name in keep),
        hub_repo=None,
    )
