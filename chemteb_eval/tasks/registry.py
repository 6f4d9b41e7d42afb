"""Lookup of tasks and benchmarks by name."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from .chemteb import CHEMTEB_V1_TASK_NAMES, MTEB_TASKS, PAPER_TASK_NAMES, RELEASE_TASKS
from .kinds import KINDS, TASK_TYPES
from .pipchem import PIPCHEM_TASKS
from .records import Aggregation, Benchmark, Task
from .reserved import reserved_because
from .scitext import SCIEMBED_TASKS, SCITEXT_TASKS

COLLECTIONS: Mapping[str, tuple[Task, ...]] = MappingProxyType(
    {
        "release": RELEASE_TASKS,
        "mteb": MTEB_TASKS,
        "pipchem": PIPCHEM_TASKS,
        "scitext": SCITEXT_TASKS,
    }
)


def _paper_metric(task: Task) -> str:
    metric = KINDS[task.type].paper_metric
    assert metric is not None, f"{task.name}: the paper has no {task.type} tasks"
    return metric


BENCHMARKS: Mapping[str, Benchmark] = MappingProxyType(
    {
        "ChemTEB": Benchmark(
            name="ChemTEB",
            collection="mteb",
            tasks=CHEMTEB_V1_TASK_NAMES,
            aggregation=Aggregation("mean"),
            description="MTEB's ChemTEB (27 tasks): scores line up with the MTEB leaderboard.",
            reference="https://arxiv.org/abs/2412.00532",
        ),
        "ChemTEB(v1.1)": Benchmark(
            name="ChemTEB(v1.1)",
            collection="mteb",
            tasks=(*CHEMTEB_V1_TASK_NAMES, "ChemRxivRetrieval"),
            aggregation=Aggregation("mean"),
            description="MTEB's ChemTEB(v1.1): ChemTEB plus ChemRxivRetrieval (28 tasks).",
            reference="https://arxiv.org/abs/2412.00532",
        ),
        "ChemTEB(paper)": Benchmark(
            name="ChemTEB(paper)",
            collection="release",
            tasks=PAPER_TASK_NAMES,
            aggregation=Aggregation("rrf", rrf_k=10),
            description="The ChemTEB paper's 35 tasks and protocol: per-type means of macro F1, "
            "V-measure, max F1, F1 and nDCG@10 (retrieval on test only), ranked per type, "
            "then Reciprocal Rank Fusion (k = 10).",
            main_scores={
                t.name: _paper_metric(t)
                for t in RELEASE_TASKS
                if t.name in PAPER_TASK_NAMES and t.main_score != _paper_metric(t)
            },
            # The release scored ChemHotpotQA on train, dev and test; the paper's tables use test.
            eval_splits={"ChemHotpotQARetrieval": ("test",)},
            reference="https://arxiv.org/abs/2412.00532",
        ),
        "PipChem": Benchmark(
            name="PipChem",
            collection="pipchem",
            tasks=tuple(t.name for t in PIPCHEM_TASKS),
            aggregation=Aggregation("mean"),
            description="A small offline chemistry benchmark built from pip-installable real "
            "data (PubChem identifiers, RDKit, Wikipedia leads). Not ChemTEB; not comparable "
            "with ChemTEB scores.",
        ),
        "SciText": Benchmark(
            name="SciText",
            collection="scitext",
            tasks=("STSBenchmark", "BC5CDRChemicalNER"),
            aggregation=Aggregation("mean"),
            description="Scientific-text embedding checks that run offline on copies of their public sets (CHEMTEB_SHARED_DATA): "
            "STS benchmark (Spearman) and BC5CDR chemical NER (probe F1). BIOSSES is registered "
            "but unpinned.",
        ),
        "SciEmbed": Benchmark(
            name="SciEmbed",
            collection="scitext",
            tasks=SCIEMBED_TASKS,
            aggregation=Aggregation("mean"),
            description="The scientific-embedding study's design (Ahmed et al. 2025) on the sets "
            "that run offline on copies of their public sets (CHEMTEB_SHARED_DATA): word similarity (UMNSRS x4) and sentence "
            "similarity (SemEval STS 2012-2016, STS benchmark) by Pearson (Spearman beside "
            "it), NER (SciERC, BC5CDR) by entity F1, document classification (Reuters-12) by "
            "macro F1. The restricted sets (ClinicalSTS2018/2019, CoNLL2003NER, CHEMDNERNER) "
            "run with -t and --data-path; BioChem-8 could not be identified.",
            # the study's primary similarity metric is Pearson, also for the STS benchmark
            main_scores={"STSBenchmark": "cosine_pearson"},
            reference="https://arxiv.org/abs/2510.06244",
        ),
    }
)


def _unknown(kind: str, name: str, choices: list[str]) -> ValueError:
    # compared in lower case: "chemtbe" is near "ChemTEB" however it is spelled
    lowered = {c.lower(): c for c in choices}
    close = [lowered[c] for c in difflib.get_close_matches(name.lower(), lowered, n=3, cutoff=0.6)]
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return ValueError(f"{kind}: unknown {kind} {name!r}.{hint} `chemteb list` shows them all.")


# A user's own tasks (``--task-file``, or the task files recorded beside results) live in a
# ``TaskCatalog`` value (``tasks.catalog``), in their own collection and benchmark, never mixed
# into a registered one; no module state holds them.
CUSTOM = "custom"
CUSTOM_BENCHMARK = "Custom"


def check_custom_name(name: str) -> str:
    """``name`` unless a registered task has it, or it is reserved (an MTEB task's name, or the
    stem of a file in a model's results folder: ``reserved.reserved_because``), in any letter
    case (``chemteb run`` writes ``{name}.json`` beside ChemTEB's files, and macOS and Windows
    fold case); ``ValueError`` naming ``name`` otherwise."""
    folded = {n.casefold(): n for t in list_tasks_builtin() for n in (t.name, *t.aliases)}
    if name.casefold() in folded:
        raise ValueError(
            f"name: {name!r} is the registered task {folded[name.casefold()]!r}'s name (letter "
            "case aside); give your task another name."
        )
    reason = reserved_because(name)
    if reason is not None:
        raise ValueError(f"name: {reason}; give your task another name.")
    return name


def list_tasks_builtin() -> list[Task]:
    """The registered collections' tasks, without a user's own."""
    return [t for tasks in COLLECTIONS.values() for t in tasks]


def list_tasks(collection: str | None = None) -> list[Task]:
    """All registered task records, or those of one collection (``release``, ``mteb``,
    ``pipchem``, ``scitext``). A user's own tasks are a ``TaskCatalog``'s."""
    if collection is None:
        return list_tasks_builtin()
    if collection == CUSTOM:
        return []
    if collection not in COLLECTIONS:
        raise _unknown("collection", collection, [*COLLECTIONS, CUSTOM])
    return list(COLLECTIONS[collection])


def custom_benchmark(tasks: Iterable[Task]) -> Benchmark | None:
    """A user's own tasks as one benchmark (mean over tasks, the records carried, by name), or
    ``None`` when there are none."""
    records = tuple(sorted(tasks, key=lambda t: t.name))
    if not records:
        return None
    return Benchmark(
        name=CUSTOM_BENCHMARK,
        collection=CUSTOM,
        tasks=tuple(t.name for t in records),
        aggregation=Aggregation("mean"),
        description="Your own tasks (task files): ranked by the mean over tasks, apart from "
        "every registered benchmark.",
        records=records,
    )


def known_benchmarks() -> list[Benchmark]:
    """Every registered benchmark (a ``TaskCatalog`` adds ``Custom``)."""
    return list(BENCHMARKS.values())


def get_task(name: str, collection: str | None = None) -> Task:
    """A task by name or alias (a name the paper's result files used).

    Args:
        name: the task's name, or an alias such as ``CoconutSMILES2Formula1BM``.
        collection: where to look; needed only for names that several collections share
            (e.g. ``ChemNQRetrieval`` is in the release and in MTEB, at other revisions).

    Returns:
        The task record.
    """
    found = [t for t in list_tasks(collection) if name == t.name or name in t.aliases]
    if len(found) == 1:
        return found[0]
    if not found:
        elsewhere = sorted(
            {b.name for b in BENCHMARKS.values() if name in b.tasks and b.collection != collection}
        )
        if collection is not None and elsewhere:  # -t X -b B, where X is another benchmark's
            raise ValueError(
                f"task: unknown task {name!r} in collection {collection!r} (the benchmark "
                f"given); it is a task of {', '.join(elsewhere)}: pass -b {elsewhere[0]!r}, or "
                "no -b."
            )
        raise _unknown("task", name, [t.name for t in list_tasks(collection)])
    where = ", ".join(sorted(t.collection for t in found))
    raise ValueError(
        f"task: {name!r} is in several collections ({where}); pass collection=... "
        "(the benchmark you run decides this for you)."
    )


def get_benchmark(name: str) -> Benchmark:
    """A benchmark by name: ``ChemTEB``, ``ChemTEB(v1.1)``, ``ChemTEB(paper)``, ``PipChem``...,
    or ``Custom`` (the custom tasks registered in this process)."""
    if name == CUSTOM_BENCHMARK:
        raise ValueError(
            "benchmark: Custom has no tasks: pass --task-file (chemteb run), or rank results "
            "written with a task file (each records its task beside its results)."
        )
    if name not in BENCHMARKS:
        raise _unknown("benchmark", name, list(BENCHMARKS))
    return BENCHMARKS[name]


def benchmark_spelling(name: str) -> str:
    """The registered benchmark (or ``Custom``) ``name`` means in any letter case, as the
    registry spells it (``chemteb`` -> ``ChemTEB``); ``name`` as given when none or several
    match. What the command line's ``-b`` reads; ``get_benchmark`` stays exact."""
    known = [*BENCHMARKS, CUSTOM_BENCHMARK]
    folded = [b for b in known if b.casefold() == name.casefold()]
    return folded[0] if len(folded) == 1 else name


def benchmark_tasks(benchmark: Benchmark | str) -> list[Task]:
    """The task records of a benchmark, in its order (those it carries, else the registry's)."""
    bench = get_benchmark(benchmark) if isinstance(benchmark, str) else benchmark
    if bench.records:
        return list(bench.records)
    return [get_task(name, bench.collection) for name in bench.tasks]


def main_score(benchmark: Benchmark, task: Task) -> str:
    """The score a benchmark ranks a task by."""
    return benchmark.main_scores.get(task.name, task.main_score)


def eval_splits(benchmark: Benchmark, task: Task) -> tuple[str, ...]:
    """The splits a benchmark scores a task on."""
    return benchmark.eval_splits.get(task.name, task.eval_splits)


def _check() -> None:
    # Every benchmark's tasks exist, once each, and every task type is known.
    for bench in BENCHMARKS.values():
        benchmark_tasks(bench)
    for collection, tasks in COLLECTIONS.items():
        names = [t.name for t in tasks]
        assert len(set(names)) == len(names), f"duplicate task names in {collection}"
        assert all(t.collection == collection and t.type in TASK_TYPES for t in tasks)


_check()
