"""The load stage: each pending task's data (``load``), and the model (``open_model``: the
folders checked first, then the encoder loaded, then what tells its weights apart and the
results folder they own)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from chemteb_eval._files import public_url
from chemteb_eval.data import load_task
from chemteb_eval.data.fingerprint import data_fingerprint
from chemteb_eval.data.pipchem import build_needed as pipchem_build_needed
from chemteb_eval.data.types import TaskData
from chemteb_eval.engine import EmbeddingCache
from chemteb_eval.errors import ChemtebError
from chemteb_eval.models.backends import cache_variant, framework_of
from chemteb_eval.models.base import Encoder, ModelMeta
from chemteb_eval.models.fingerprint import model_fingerprint
from chemteb_eval.models.spec import ModelSpec
from chemteb_eval.results.io import experiment_name
from chemteb_eval.tasks import Task

from .folders import results_folder, writable
from .inspect import quality_warning
from .values import Log, Opened, Plan, Prepared, RunReport, cache_folder, tell

__all__ = ["api_identity", "load", "local_weights", "open_model", "recorded_probes"]


def load(
    plan: Plan,
    todo: list[Task],
    report: RunReport,
    log: Log,
    data_paths: Mapping[str, Path] | None = None,
    *,
    progress: bool = False,
    identities: dict[str, str] | None = None,
) -> dict[str, TaskData]:
    """Each task's data for the plan's splits; a task whose data fails is recorded, not fatal
    (one ``[failed]`` line, the recorded error). With ``progress``, a bar over the tasks.

    ``identities`` receives each loaded task's data identity, what its result file names as
    ``dataset_revision``: the Hub commit, the fingerprint of the very bytes a task file's
    files were read from (read once: ``data.custom``), else the content fingerprint of the
    data as loaded."""
    from tqdm.auto import tqdm

    if any(t.builder == "pipchem" for t in todo) and pipchem_build_needed():
        log(
            "Building the PipChem suite from its pip-installed sources (once, 10-20 s); "
            "later runs reuse it."
        )
    loaded: dict[str, TaskData] = {}
    for task in tqdm(todo, desc="loading data", unit="task", disable=not progress or not todo):
        try:
            # what a user's files hold that is not scored is said (their tasks only)
            scored: list[str] = []  # a task file's data: the fingerprint of the bytes read
            said: dict[str, Any] = {}
            if task.builder == "custom":
                said = {"log": lambda line: tell(log, line), "scored": scored.append}
            data = load_task(
                task, splits=plan.splits(task), data_path=(data_paths or {}).get(task.name), **said
            )
            loaded[task.name] = data
            if task.builder == "custom":  # a user's data: its faults said, the score computed
                warning = quality_warning(task.name, data)
                if warning is not None:
                    tell(log, warning)
            if identities is not None:
                identities[task.name] = (
                    scored[-1] if scored else task.revision or data_fingerprint(data)
                )
        except Exception as exc:  # one task's failure is recorded; the run goes on
            report.statuses[task.name] = "failed"
            report.errors[task.name] = f"{type(exc).__name__}: {exc}"
            # our errors are sentences that say what to do; others keep their type's name
            why = str(exc) if isinstance(exc, ChemtebError) else report.errors[task.name]
            tell(log, f"[failed] {task.name}: could not load data: {why}")
    return loaded


def open_model(prepared: Prepared) -> Opened:
    """Check the folders (before minutes of model loading), then load the model. A model that
    does not load leaves no empty ``--output-dir`` behind (the check created it)."""
    options, variant = prepared.options, prepared.variant
    output_dir, cache, log = options.output_dir, options.cache_folder, options.log
    created = not output_dir.exists()
    writable(output_dir, "--output-dir:", "pass a folder you can write to")
    if cache is not None:
        fix = "run with --no-cache, or set CHEMTEB_CACHE to a folder you can write to"
        writable(cache, "embedding cache folder", fix, read_only_ok=True)
    model = prepared.model
    if isinstance(model, ModelSpec):
        from chemteb_eval.models import load_encoder

        try:
            with _quiet_loading(not options.progress):
                model = load_encoder(
                    model, device=options.device, log=log, **variant.load_options()
                )
        except BaseException:
            if created and output_dir.is_dir() and not any(output_dir.iterdir()):
                output_dir.rmdir()
            raise
    # an encoder passed in: a dtype its backend never computes in would label float32 vectors
    variant.check(model.meta.framework)
    weights, probe = local_weights(model.meta), None
    if weights is None:
        weights, probe = api_identity(model, cache, log, output_dir)
    kwargs = variant.experiment_kwargs(model.meta.framework)
    # another backend or dtype of the model: MTEB's experiments folder
    experiment = experiment_name(kwargs) if kwargs else None
    out_dir = results_folder(output_dir, model.meta, weights, log, experiment)
    writable(out_dir, "--output-dir:", "pass a folder you can write to")
    return Opened(model, out_dir, weights, probe)


@contextmanager
def _quiet_loading(quiet: bool) -> Iterator[None]:
    """``--quiet``: transformers' and huggingface_hub's own bars too ("Loading weights"), for
    the load only; both are restored after."""
    if not quiet:
        yield
        return
    from huggingface_hub.utils import (  # type: ignore[attr-defined]
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    hub_was_off = are_progress_bars_disabled()
    disable_progress_bars()
    bars: Any = None
    try:
        from transformers.utils import logging as bars
    except ImportError:  # an API model on the core install
        pass
    was_on = bars is not None and bars.is_progress_bar_enabled()
    if was_on:
        bars.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            bars.enable_progress_bar()
        if not hub_was_off:
            enable_progress_bars()


def local_weights(meta: ModelMeta) -> str | None:
    """The fingerprint of a model loaded from local files with no revision (a folder, a
    vectors file, the bundled copy): what tells two folders named ``final`` apart."""
    if meta.revision is not None or not Path(meta.source).exists():
        return None
    return model_fingerprint(meta.source)


def api_identity(
    encoder: Encoder, cache: Path | None, log: Log, results: Path | None = None
) -> tuple[str | None, dict[str, Any] | None]:
    """For a model behind an OpenAI-compatible API, whose name and URL prove nothing: the label
    of the vectors it returns for fixed probe texts (``models.identity``), which keys its cache
    and its results folder, so that another model served under the same name never shares
    them, and the probe as ``model_meta.json`` keeps it. ``(None, None)`` for every other
    backend.

    The probe is matched against the registry beside the cache, then against the probes the
    results folders under ``results`` keep (the registry lost: another machine, a new cache).
    The first time a name and URL get a label, an embedding cache written before labels were
    (keyed by the URL) becomes this label's: it was the model that answered then, as the old
    key assumed; nothing is lost."""
    meta = encoder.meta
    if meta.framework != framework_of("openai"):
        return None, None
    from chemteb_eval.models.identity import ProbeRegistry, measure_probe

    registry = ProbeRegistry.beside(cache if cache is not None else cache_folder())
    before = registry.labels_of(meta.name, meta.source)
    probe = measure_probe(encoder)
    variant = cache_variant(meta.framework, "float32")

    def in_use(label: str) -> bool:  # a cache of this label whose probe is not on record
        if cache is None:
            return False
        return EmbeddingCache.path_for(cache, meta.name, None, meta.source, label, variant)[
            0
        ].exists()

    label, seen = registry.identify(
        meta.name, meta.source, probe, elsewhere=recorded_probes(results), in_use=in_use
    )
    if not seen and before:
        log(
            f"{meta.name} at {public_url(meta.source)} returns other vectors than the model that answered "
            f"under this name before ({', '.join(before)}): another model; its embeddings and "
            f"results are kept apart, as {label}."
        )
    if not before and cache is not None:
        old, ident = EmbeddingCache.path_for(cache, meta.name, None, meta.source, None, variant)
        new, _ = EmbeddingCache.path_for(cache, meta.name, None, meta.source, label, variant)
        EmbeddingCache.adopt(old, new, ident)  # nothing to move, or new exists: left as it is
    return label, probe.to_record()


def recorded_probes(results: Path | None) -> list[tuple[str, Any]]:
    """The (label, probe) of every API model whose results folder under ``results`` keeps its
    probe (``model_meta.json``'s ``weights`` and ``probe``); unreadable ones are left out."""
    from chemteb_eval.models.identity import Probe
    from chemteb_eval.results.model_folder import model_metas

    if results is None or not results.is_dir():
        return []
    out = []
    for meta in model_metas(results):
        label = meta.get("weights")
        probe = Probe.from_record(meta.get("probe"))
        if isinstance(label, str) and label.startswith("probe:") and probe is not None:
            out.append((label, probe))
    return out
