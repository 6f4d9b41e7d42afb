"""One benchmark run as a short list of stages, each its own module: plan (what is pending,
what is stale: ``plan.py``) → load (the model and each task's data: ``load.py``) → encode
(every unique text once: ``encode.py``) → score (each task, for the model and each variant of
its vectors: ``score.py``) → write (result files and the run's record: ``write.py``). This
module only orders them; the values they hand each other are ``values.py``'s and the model's
variant (``models.variant.ModelVariant``).

All texts of all selected tasks are collected first and each unique (prompt, text) is encoded
once; tasks are then scored one by one and each result is written atomically as soon as it is
done. Finished tasks are skipped on a rerun; a failing task is recorded and the run goes on.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingEngine
from chemteb_eval.engine.cache import EmbeddingCache
from chemteb_eval.engine.distributed import check_data, check_shared, distributed_state, main_list
from chemteb_eval.errors import require_extras
from chemteb_eval.models import DEFAULT_RUNTIME
from chemteb_eval.models.base import DEFAULT_BATCH_SIZE, Encoder, check_batch_size, check_device
from chemteb_eval.models.spec import ModelSpec, parse_model_spec
from chemteb_eval.models.variant import ModelVariant
from chemteb_eval.scoring._validation import check_beta
from chemteb_eval.scoring.compression import Compression, check_dims, check_precisions
from chemteb_eval.tasks import Benchmark, Task
from chemteb_eval.tasks.kinds import RANKED_TYPES

from .encode import cache_identity as _identity
from .encode import open_cache, prefetch, task_keys, task_prompt
from .encode import prefetch as _prefetch
from .folders import (
    no_empty_folder_left,
    recorded_meta,
    remove_made,
    results_folder,
    results_name,
    variant_reports,
    write_meta,
)
from .kinds import ScoreContext
from .lexical import HYBRIDS, LEXICAL_EXTRA, is_lexical, run_lexical
from .load import api_identity, load, local_weights, open_model
from .plan import (
    data_paths_for,
    hub_out_of_reach,
    pending,
    pending_everywhere,
    requirements,
    select,
    settle,
    settle_everywhere,
)
from .plan import hub_out_of_reach as _hub_out_of_reach
from .score import Scoring, evaluate_all, evaluate_task
from .values import Log, Opened, Plan, Prepared, RunOptions, RunReport
from .write import write_records, write_run_record

# The names callers imported from this module before its stages had modules of their own.
__all__ = [
    "Plan",
    "RunReport",
    "_hub_out_of_reach",
    "_identity",
    "_prefetch",
    "api_identity",
    "data_paths_for",
    "evaluate_task",
    "load",
    "local_weights",
    "pending",
    "recorded_meta",
    "requirements",
    "results_folder",
    "results_name",
    "run",
    "select",
    "settle",
    "task_keys",
    "task_prompt",
    "write_run_record",
]

Folders = dict[Compression, tuple[Path, RunReport]]


# The public façade keeps the keyword list its callers use (the CLI, tests, notebooks): it only
# builds the two values the stages take, the model's variant and the run's options.
def run(
    model: str | Encoder = "sentence-transformers/all-MiniLM-L6-v2",
    *,
    benchmark: str | Benchmark | None = None,
    tasks: Sequence[Task] | None = None,
    output_dir: str | Path = "results",
    batch_size: int = DEFAULT_BATCH_SIZE,
    device: str | None = None,
    precision: str = "float32",
    api_base: str | None = None,
    backend: str = DEFAULT_RUNTIME,
    overwrite: bool = False,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    data_paths: Mapping[str, str | Path] | None = None,
    beta: float | None = None,
    dims: Sequence[int] | str | None = None,
    precisions: Sequence[str] | str | None = None,
    progress: bool = True,
    log: Log = print,
    variant: ModelVariant | None = None,
    hybrid: str | None = None,
    revision: str | None = None,
) -> RunReport:
    """Evaluate a model on a benchmark (default PipChem), or on given tasks — scored by the
    benchmark's protocol (splits, main scores) when one is given too, else by their own.

    Args:
        model: a model name or folder (any prefix ``load_encoder`` reads), or an ``Encoder``.
        benchmark: a benchmark name or record.
        tasks: task records to run (with ``benchmark``: some of its tasks).
        precision, api_base, backend, dims, precisions: the model's variant, each as
            ``models.variant.ModelVariant`` describes it (``backend``: how a plain model name
            runs; ``dims``/``precisions``: also score its vectors cut and compressed, into
            MTEB's ``experiments/<name>/`` folders), or all of them as one ``variant``.
        hybrid: also score each retrieval task as the reciprocal-rank fusion of the model's
            ranking and this lexical model's (``"bm25s"``), into ``experiments/`` too; a
            ``model`` naming BM25 (``bm25s``) scores the retrieval tasks with it.
        revision: an API model's name for the model it serves now (``models.identity``).
        output_dir, batch_size, device, overwrite, cache_dir, use_cache, data_paths, beta,
            progress, log: how the run goes, as ``values.RunOptions`` describes each.

    Returns a ``RunReport``.
    """
    started = time.perf_counter()
    given = ModelVariant(backend, precision, api_base, dims, precisions, hybrid, revision)
    if variant is not None and given != ModelVariant():
        raise ValueError(
            "variant: pass the model's variant either as variant= or as its keywords "
            "(precision, api_base, backend, dims, precisions, hybrid, revision), not both."
        )
    options = RunOptions(
        Path(output_dir), batch_size, device, overwrite, cache_dir, use_cache, data_paths, beta
    )
    options = replace(options, progress=progress, log=log)
    if is_lexical(model):
        _lexical_variant(variant or given)
        return run_lexical(benchmark, tasks, options)
    prepared = prepare(model, benchmark, tasks, variant or given, options)
    return execute(prepared, started)


def _lexical_variant(variant: ModelVariant) -> None:
    """BM25 has no vectors: a dtype, an API, compressed copies or a hybrid of it mean nothing."""
    if variant.hybrid is not None:
        raise ValueError("--hybrid: fuses a dense model's ranking with BM25's; run a dense model.")
    if replace(variant, backend=ModelVariant().backend) != ModelVariant():
        raise ValueError(
            "model: BM25 has no vectors to compute in a dtype, serve, cut or compress; drop "
            "--dtype, --api-base, --revision, --dims and --precisions."
        )


def _check_hybrid(variant: ModelVariant, plan: Plan) -> None:
    """``--hybrid``: a lexical model we run, its extra installed, a retrieval task to fuse."""
    if variant.hybrid is None:
        return
    if variant.hybrid not in HYBRIDS:
        raise ValueError(f"--hybrid: {variant.hybrid!r} unknown; use {', '.join(HYBRIDS)}.")
    if not any(t.type in RANKED_TYPES for t in plan.tasks):
        raise ValueError(
            "--hybrid: fuses rankings of retrieval tasks, and the run has none; add one (e.g. "
            "-t PipChemWikiRetrieval) or drop --hybrid."
        )
    require_extras([LEXICAL_EXTRA])


def prepare(
    model: str | Encoder,
    benchmark: str | Benchmark | None,
    tasks: Sequence[Task] | None,
    variant: ModelVariant,
    options: RunOptions,
) -> Prepared:
    """Everything checked before a model or a dataset is touched, each mistake said in one
    line: the batch size and device, the plan, every missing extra at once (the spec parsed
    once: the extras check and the load read the same record), the user's copies and files,
    the Hub's reach (said once, before the model loads), beta, and the variants asked for."""
    batch_size = check_batch_size(options.batch_size)
    device = check_device(options.device)
    plan = select(benchmark, tasks)
    spec = parse_model_spec(model) if isinstance(model, str) else model
    require_extras(requirements(spec, plan.tasks))
    _check_hybrid(variant, plan)
    paths = data_paths_for(plan, options.data_paths)
    hub_out_of_reach(plan)
    beta = check_beta(options.beta) if options.beta is not None else None
    sizes = check_dims(variant.dims) if variant.dims is not None else ()
    kinds = check_precisions(variant.precisions) if variant.precisions is not None else ()
    checked = replace(options, batch_size=batch_size, device=device, data_paths=paths, beta=beta)
    requested = variant.backend if isinstance(model, str) else None
    return Prepared(plan, spec, requested, variant, checked, sizes, kinds)


def execute(prepared: Prepared, started: float) -> RunReport:
    """The stages in order: load the model, plan and load what is pending, encode, score and
    write. Under torchrun/accelerate every rank loads the data and encodes its share into the
    cache; after the one barrier only the main process scores (from the cache) and writes."""
    output_dir = prepared.options.output_dir
    existed = {p for p in (output_dir, *output_dir.parents) if p.exists()}
    state = distributed_state()  # before the model: each rank on its own GPU
    prepared = _on_rank(prepared, state)
    opened = open_model(prepared)
    report = RunReport(results_dir=opened.out_dir)
    main = state is None or bool(state.is_main_process)
    with no_empty_folder_left(opened.out_dir, existed):
        cache = _open_cache(prepared, opened, state)
        if main:
            meta = (opened.weights, opened.out_dir, prepared.variant.precision, opened.probe)
            write_meta(opened.encoder, *meta)
        folders = variant_reports(
            opened.encoder,
            prepared.variant,
            opened.out_dir,
            report,
            prepared.dims,
            prepared.precisions,
        )
        identities: dict[str, str] = {}
        loaded = _load_pending(prepared, report, identities, state)
    options = prepared.options
    verify = opened.guard.compare if opened.guard is not None else None
    engine = EmbeddingEngine(
        opened.encoder,
        cache,
        batch_size=options.batch_size,
        progress=options.progress,
        verify=verify,
        ranks_checked=True,
    )
    try:
        prefetch(engine, opened.encoder, prepared.plan, loaded)
        if opened.guard is not None:  # its vectors checked: the anchor and drift are kept
            opened.guard.settle()
        if main:
            _score(prepared, opened, engine, report, loaded, identities, folders)
    finally:
        report.encoding, report.seconds = _encoding(engine), time.perf_counter() - started
        _close(engine, cache)  # the block in flight committed (after Ctrl-C too)
        if main:  # also after Ctrl-C or an error: what was done is recorded
            write_records(prepared, opened, report, folders)
        else:  # torchrun's other ranks write no results: nor the folders for them
            remove_made(opened.out_dir, existed, meta=False)
    return report


def _close(engine: EmbeddingEngine, cache: EmbeddingCache | None) -> None:
    try:
        engine.close()
    finally:
        if cache is not None:
            cache.close()


def _open_cache(prepared: Prepared, opened: Opened, state: Any) -> EmbeddingCache | None:
    """The model's cache, opened first: a damaged cache stops the run before any work; under
    torchrun, one shared cache and one command on every rank, said before any data loads."""
    cache = open_cache(
        prepared.options.cache_folder, opened.encoder, prepared.variant, opened.weights
    )
    if state is not None:
        folder, read_only = (cache.path, cache.read_only) if cache is not None else (None, False)
        check_shared(state, folder, read_only, _agreement(prepared))
    return cache


def _encoding(engine: EmbeddingEngine) -> dict[str, float]:
    """The run's encoding record; under torchrun every rank's texts at the slowest rank's time,
    and how many processes encoded (a run stopped before the ranks met: the other ranks' texts
    the cache holds now)."""
    engine.count_others()
    out = engine.stats.to_dict()
    if engine.ranks > 1:
        out["processes"] = engine.ranks
    return out


def _on_rank(prepared: Prepared, state: Any) -> Prepared:
    """Under torchrun: on GPUs, a run that names no GPU index takes its local rank's
    (``cuda:LOCAL_RANK``, as accelerate places it: four ranks on one GPU would share it); the
    other ranks than the main process say nothing and draw no bars (the main process says the
    run: every line was printed once a rank). Their errors they still say (``cli._say``)."""
    if state is None:
        return prepared
    options = prepared.options
    device = options.device
    if device in (None, "cuda") and state.device.type == "cuda":
        options = replace(options, device=str(state.device))
    if not state.is_main_process:
        options = replace(options, log=_silent, progress=False)
    return replace(prepared, options=options)


def _silent(_: str) -> None:
    pass


def _agreement(prepared: Prepared) -> str:
    """What every rank of a torchrun must run alike, as a digest: the model, the tasks and
    benchmark, the variant, the batch size (a GPU's vectors depend on it), ``--overwrite``."""
    model = prepared.model
    named = repr(model) if isinstance(model, ModelSpec) else type(model).__qualname__
    plan = prepared.plan
    options = prepared.options
    parts = [
        named,
        sorted(t.name for t in plan.tasks),  # -t A -t B and -t B -t A: one command
        plan.benchmark.name if plan.benchmark is not None else None,
        repr(prepared.variant),
        options.batch_size,
        options.overwrite,
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def _load_pending(
    prepared: Prepared, report: RunReport, identities: dict[str, str], state: Any
) -> dict[str, TaskData]:
    """The data of every task the model's folder or a variant's needs scored; ``identities``
    receives each loaded task's data identity. A task whose result turns out current once its
    data is fingerprinted is dropped (``settle_everywhere``). Under torchrun the other ranks
    follow the main process's plan, whatever their own results folder holds (it need only be
    the main process's: a node's stale or empty one changes nothing)."""
    plan, options, out_dir = prepared.plan, prepared.options, report.results_dir
    overwrite, log = options.overwrite, options.log
    todo = pending_everywhere(plan, out_dir, overwrite, report, log)
    if state is not None:
        names = set(main_list(state, [t.name for t in todo]))
        todo = [t for t in plan.tasks if t.name in names]
    paths = {name: Path(path) for name, path in (options.data_paths or {}).items()}
    loaded = load(plan, todo, report, log, paths, progress=options.progress, identities=identities)
    if state is None or state.is_main_process:
        settle_everywhere(plan, loaded, identities, out_dir, overwrite, report, log)
    if state is not None:
        kept = set(main_list(state, sorted(loaded)))
        loaded = {name: data for name, data in loaded.items() if name in kept}
        # one data too: a node's other task file or scale is refused before encoding
        check_data(state, {name: identities.get(name, "") for name in loaded})
    return loaded


def _score(
    prepared: Prepared,
    opened: Opened,
    engine: EmbeddingEngine,
    report: RunReport,
    loaded: dict[str, TaskData],
    identities: Mapping[str, str],
    folders: Folders,
) -> None:
    """Score the loaded tasks for the model and each variant of its vectors, writing each."""
    options, precision = prepared.options, prepared.variant.precision
    context = ScoreContext(opened.encoder, options.batch_size, options.progress, options.beta)
    metas: dict[Compression, dict[str, Any]] = {
        v: recorded_meta(opened.encoder.meta, opened.weights, f, precision, v)
        for v, (f, _) in folders.items()
    }
    scoring = Scoring(prepared.plan, engine, context, options.log)
    evaluate_all(scoring, loaded, report, identities, folders, metas)
